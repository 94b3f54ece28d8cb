/**
 * Memories through the official SDK against the real server: shapes and views, content and path
 * limits at their edges, path conflicts, preconditions, no-op updates, renames, depth and
 * path_prefix listing, pagination, and the archived-store rules for memories.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import type { RunningServer } from '../helpers/server.js';
import { onPostgres } from '../helpers/engine.js';
import { inProcessApp } from '../helpers/in-process.js';
import { expectApiError, useServer } from '../helpers/sdk.js';
import { collect, expectMemory, freshStore, sha256, walkPages, type ListItem, type Memory, type Store } from './shapes.js';

let server: RunningServer;
let client: Anthropic;
let store: Store;

useServer((s, c) => {
  server = s;
  client = c;
});

const memories = () => client.beta.memoryStores.memories;
const versions = () => client.beta.memoryStores.memoryVersions;

async function newStore(): Promise<Store> {
  store = await freshStore(client, 'memories');
  return store;
}
const create = (path: string, content = `content of ${path}`) => memories().create(store.id, { path, content });
const versionCount = async (memoryId: string) =>
  (await collect(versions().list(store.id, { memory_id: memoryId, limit: 100 }))).length;

describe('create, retrieve, delete', () => {
  it('creates a memory and returns it with view=basic by default (content null)', async () => {
    await newStore();
    const m = await create('/notes/today.md', 'hello\n');
    expectMemory(m, { path: '/notes/today.md', content: 'hello\n', storeId: store.id, view: 'basic' });
    expect(m.updated_at).toBe(m.created_at);
  });

  it('returns content on create with view=full', async () => {
    await newStore();
    const m = await memories().create(store.id, { path: '/full.md', content: 'body', view: 'full' });
    expectMemory(m, { path: '/full.md', content: 'body', storeId: store.id, view: 'full' });
  });

  it('retrieves with view=full by default and view=basic on request', async () => {
    await newStore();
    const m = await create('/r.md', 'ré sumé ✓');
    const full = await memories().retrieve(m.id, { memory_store_id: store.id });
    expectMemory(full, { path: '/r.md', content: 'ré sumé ✓', storeId: store.id, view: 'full' });
    expect({ ...full, content: null }).toEqual(m);
    const basic = await memories().retrieve(m.id, { memory_store_id: store.id, view: 'basic' });
    expect(basic).toEqual(m);
  });

  it('hashes the raw UTF-8 bytes without normalisation', async () => {
    await newStore();
    const decomposed = 'e\u0301'; // not NFC, and content is kept as given
    const m = await memories().create(store.id, { path: '/nfd.txt', content: decomposed, view: 'full' });
    expect(m.content).toBe(decomposed);
    expect(m.content_sha256).toBe(sha256(decomposed));
    expect(m.content_size_bytes).toBe(3);
  });

  it('keeps content byte-exact: NUL, CRLF, a leading BOM, astral characters', async () => {
    await newStore();
    // PostgreSQL text cannot hold U+0000: there such content is refused (README, what differs).
    const nul = onPostgres() ? '' : 'nul:\u0000:';
    if (onPostgres()) await expectApiError(memories().create(store.id, { path: '/nul.txt', content: 'a\u0000b' }), 400, 'invalid_request_error');
    const content = `\uFEFFline\r\n${nul}end \u{1F600}\n`;
    const m = await memories().create(store.id, { path: '/exact.bin.txt', content, view: 'full' });
    expectMemory(m, { path: '/exact.bin.txt', content, storeId: store.id, view: 'full' });
    expect((await memories().retrieve(m.id, { memory_store_id: store.id })).content).toBe(content);
    expect((await versions().retrieve(m.memory_version_id, { memory_store_id: store.id })).content).toBe(content);
  });

  it('creates an empty memory from "" and from content null', async () => {
    await newStore();
    const empty = await memories().create(store.id, { path: '/empty.md', content: '', view: 'full' });
    expectMemory(empty, { path: '/empty.md', content: '', storeId: store.id, view: 'full' });
    const fromNull = await memories().create(store.id, { path: '/null.md', content: null, view: 'full' });
    expectMemory(fromNull, { path: '/null.md', content: '', storeId: store.id, view: 'full' });
  });

  it('deletes a memory and returns memory_deleted; afterwards it is 404', async () => {
    await newStore();
    const m = await create('/bye.md');
    expect(await memories().delete(m.id, { memory_store_id: store.id })).toEqual({ id: m.id, type: 'memory_deleted' });
    await expectApiError(memories().retrieve(m.id, { memory_store_id: store.id }), 404, 'not_found_error');
    await expectApiError(memories().delete(m.id, { memory_store_id: store.id }), 404, 'not_found_error');
    await expectApiError(memories().update(m.id, { memory_store_id: store.id, content: 'x' }), 404, 'not_found_error');
    // The path is free again.
    const again = await create('/bye.md');
    expect(again.id).not.toBe(m.id);
  });

  it('does not find a memory through another store', async () => {
    const a = await newStore();
    const m = await create('/mine.md');
    const b = await newStore();
    await expectApiError(memories().retrieve(m.id, { memory_store_id: b.id }), 404, 'not_found_error');
    await expectApiError(memories().delete(m.id, { memory_store_id: b.id }), 404, 'not_found_error');
    expect((await memories().retrieve(m.id, { memory_store_id: a.id })).id).toBe(m.id);
  });
});

describe('content and path limits', () => {
  it('accepts content of exactly 102,400 bytes and refuses 102,401', async () => {
    await newStore();
    const m = await memories().create(store.id, { path: '/max.txt', content: 'a'.repeat(102_400) });
    expect(m.content_size_bytes).toBe(102_400);
    await expectApiError(create('/over.txt', 'a'.repeat(102_401)), 400, 'invalid_request_error');
    await expectApiError(memories().update(m.id, { memory_store_id: store.id, content: 'b'.repeat(102_401) }), 400, 'invalid_request_error');
  });

  it('measures content in UTF-8 bytes, not characters', async () => {
    await newStore();
    const fits = '€'.repeat(34_133) + 'a'; // 102,399 + 1 bytes
    const m = await create('/euro-fits.txt', fits);
    expect(m.content_size_bytes).toBe(102_400);
    await expectApiError(create('/euro-over.txt', '€'.repeat(34_134)), 400, 'invalid_request_error');
  });

  const seg255 = 'p'.repeat(255);
  it.each([
    ['a path of exactly 1,024 bytes', `/${seg255}/${seg255}/${seg255}/${seg255}`],
    ['a path of 1,024 bytes in multi-byte characters', '/' + 'é'.repeat(511) + 'x'],
    ['20 segments', '/s'.repeat(20)],
    ['a one-character path', '/a'],
    ['dots inside segments', '/.hidden/a..b/c.'],
    ['spaces and unicode', '/My Notes/日本語 ✓.md'],
  ])('accepts %s', async (_, path) => {
    await newStore();
    const m = await create(path);
    expect(m.path).toBe(path);
    expect((await memories().retrieve(m.id, { memory_store_id: store.id })).path).toBe(path);
  });

  it.each([
    ['a path of 1,025 bytes', `/${seg255}/${seg255}/${seg255}/${seg255}x`],
    ['a path of 1,025 bytes in multi-byte characters', '/' + 'é'.repeat(512)],
    ['21 segments', '/s'.repeat(21)],
    ['a path without a leading slash', 'notes/a.md'],
    ['the root alone', '/'],
    ['an empty path', ''],
    ['a trailing slash', '/notes/'],
    ['an empty segment', '/a//b'],
    ['a "." segment', '/a/./b'],
    ['a ".." segment', '/a/../b'],
    ['a control character', '/a\u0001b'],
    ['a NUL character', '/a\u0000b'],
    ['a format character', '/a\u200bb'],
    ['U+2028', '/a\u2028b'],
    ['U+2029', '/a\u2029b'],
    ['a path that is not NFC', '/e\u0301.md'],
  ])('refuses %s with 400 invalid_request_error', async (_, path) => {
    await newStore();
    await expectApiError(create(path), 400, 'invalid_request_error');
    const m = await create('/rename-me.md');
    await expectApiError(memories().update(m.id, { memory_store_id: store.id, path }), 400, 'invalid_request_error');
  });

  it('keeps paths case-sensitive', async () => {
    await newStore();
    const lower = await create('/notes/a.md');
    const upper = await create('/Notes/a.md');
    expect(upper.id).not.toBe(lower.id);
  });
});

describe('path conflicts', () => {
  it('refuses the same path with memory_path_conflict_error naming the holder', async () => {
    await newStore();
    const m = await create('/same.md');
    const err = await expectApiError(create('/same.md'), 409, 'memory_path_conflict_error');
    expect(err).toMatchObject({ conflicting_path: '/same.md', conflicting_memory_id: m.id });
  });

  it('refuses a path below an existing memory (ancestor holds it)', async () => {
    await newStore();
    const m = await create('/notes');
    const err = await expectApiError(create('/notes/todo.md'), 409, 'memory_path_conflict_error');
    expect(err).toMatchObject({ conflicting_path: '/notes', conflicting_memory_id: m.id });
    const deep = await expectApiError(create('/notes/a/b/c.md'), 409, 'memory_path_conflict_error');
    expect(deep).toMatchObject({ conflicting_path: '/notes', conflicting_memory_id: m.id });
  });

  it('refuses a path above an existing memory (descendant holds it)', async () => {
    await newStore();
    const m = await create('/a/b/c.md');
    for (const path of ['/a', '/a/b']) {
      const err = await expectApiError(create(path), 409, 'memory_path_conflict_error');
      expect(err).toMatchObject({ conflicting_path: '/a/b/c.md', conflicting_memory_id: m.id });
    }
  });

  it('does not treat sibling names sharing a prefix as overlapping', async () => {
    await newStore();
    await create('/notes/a.md');
    await create('/notes-archive/b.md');
    await create('/notes.md');
    await create('/notes0');
    await create('/note');
    expect((await memories().list(store.id)).data).toHaveLength(5);
  });

  it('refuses renames onto an occupied, ancestor or descendant path and changes nothing', async () => {
    await newStore();
    const a = await create('/a.md', 'A');
    const dir = await create('/dir/x.md', 'X');
    const err1 = await expectApiError(memories().update(a.id, { memory_store_id: store.id, path: '/dir/x.md' }), 409, 'memory_path_conflict_error');
    expect(err1).toMatchObject({ conflicting_path: '/dir/x.md', conflicting_memory_id: dir.id });
    const err2 = await expectApiError(memories().update(a.id, { memory_store_id: store.id, path: '/dir' }), 409, 'memory_path_conflict_error');
    expect(err2).toMatchObject({ conflicting_path: '/dir/x.md', conflicting_memory_id: dir.id });
    const err3 = await expectApiError(memories().update(a.id, { memory_store_id: store.id, path: '/dir/x.md/y' }), 409, 'memory_path_conflict_error');
    expect(err3).toMatchObject({ conflicting_path: '/dir/x.md', conflicting_memory_id: dir.id });
    expect(await memories().retrieve(a.id, { memory_store_id: store.id })).toMatchObject({ path: '/a.md', content: 'A' });
    expect(await versionCount(a.id)).toBe(1);
  });

  it('lets a memory move below its own old path', async () => {
    await newStore();
    const m = await create('/topic', 'x');
    const moved = await memories().update(m.id, { memory_store_id: store.id, path: '/topic/index.md' });
    expect(moved).toMatchObject({ id: m.id, path: '/topic/index.md' });
  });
});

describe('update', () => {
  it('updates content, returns view=basic by default, and adds a modified version', async () => {
    await newStore();
    const m = await create('/u.md', 'one');
    const u = await memories().update(m.id, { memory_store_id: store.id, content: 'two' });
    expectMemory(u, { path: '/u.md', content: 'two', storeId: store.id, view: 'basic' });
    expect(u.id).toBe(m.id);
    expect(u.memory_version_id).not.toBe(m.memory_version_id);
    expect(u.created_at).toBe(m.created_at);
    expect(u.updated_at >= m.updated_at).toBe(true);
    const full = await memories().update(m.id, { memory_store_id: store.id, content: 'three', view: 'full' });
    expect(full.content).toBe('three');
    const v = await versions().retrieve(u.memory_version_id, { memory_store_id: store.id });
    expect(v).toMatchObject({ operation: 'modified', memory_id: m.id, content: 'two', path: '/u.md' });
  });

  it('renames while keeping the id, and records the new path in a modified version', async () => {
    await newStore();
    const m = await create('/old/name.md', 'same');
    const r = await memories().update(m.id, { memory_store_id: store.id, path: '/new/name.md' });
    expectMemory(r, { path: '/new/name.md', content: 'same', storeId: store.id, view: 'basic' });
    expect(r.id).toBe(m.id);
    const v = await versions().retrieve(r.memory_version_id, { memory_store_id: store.id });
    expect(v).toMatchObject({ operation: 'modified', path: '/new/name.md', content: 'same', memory_id: m.id });
    expect((await memories().list(store.id)).data.map((x) => x.path)).toEqual(['/new/name.md']);
  });

  it('renames and changes content in one call', async () => {
    await newStore();
    const m = await create('/both.md', 'old');
    const r = await memories().update(m.id, { memory_store_id: store.id, path: '/both2.md', content: 'new', view: 'full' });
    expect(r).toMatchObject({ id: m.id, path: '/both2.md', content: 'new', content_sha256: sha256('new') });
    expect(await versionCount(m.id)).toBe(2);
  });

  // In-process, with a clock the test moves: time passes between the two writes without waiting.
  it('adds no version for an update that changes nothing', async () => {
    const { client, clock } = await inProcessApp();
    const { memories, memoryVersions } = client.beta.memoryStores;
    const store = await freshStore(client, 'memories');
    const m = await memories.create(store.id, { path: '/noop.md', content: 'same' });
    clock.advance(5);
    const u = await memories.update(m.id, { memory_store_id: store.id, content: 'same', path: '/noop.md' });
    expect(u).toEqual(m);
    expect((await collect(memoryVersions.list(store.id, { memory_id: m.id, limit: 100 }))).length).toBe(1);
  });

  it('refuses an update with neither content nor path', async () => {
    await newStore();
    const m = await create('/empty-update.md');
    await expectApiError(memories().update(m.id, { memory_store_id: store.id }), 400, 'invalid_request_error');
    await expectApiError(memories().update(m.id, { memory_store_id: store.id, content: null, path: null }), 400, 'invalid_request_error');
  });
});

describe('preconditions', () => {
  it('applies an update whose content_sha256 precondition matches', async () => {
    await newStore();
    const m = await create('/p.md', 'v1');
    const u = await memories().update(m.id, {
      memory_store_id: store.id,
      content: 'v2',
      precondition: { type: 'content_sha256', content_sha256: sha256('v1') },
    });
    expect(u.content_sha256).toBe(sha256('v2'));
  });

  it('refuses a stale precondition with 409 memory_precondition_failed_error and changes nothing', async () => {
    await newStore();
    const m = await create('/p.md', 'v1');
    await memories().update(m.id, { memory_store_id: store.id, content: 'v2' });
    await expectApiError(
      memories().update(m.id, { memory_store_id: store.id, content: 'v3', precondition: { type: 'content_sha256', content_sha256: sha256('v1') } }),
      409,
      'memory_precondition_failed_error',
    );
    // The precondition refers to the current content even for a rename.
    await expectApiError(
      memories().update(m.id, { memory_store_id: store.id, path: '/q.md', precondition: { type: 'content_sha256', content_sha256: sha256('v1') } }),
      409,
      'memory_precondition_failed_error',
    );
    expect(await memories().retrieve(m.id, { memory_store_id: store.id })).toMatchObject({ path: '/p.md', content: 'v2' });
    expect(await versionCount(m.id)).toBe(2);
  });

  it('succeeds without a new version when the memory already holds the requested content and path', async () => {
    await newStore();
    const m = await create('/retry.md', 'v1');
    const first = await memories().update(m.id, {
      memory_store_id: store.id,
      content: 'v2',
      precondition: { type: 'content_sha256', content_sha256: sha256('v1') },
    });
    // The retry of the same call: the precondition no longer matches, but the result is already there.
    const retry = await memories().update(m.id, {
      memory_store_id: store.id,
      content: 'v2',
      precondition: { type: 'content_sha256', content_sha256: sha256('v1') },
    });
    expect(retry).toEqual(first);
    expect(await versionCount(m.id)).toBe(2);
  });

  it('refuses a malformed precondition hash with 400', async () => {
    await newStore();
    const m = await create('/bad-sha.md', 'x');
    for (const content_sha256 of ['abc', sha256('x').toUpperCase(), undefined]) {
      await expectApiError(
        memories().update(m.id, { memory_store_id: store.id, content: 'y', precondition: { type: 'content_sha256', ...(content_sha256 ? { content_sha256 } : {}) } }),
        400,
        'invalid_request_error',
      );
    }
  });

  it('deletes only when expected_content_sha256 matches', async () => {
    await newStore();
    const m = await create('/d.md', 'keep me');
    await expectApiError(
      memories().delete(m.id, { memory_store_id: store.id, expected_content_sha256: sha256('something else') }),
      409,
      'memory_precondition_failed_error',
    );
    expect((await memories().retrieve(m.id, { memory_store_id: store.id })).content).toBe('keep me');
    await expectApiError(memories().delete(m.id, { memory_store_id: store.id, expected_content_sha256: 'nothex' }), 400, 'invalid_request_error');
    const res = await memories().delete(m.id, { memory_store_id: store.id, expected_content_sha256: sha256('keep me') });
    expect(res).toEqual({ id: m.id, type: 'memory_deleted' });
  });
});

describe('list', () => {
  it('lists the whole subtree in path order with depth 0, basic by default and full on request', async () => {
    await newStore();
    const paths = ['/b.md', '/a/z.md', '/a/b/c.md', '/c/d/e/f.md'];
    for (const p of paths) await create(p);
    const basic = (await memories().list(store.id)).data as Memory[];
    expect(basic.map((m) => m.path)).toEqual([...paths].sort());
    for (const m of basic) expectMemory(m, { path: m.path, content: `content of ${m.path}`, storeId: store.id, view: 'basic' });
    const full = (await memories().list(store.id, { view: 'full', depth: 0 })).data as Memory[];
    for (const m of full) expectMemory(m, { path: m.path, content: `content of ${m.path}`, storeId: store.id, view: 'full' });
  });

  it('rolls deeper paths into memory_prefix items with depth=1', async () => {
    await newStore();
    for (const p of ['/a.md', '/dir/x.md', '/dir/sub/y.md', '/dir/sub/deeper/z.md', '/dir2/z.md', '/zz.md']) await create(p);
    const root = (await memories().list(store.id, { depth: 1 })).data;
    expect(root.map((i) => [i.type, i.path])).toEqual([
      ['memory', '/a.md'],
      ['memory_prefix', '/dir/'],
      ['memory_prefix', '/dir2/'],
      ['memory', '/zz.md'],
    ]);
    expect(root[1]).toEqual({ type: 'memory_prefix', path: '/dir/' });
    const dir = (await memories().list(store.id, { depth: 1, path_prefix: '/dir/' })).data;
    expect(dir.map((i) => [i.type, i.path])).toEqual([
      ['memory_prefix', '/dir/sub/'],
      ['memory', '/dir/x.md'],
    ]);
    const full = (await memories().list(store.id, { depth: 1, path_prefix: '/dir/', view: 'full' })).data;
    expect(full[1]).toMatchObject({ type: 'memory', content: 'content of /dir/x.md' });
  });

  it('orders and rolls up names that sort around "/" correctly, one item per page', async () => {
    await newStore();
    // '-' (0x2D) and '.' (0x2E) sort before '/' (0x2F), '0' (0x30) right after it.
    for (const p of ['/a-b.md', '/a.md', '/a/x.md', '/a/y/z.md', '/a0.md', '/a-/q.md', '/b/c.md']) await create(p);
    const want = ['/a-/', '/a-b.md', '/a.md', '/a/', '/a0.md', '/b/'];
    const one = await walkPages((page) => memories().list(store.id, { depth: 1, limit: 1, ...(page ? { page } : {}) }));
    expect(one.flat().map((i) => i.path)).toEqual(want);
    expect((await collect(memories().list(store.id, { depth: 1, limit: 1, path_prefix: '/a/' }))).map((i) => i.path)).toEqual(['/a/x.md', '/a/y/']);
    const deep = await collect(memories().list(store.id, { limit: 1, path_prefix: '/a/' }));
    expect(deep.map((i) => i.path)).toEqual(['/a/x.md', '/a/y/z.md']);
  });

  it('matches path_prefix on whole segments', async () => {
    await newStore();
    for (const p of ['/notes/a.md', '/notes/deep/b.md', '/notes-archive/x.md', '/notes.md', '/notesy/c.md']) await create(p);
    const under = (await memories().list(store.id, { path_prefix: '/notes/' })).data.map((i) => i.path);
    expect(under).toEqual(['/notes/a.md', '/notes/deep/b.md']);
    expect((await memories().list(store.id, { path_prefix: '/nothing/' })).data).toEqual([]);
    expect((await memories().list(store.id, { path_prefix: '/' })).data).toHaveLength(5);
  });

  it('round-trips URL-special characters in path_prefix through the query string', async () => {
    await newStore();
    const dirs = ['/a+b/', '/a b/', '/q&x=1/', '/100%/', '/hash#/', '/what?/', '/日本/'];
    for (const d of dirs) await create(`${d}f.md`);
    for (const d of dirs) {
      expect((await memories().list(store.id, { path_prefix: d })).data.map((i) => i.path), d).toEqual([`${d}f.md`]);
    }
  });

  it('refuses a path_prefix without a trailing slash, or an invalid one, with 400', async () => {
    await newStore();
    for (const path_prefix of ['/notes', 'notes/', '', '/a//', '/../']) {
      await expectApiError(memories().list(store.id, { path_prefix }), 400, 'invalid_request_error');
    }
  });

  it.each([2, -1, 10])('refuses depth=%s with 400', async (depth) => {
    await newStore();
    await expectApiError(memories().list(store.id, { depth }), 400, 'invalid_request_error');
  });

  it('refuses limits outside 1–100 with 400 in either view', async () => {
    await newStore();
    await create('/one.md');
    expect((await memories().list(store.id, { limit: 100 })).data).toHaveLength(1);
    for (const [limit, view] of [[0, 'basic'], [101, 'basic'], [101, 'full'], [0, 'full']] as const) {
      await expectApiError(memories().list(store.id, { limit, view }), 400, 'invalid_request_error');
    }
  });

  it('caps a view=full page at 20 memories when a larger limit is asked for, and pages on', async () => {
    await newStore();
    for (let i = 0; i < 23; i++) await create(`/cap/${String(i).padStart(2, '0')}.md`);
    const first = await memories().list(store.id, { limit: 50, view: 'full' });
    expect(first.data).toHaveLength(20);
    expect(first.data.every((m) => m.type === 'memory' && typeof m.content === 'string')).toBe(true);
    const next = (first as unknown as { next_page: string | null }).next_page;
    expect(next).toBeTruthy();
    const rest = await memories().list(store.id, { limit: 50, view: 'full', page: next! });
    expect(rest.data).toHaveLength(3);
    expect((await memories().list(store.id, { limit: 50 })).data).toHaveLength(23);
  });

  it('pages through 25 memories with no duplicates or gaps (depth 0)', async () => {
    await newStore();
    const paths: string[] = [];
    for (let i = 0; i < 25; i++) paths.push(`/p/${String(i).padStart(2, '0')}/m.md`);
    for (const p of [...paths].reverse()) await create(p);
    const auto = await collect(memories().list(store.id, { limit: 4 }));
    expect(auto.map((i) => i.path)).toEqual(paths);
    const pages = await walkPages((page) => memories().list(store.id, { limit: 4, ...(page ? { page } : {}) }));
    expect(pages).toHaveLength(7);
    expect(pages.flat().map((i) => i.path)).toEqual(paths);
    const fullPages = await walkPages((page) => memories().list(store.id, { limit: 7, view: 'full', ...(page ? { page } : {}) }));
    expect(fullPages.flat().map((i) => (i as Memory).content)).toEqual(paths.map((p) => `content of ${p}`));
    const underPrefix = await collect(memories().list(store.id, { limit: 3, path_prefix: '/p/1' + '0/' }));
    expect(underPrefix.map((i) => i.path)).toEqual(['/p/10/m.md']);
  });

  it('pages through memories and prefixes with depth=1, counting prefixes toward the limit', async () => {
    await newStore();
    const expected: string[] = [];
    for (let i = 0; i < 8; i++) {
      await create(`/f${i}.md`);
      expected.push(`/f${i}.md`);
    }
    for (let d = 0; d < 6; d++) {
      for (let j = 0; j < 3; j++) await create(`/d${d}/sub${j}/leaf.md`);
      await create(`/d${d}/top.md`);
      expected.push(`/d${d}/`);
    }
    expected.sort();
    const auto: ListItem[] = await collect(memories().list(store.id, { depth: 1, limit: 3 }));
    expect(auto.map((i) => i.path)).toEqual(expected);
    const pages = await walkPages((page) => memories().list(store.id, { depth: 1, limit: 3, ...(page ? { page } : {}) }));
    expect(pages.map((p) => p.length)).toEqual([3, 3, 3, 3, 2]);
    expect(pages.flat()).toEqual(auto);

    const inside = await collect(memories().list(store.id, { depth: 1, limit: 2, path_prefix: '/d3/' }));
    expect(inside.map((i) => i.path)).toEqual(['/d3/sub0/', '/d3/sub1/', '/d3/sub2/', '/d3/top.md']);
  });

  it('sees a memory renamed out of and into a listed subtree', async () => {
    await newStore();
    const m = await create('/in/a.md');
    await create('/in/b.md');
    await memories().update(m.id, { memory_store_id: store.id, path: '/out/a.md' });
    expect((await memories().list(store.id, { path_prefix: '/in/' })).data.map((i) => i.path)).toEqual(['/in/b.md']);
    expect((await memories().list(store.id, { path_prefix: '/out/' })).data.map((i) => i.path)).toEqual(['/out/a.md']);
  });
});

describe('concurrency', () => {
  it('lets exactly one of many concurrent creates at the same path win', async () => {
    await newStore();
    const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => create('/race.md', `writer ${i}`)));
    const won = results.filter((r): r is PromiseFulfilledResult<Memory> => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const r of results) {
      if (r.status === 'rejected') {
        expect(r.reason).toMatchObject({ status: 409, error: { error: { type: 'memory_path_conflict_error', conflicting_memory_id: won[0]!.value.id } } });
      }
    }
    expect((await memories().list(store.id)).data).toHaveLength(1);
  });

  it('lets only one of concurrent creates at overlapping paths win', async () => {
    await newStore();
    const paths = ['/x', '/x/y', '/x/y/z.md', '/x/w.md'];
    const results = await Promise.allSettled(paths.map((p) => create(p)));
    const listed = (await memories().list(store.id)).data.map((i) => i.path);
    const fulfilled = results.filter((r) => r.status === 'fulfilled').length;
    expect(listed).toHaveLength(fulfilled);
    // Whatever won, no two live paths overlap.
    for (const a of listed) for (const b of listed) if (a !== b) expect(b.startsWith(a + '/')).toBe(false);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ status: 409 });
  });

  it('applies exactly one of many concurrent updates holding the same precondition', async () => {
    await newStore();
    const m = await create('/cas.md', 'base');
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        memories().update(m.id, { memory_store_id: store.id, content: `next ${i}`, precondition: { type: 'content_sha256', content_sha256: sha256('base') } }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) {
      if (r.status === 'rejected') expect(r.reason).toMatchObject({ status: 409, error: { error: { type: 'memory_precondition_failed_error' } } });
    }
    expect(await versionCount(m.id)).toBe(2);
  });
});

describe('archived stores', () => {
  it('refuses memory creates and updates with 409 conflict_error but allows reads and deletes', async () => {
    await newStore();
    const a = await create('/a.md', 'A');
    const b = await create('/b.md', 'B');
    await client.beta.memoryStores.archive(store.id);

    await expectApiError(create('/c.md'), 409, 'conflict_error');
    await expectApiError(memories().update(a.id, { memory_store_id: store.id, content: 'changed' }), 409, 'conflict_error');
    await expectApiError(memories().update(a.id, { memory_store_id: store.id, path: '/moved.md' }), 409, 'conflict_error');
    // A write that would change nothing is still a write to an archived store.
    await expectApiError(memories().update(a.id, { memory_store_id: store.id, content: 'A' }), 409, 'conflict_error');

    expect((await memories().retrieve(a.id, { memory_store_id: store.id })).content).toBe('A');
    expect((await memories().list(store.id)).data.map((i) => i.path)).toEqual(['/a.md', '/b.md']);

    expect(await memories().delete(b.id, { memory_store_id: store.id })).toEqual({ id: b.id, type: 'memory_deleted' });
    expect((await memories().list(store.id)).data.map((i) => i.path)).toEqual(['/a.md']);
    const ops = (await versions().list(store.id, { memory_id: b.id })).data.map((v) => v.operation);
    expect(ops).toEqual(['deleted', 'created']);
  });
});
