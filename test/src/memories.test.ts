/**
 * The store service over a real SQLite file: memory writes (create, rename, update, delete with
 * preconditions), lists and pagination, version history and filters, redaction, archived stores,
 * store deletion, store updates and store lists. Failures are asserted by MnemoError code.
 */
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/content.js';
import { newId } from '../../src/service/ids.js';
import { createService } from '../../src/service/service.js';
import { NO_MOUNTS } from '../../src/service/mounts.js';
import type { MemoryListItem } from '../../src/domain/types.js';
import { encodeCursor } from '../../src/storage/cursor.js';
import {
  allPages,
  fakeClock,
  memoryQuery,
  openCore,
  otherKey,
  readTree,
  seedStore,
  sessionCaller,
  storeQuery,
  versionQuery,
  type Core,
  codeOf,
  errorOf,
} from '../helpers/core.js';

function versionsOf(core: Core, storeId: string) {
  return allPages((page) => core.service.listVersions(core.caller, storeId, versionQuery({ page })));
}

const label = (i: MemoryListItem) => (i.type === 'memory' ? i.memory.path : `${i.path}*`);

describe('creating memories', () => {
  it('create never overwrites an existing memory', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a.md': 'original' });
    const err = await errorOf(() => core.service.createMemory(core.caller, store.id, { path: '/a.md', content: 'replacement' }));
    expect(err.code).toBe('path_conflict');
    expect(err.details.conflicting_path).toBe('/a.md');
    expect(await readTree(core.service, core.caller, store.id)).toEqual({ '/a.md': 'original' });
    expect(await versionsOf(core, store.id)).toHaveLength(1);
  });

  it.each([
    ['below an existing memory', '/a/b.md', '/a/b.md/c.md'],
    ['above an existing memory', '/a/b/c.md', '/a/b'],
    ['far above an existing memory', '/a/b/c/d.md', '/a'],
  ])('a path %s conflicts and names the memory in the way', async (_name, existing, requested) => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { [existing]: 'x' });
    const id = (await core.storage.getMemoryByPath(store.id, existing))!.id;
    const err = await errorOf(() => core.service.createMemory(core.caller, store.id, { path: requested, content: 'y' }));
    expect(err).toMatchObject({ code: 'path_conflict', details: { conflicting_path: existing, conflicting_memory_id: id } });
    expect(await readTree(core.service, core.caller, store.id)).toEqual({ [existing]: 'x' });
  });

  it('paths that only share a name prefix do not conflict', async () => {
    const core = await openCore();
    const tree = { '/a': '1', '/a-b/c': '2', '/ab': '3', '/a.md': '4', '/b/a': '5' };
    const store = await seedStore(core.service, core.caller, tree);
    expect(await readTree(core.service, core.caller, store.id)).toEqual(tree);
  });

  it('paths are case-sensitive: /Notes.md and /notes.md are two memories', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/Notes.md': 'upper', '/notes.md': 'lower' });
    expect(await readTree(core.service, core.caller, store.id)).toEqual({ '/Notes.md': 'upper', '/notes.md': 'lower' });
  });

  it('create returns the stored memory with its sha256, byte size and one created version', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, {});
    const m = await core.service.createMemory(core.caller, store.id, { path: '/é.md', content: 'naïve' });
    expect(m).toMatchObject({ path: '/é.md', content: 'naïve', contentSha256: sha256Hex('naïve'), contentSizeBytes: 6 });
    expect(await core.service.getMemory(core.caller, store.id, m.id)).toEqual(m);
    const [v] = await versionsOf(core, store.id);
    expect(v).toMatchObject({ id: m.versionId, memoryId: m.id, operation: 'created', path: '/é.md', content: 'naïve', createdBy: core.caller.actor });
  });

  it('create refuses invalid paths and content before anything is stored', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, {});
    expect(await codeOf(() => core.service.createMemory(core.caller, store.id, { path: '/a/', content: 'x' }))).toBe('invalid_path');
    expect(await codeOf(() => core.service.createMemory(core.caller, store.id, { path: '/a', content: 'x'.repeat(102_401) }))).toBe('content_too_large');
    expect(await codeOf(() => core.service.createMemory(core.caller, store.id, { path: '/a', content: '\uD800' }))).toBe('invalid_utf8');
    expect(await versionsOf(core, store.id)).toEqual([]);
  });

  it('an unknown store, or another workspace’s store, is not_found', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a': 'x' });
    const ws = { id: newId('workspace'), name: 'other', createdAt: core.service.clock() };
    await core.storage.insertWorkspace(ws, false);
    const stranger = { workspaceId: ws.id, actor: core.caller.actor };
    expect(await codeOf(() => core.service.createMemory(core.caller, newId('store'), { path: '/a', content: 'x' }))).toBe('not_found');
    expect(await codeOf(() => core.service.createMemory(stranger, store.id, { path: '/b', content: 'x' }))).toBe('not_found');
    expect(await codeOf(() => core.service.listMemories(stranger, store.id, memoryQuery()))).toBe('not_found');
    expect(await codeOf(() => core.service.getMemory(core.caller, store.id, newId('memory')))).toBe('not_found');
  });
});

describe('renaming memories', () => {
  it('rename keeps the memory id and adds one modified version with the new path', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a.md': 'text' });
    const before = (await core.storage.getMemoryByPath(store.id, '/a.md'))!;
    const after = await core.service.updateMemory(core.caller, store.id, before.id, { path: '/dir/b.md' });
    expect(after).toMatchObject({ id: before.id, path: '/dir/b.md', content: 'text', contentSha256: before.contentSha256, createdAt: before.createdAt });
    expect(after.versionId).not.toBe(before.versionId);
    const versions = await versionsOf(core, store.id);
    expect(versions.map((v) => [v.operation, v.path, v.memoryId])).toEqual([
      ['modified', '/dir/b.md', before.id],
      ['created', '/a.md', before.id],
    ]);
    expect(await readTree(core.service, core.caller, store.id)).toEqual({ '/dir/b.md': 'text' });
  });

  it.each([
    ['onto an occupied path', '/taken.md', '/taken.md'],
    ['below another memory', '/taken.md', '/taken.md/x.md'],
    ['above another memory', '/dir/taken.md', '/dir'],
  ])('rename %s conflicts and changes nothing', async (_name, other, target) => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/mine.md': 'mine', [other]: 'theirs' });
    const mine = (await core.storage.getMemoryByPath(store.id, '/mine.md'))!;
    const theirs = (await core.storage.getMemoryByPath(store.id, other))!;
    const err = await errorOf(() => core.service.updateMemory(core.caller, store.id, mine.id, { path: target, content: 'changed' }));
    expect(err).toMatchObject({ code: 'path_conflict', details: { conflicting_path: other, conflicting_memory_id: theirs.id } });
    expect(await readTree(core.service, core.caller, store.id)).toEqual({ '/mine.md': 'mine', [other]: 'theirs' });
    expect(await versionsOf(core, store.id)).toHaveLength(2);
  });

  it('a memory may move below its own old path', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a': 'x' });
    const m = (await core.storage.getMemoryByPath(store.id, '/a'))!;
    await core.service.updateMemory(core.caller, store.id, m.id, { path: '/a/b' });
    expect(await readTree(core.service, core.caller, store.id)).toEqual({ '/a/b': 'x' });
  });

  it('the old path is free after a rename', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a': 'x' });
    const m = (await core.storage.getMemoryByPath(store.id, '/a'))!;
    await core.service.updateMemory(core.caller, store.id, m.id, { path: '/b' });
    const fresh = await core.service.createMemory(core.caller, store.id, { path: '/a', content: 'new' });
    expect(fresh.id).not.toBe(m.id);
    expect(await readTree(core.service, core.caller, store.id)).toEqual({ '/a': 'new', '/b': 'x' });
  });
});

describe('updating memories', () => {
  it.each([
    ['the same content', { content: 'text' }],
    ['the same path', { path: '/a.md' }],
    ['the same content and path', { content: 'text', path: '/a.md' }],
  ])('an update to %s adds no version and keeps updatedAt', async (_name, write) => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a.md': 'text' });
    const m = (await core.storage.getMemoryByPath(store.id, '/a.md'))!;
    expect(await core.service.updateMemory(core.caller, store.id, m.id, write)).toEqual(m);
    expect(await versionsOf(core, store.id)).toHaveLength(1);
  });

  it('a content change adds one modified version and a new sha256', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a.md': 'one' });
    const m = (await core.storage.getMemoryByPath(store.id, '/a.md'))!;
    const updated = await core.service.updateMemory(core.caller, store.id, m.id, { content: 'two', expectedSha256: sha256Hex('one') });
    expect(updated).toMatchObject({ id: m.id, content: 'two', contentSha256: sha256Hex('two'), contentSizeBytes: 3 });
    expect((await versionsOf(core, store.id)).map((v) => [v.operation, v.content])).toEqual([
      ['modified', 'two'],
      ['created', 'one'],
    ]);
  });

  it('a precondition that does not match fails with precondition_failed and changes nothing', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a.md': 'one' });
    const m = (await core.storage.getMemoryByPath(store.id, '/a.md'))!;
    const stale = sha256Hex('zero');
    expect(await codeOf(() => core.service.updateMemory(core.caller, store.id, m.id, { content: 'two', expectedSha256: stale }))).toBe('precondition_failed');
    expect(await codeOf(() => core.service.updateMemory(core.caller, store.id, m.id, { path: '/b.md', expectedSha256: stale }))).toBe('precondition_failed');
    expect(await readTree(core.service, core.caller, store.id)).toEqual({ '/a.md': 'one' });
    expect(await versionsOf(core, store.id)).toHaveLength(1);
  });

  it('a precondition that does not match succeeds without a version when the memory already holds the requested content and path', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a.md': 'two' });
    const m = (await core.storage.getMemoryByPath(store.id, '/a.md'))!;
    const stale = sha256Hex('one');
    expect(await core.service.updateMemory(core.caller, store.id, m.id, { content: 'two', expectedSha256: stale })).toEqual(m);
    expect(await core.service.updateMemory(core.caller, store.id, m.id, { content: 'two', path: '/a.md', expectedSha256: stale })).toEqual(m);
    expect(await versionsOf(core, store.id)).toHaveLength(1);
  });

  it('a retried update is idempotent: the second call sees its own result and adds nothing', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a.md': 'one' });
    const m = (await core.storage.getMemoryByPath(store.id, '/a.md'))!;
    const write = { content: 'two', path: '/b.md', expectedSha256: sha256Hex('one') };
    const first = await core.service.updateMemory(core.caller, store.id, m.id, write);
    expect(await core.service.updateMemory(core.caller, store.id, m.id, write)).toEqual(first);
    expect(await versionsOf(core, store.id)).toHaveLength(2);
  });

  it('an update of an unknown memory is not_found', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, {});
    expect(await codeOf(() => core.service.updateMemory(core.caller, store.id, newId('memory'), { content: 'x' }))).toBe('not_found');
  });

  it('an update refuses an invalid path or content', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a': 'x' });
    const m = (await core.storage.getMemoryByPath(store.id, '/a'))!;
    expect(await codeOf(() => core.service.updateMemory(core.caller, store.id, m.id, { path: 'relative' }))).toBe('invalid_path');
    expect(await codeOf(() => core.service.updateMemory(core.caller, store.id, m.id, { content: 'x'.repeat(102_401) }))).toBe('content_too_large');
  });
});

describe('deleting memories', () => {
  it('a delete with the wrong expected sha256 fails with precondition_failed and deletes nothing', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a.md': 'one' });
    const m = (await core.storage.getMemoryByPath(store.id, '/a.md'))!;
    expect(await codeOf(() => core.service.deleteMemory(core.caller, store.id, m.id, sha256Hex('other')))).toBe('precondition_failed');
    expect(await readTree(core.service, core.caller, store.id)).toEqual({ '/a.md': 'one' });
    expect(await versionsOf(core, store.id)).toHaveLength(1);
  });

  it('a delete adds a deleted version with the path and no content, sha256 or size', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a.md': 'one', '/b.md': 'two' });
    const m = (await core.storage.getMemoryByPath(store.id, '/a.md'))!;
    await core.service.deleteMemory(core.caller, store.id, m.id, sha256Hex('one'));
    expect(await codeOf(() => core.service.getMemory(core.caller, store.id, m.id))).toBe('not_found');
    expect(await readTree(core.service, core.caller, store.id)).toEqual({ '/b.md': 'two' });
    const [latest] = await versionsOf(core, store.id);
    expect(latest).toMatchObject({
      memoryId: m.id, operation: 'deleted', path: '/a.md', content: null, contentSha256: null, contentSizeBytes: null,
      createdBy: core.caller.actor, redactedAt: null,
    });
  });

  it('a deleted memory cannot be deleted or updated again', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a.md': 'one' });
    const m = (await core.storage.getMemoryByPath(store.id, '/a.md'))!;
    await core.service.deleteMemory(core.caller, store.id, m.id);
    expect(await codeOf(() => core.service.deleteMemory(core.caller, store.id, m.id))).toBe('not_found');
    expect(await codeOf(() => core.service.updateMemory(core.caller, store.id, m.id, { content: 'x' }))).toBe('not_found');
    expect(await versionsOf(core, store.id)).toHaveLength(2);
  });
});

describe('listing memories', () => {
  const tree = Object.fromEntries(Array.from({ length: 45 }, (_, i) => [`/m/${String(i).padStart(2, '0')}.md`, `body ${i}`]));

  it.each([1, 7, 10, 45, 100])('depth 0 pages of %i cover every memory once, in path order', async (limit) => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, tree);
    const items = await allPages((page) => core.service.listMemories(core.caller, store.id, memoryQuery({ limit, page })));
    expect(items.map(label)).toEqual(Object.keys(tree).sort());
  });

  it('the last page has no next page, and an exact fit does not promise an empty one', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a': '1', '/b': '2' });
    expect((await core.service.listMemories(core.caller, store.id, memoryQuery({ limit: 2 }))).nextPage).toBeNull();
    expect((await core.service.listMemories(core.caller, store.id, memoryQuery({ limit: 1 }))).nextPage).not.toBeNull();
  });

  it('depth 1 rolls deeper paths into memory_prefix items, and pages the same way', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, {
      '/top.md': 't', '/a/x.md': '1', '/a/y/z.md': '2', '/a-b.md': '3', '/b/c/d/e.md': '4', '/c/1': '5', '/c/2': '6', '/z.md': '7',
    });
    const whole = await core.service.listMemories(core.caller, store.id, memoryQuery({ depth: 1 }));
    expect(whole.data.map(label)).toEqual(['/a-b.md', '/a/*', '/b/*', '/c/*', '/top.md', '/z.md']);
    expect(whole.nextPage).toBeNull();
    for (const limit of [1, 2, 4]) {
      const paged = await allPages((page) => core.service.listMemories(core.caller, store.id, memoryQuery({ depth: 1, limit, page })));
      expect(paged.map(label)).toEqual(whole.data.map(label));
    }
    const inside = await core.service.listMemories(core.caller, store.id, memoryQuery({ depth: 1, pathPrefix: '/a/' }));
    expect(inside.data.map(label)).toEqual(['/a/x.md', '/a/y/*']);
  });

  it('path_prefix matches whole segments: /notes/ matches /notes/a but not /notes-archive/a', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, {
      '/notes/a': '1', '/notes/sub/b': '2', '/notes-archive/a': '3', '/notesx': '4', '/Notes/c': '5', '/other/notes/d': '6',
    });
    const depth0 = await core.service.listMemories(core.caller, store.id, memoryQuery({ pathPrefix: '/notes/' }));
    expect(depth0.data.map(label)).toEqual(['/notes/a', '/notes/sub/b']);
    const depth1 = await core.service.listMemories(core.caller, store.id, memoryQuery({ pathPrefix: '/notes/', depth: 1 }));
    expect(depth1.data.map(label)).toEqual(['/notes/a', '/notes/sub/*']);
    expect((await core.service.listMemories(core.caller, store.id, memoryQuery({ pathPrefix: '/nothing/' }))).data).toEqual([]);
  });

  it('path_prefix pages stay inside the prefix', async () => {
    const core = await openCore();
    const inside = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`/p/${i}`, 'x']));
    const store = await seedStore(core.service, core.caller, { '/o/1': 'x', ...inside, '/p-z': 'x', '/q': 'x' });
    const items = await allPages((page) => core.service.listMemories(core.caller, store.id, memoryQuery({ pathPrefix: '/p/', limit: 2, page })));
    expect(items.map(label)).toEqual(Object.keys(inside));
  });

  it('a page cursor taken from another prefix is refused, and so is an unsealed one of an earlier release on a database made since', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a': '1', '/b': '2', '/p/1': '3', '/p/q/2': '4', '/z': '5' });
    const bound = (await core.service.listMemories(core.caller, store.id, memoryQuery({ limit: 1 }))).nextPage!;
    expect(await codeOf(() => core.service.listMemories(core.caller, store.id, memoryQuery({ pathPrefix: '/p/', page: bound })))).toBe('invalid_request');
    // Earlier releases issued the storage's cursor unsealed: a database that had no data when it was
    // sealed never takes one (the hour's window after an upgrade is tested in sqlite.test.ts).
    const unsealed = encodeCursor({ p: '/a' });
    expect(await codeOf(() => core.service.listMemories(core.caller, store.id, memoryQuery({ pathPrefix: '/p/', page: unsealed })))).toBe('invalid_request');
  });

  it('the full view carries content and the basic view does not', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a': 'body' });
    const [basic] = (await core.service.listMemories(core.caller, store.id, memoryQuery())).data;
    const [full] = (await core.service.listMemories(core.caller, store.id, memoryQuery({ view: 'full' }))).data;
    expect(basic).toMatchObject({ type: 'memory', memory: { path: '/a', contentSizeBytes: 4 } });
    expect(basic?.type === 'memory' && 'content' in basic.memory).toBe(false);
    expect(full).toMatchObject({ type: 'memory', memory: { path: '/a', content: 'body' } });
  });
});

describe('versions', () => {
  it('versions list newest first across operations', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a': '1' });
    const a = (await core.storage.getMemoryByPath(store.id, '/a'))!;
    await core.service.updateMemory(core.caller, store.id, a.id, { content: '2' });
    await core.service.updateMemory(core.caller, store.id, a.id, { path: '/b' });
    await core.service.deleteMemory(core.caller, store.id, a.id);
    expect((await versionsOf(core, store.id)).map((v) => [v.operation, v.path, v.content])).toEqual([
      ['deleted', '/b', null],
      ['modified', '/b', '2'],
      ['modified', '/a', '2'],
      ['created', '/a', '1'],
    ]);
  });

  it('versions page across many pages with no duplicates or gaps, and each one reads back alone', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a': 'v0', '/b': 'w0' });
    const a = (await core.storage.getMemoryByPath(store.id, '/a'))!;
    const b = (await core.storage.getMemoryByPath(store.id, '/b'))!;
    for (let i = 1; i <= 30; i++) {
      await core.service.updateMemory(core.caller, store.id, a.id, { content: `v${i}` });
      await core.service.updateMemory(core.caller, store.id, b.id, { content: `w${i}` });
    }
    const all = await versionsOf(core, store.id);
    expect(all).toHaveLength(62);
    for (const limit of [1, 7, 20, 61, 62, 100]) {
      const paged = await allPages((page) => core.service.listVersions(core.caller, store.id, versionQuery({ limit, page })));
      expect(paged.map((v) => v.id)).toEqual(all.map((v) => v.id));
    }
    expect(new Set(all.map((v) => v.id)).size).toBe(62);
    expect(all[0]?.content).toBe('w30');
    expect(all[61]?.content).toBe('v0');
    for (const v of all.slice(0, 5)) expect(await core.service.getVersion(core.caller, store.id, v.id)).toEqual(v);
    const filtered = await allPages((page) => core.service.listVersions(core.caller, store.id, versionQuery({ memoryId: a.id, limit: 4, page })));
    expect(filtered.map((v) => v.content)).toEqual(Array.from({ length: 31 }, (_, i) => `v${30 - i}`));
  });

  it('the memory_id filter includes the deleted version', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a': '1', '/b': '2' });
    const a = (await core.storage.getMemoryByPath(store.id, '/a'))!;
    await core.service.deleteMemory(core.caller, store.id, a.id);
    const versions = (await core.service.listVersions(core.caller, store.id, versionQuery({ memoryId: a.id }))).data;
    expect(versions.map((v) => v.operation)).toEqual(['deleted', 'created']);
  });

  it('the operation filter keeps only that operation', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a': '1', '/b': '2', '/c': '3' });
    const a = (await core.storage.getMemoryByPath(store.id, '/a'))!;
    const b = (await core.storage.getMemoryByPath(store.id, '/b'))!;
    await core.service.updateMemory(core.caller, store.id, a.id, { content: 'x' });
    await core.service.deleteMemory(core.caller, store.id, b.id);
    const ops = async (operation: 'created' | 'modified' | 'deleted') =>
      (await core.service.listVersions(core.caller, store.id, versionQuery({ operation }))).data.map((v) => v.path);
    expect(await ops('created')).toEqual(['/c', '/b', '/a']);
    expect(await ops('modified')).toEqual(['/a']);
    expect(await ops('deleted')).toEqual(['/b']);
  });

  it('the api_key_id and session_id filters keep only that actor’s versions', async () => {
    const core = await openCore();
    const other = await otherKey(core);
    const agent = sessionCaller(core, newId('session'));
    const store = await seedStore(core.service, core.caller, { '/admin': '1' });
    await core.service.createMemory(other, store.id, { path: '/other', content: '2' });
    await core.service.createMemory(agent, store.id, { path: '/agent', content: '3' });
    const paths = async (q: Parameters<typeof versionQuery>[0]) =>
      (await core.service.listVersions(core.caller, store.id, versionQuery(q))).data.map((v) => v.path);
    const keyOf = (c: typeof other) => (c.actor.type === 'api_actor' ? c.actor.apiKeyId : '');
    expect(await paths({ apiKeyId: keyOf(core.caller) })).toEqual(['/admin']);
    expect(await paths({ apiKeyId: keyOf(other) })).toEqual(['/other']);
    expect(await paths({ sessionId: agent.actor.type === 'session_actor' ? agent.actor.sessionId : '' })).toEqual(['/agent']);
    expect(await paths({ sessionId: newId('session') })).toEqual([]);
    const [agentVersion] = (await core.service.listVersions(core.caller, store.id, versionQuery({ limit: 1 }))).data;
    expect(agentVersion?.createdBy).toEqual(agent.actor);
  });

  it('created_at[gte] and created_at[lte] are inclusive bounds', async () => {
    const clock = fakeClock();
    const core = await openCore({ clock });
    const store = await seedStore(core.service, core.caller, {});
    const at = async (iso: string, path: string) => {
      clock.set(iso);
      await core.service.createMemory(core.caller, store.id, { path, content: path });
    };
    await at('2026-01-10T00:00:00.000Z', '/jan10');
    await at('2026-01-20T00:00:00.000Z', '/jan20');
    await at('2026-01-30T00:00:00.000Z', '/jan30');
    const paths = async (createdGte: string | null, createdLte: string | null) =>
      (await core.service.listVersions(core.caller, store.id, versionQuery({ createdGte, createdLte }))).data.map((v) => v.path);
    expect(await paths('2026-01-20T00:00:00.000Z', null)).toEqual(['/jan30', '/jan20']);
    expect(await paths(null, '2026-01-20T00:00:00.000Z')).toEqual(['/jan20', '/jan10']);
    expect(await paths('2026-01-15T00:00:00.000Z', '2026-01-25T00:00:00.000Z')).toEqual(['/jan20']);
    expect(await paths('2026-02-01T00:00:00.000Z', null)).toEqual([]);
  });

  it('filters combine, and an unknown version is not_found', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a': '1', '/b': '2' });
    const a = (await core.storage.getMemoryByPath(store.id, '/a'))!;
    await core.service.updateMemory(core.caller, store.id, a.id, { content: '3' });
    const data = (await core.service.listVersions(core.caller, store.id, versionQuery({ memoryId: a.id, operation: 'created' }))).data;
    expect(data.map((v) => [v.path, v.content])).toEqual([['/a', '1']]);
    expect(await codeOf(() => core.service.getVersion(core.caller, store.id, newId('version')))).toBe('not_found');
  });
});

describe('redaction', () => {
  async function history(core: Core) {
    const store = await seedStore(core.service, core.caller, { '/creds.md': 'password=hunter2' });
    const m = (await core.storage.getMemoryByPath(store.id, '/creds.md'))!;
    return { store, memory: m, createdVersionId: m.versionId };
  }

  it('redaction nulls path, content, sha256 and size and records who and when', async () => {
    const clock = fakeClock();
    const core = await openCore({ clock });
    const { store, memory, createdVersionId } = await history(core);
    const current = await core.service.updateMemory(core.caller, store.id, memory.id, { content: 'password=(rotated)' });
    clock.set('2026-06-01T00:00:00.000Z');
    const redacted = await core.service.redactVersion(core.caller, store.id, createdVersionId);
    expect(redacted).toMatchObject({
      id: createdVersionId, memoryId: memory.id, operation: 'created', path: null, content: null, contentSha256: null,
      contentSizeBytes: null, redactedAt: '2026-06-01T00:00:00.000Z', redactedBy: core.caller.actor, createdBy: core.caller.actor,
    });
    expect(await core.service.textHolders(core.caller, redacted)).toEqual({ data: [], hasMore: false, count: 0 });
    expect(await core.service.getVersion(core.caller, store.id, createdVersionId)).toEqual({ ...redacted, erased: undefined });
    expect(await core.service.getMemory(core.caller, store.id, memory.id)).toEqual(current);
    expect(await versionsOf(core, store.id)).toHaveLength(2);
  });

  it('a redaction tells the mounts which version went, and its text once no other version holds it', async () => {
    const told: [string, string, string | null][] = [];
    const core = await openCore({ mounter: { ...NO_MOUNTS, versionRedacted: (s, v, sha) => void told.push([s, v, sha]) } });
    const { store, memory, createdVersionId } = await history(core);
    // v2 changes the text, v3 brings the first one back: v1's text is still held when v1 goes.
    await core.service.updateMemory(core.caller, store.id, memory.id, { content: 'rotated' });
    await core.service.updateMemory(core.caller, store.id, memory.id, { content: 'password=hunter2' });
    await core.service.redactVersion(core.caller, store.id, createdVersionId);
    const other = await core.service.createMemory(core.caller, store.id, { path: '/other.md', content: 'token=abc' });
    await core.service.updateMemory(core.caller, store.id, other.id, { content: 'token=(gone)' });
    await core.service.redactVersion(core.caller, store.id, other.versionId);
    // Redacting again changes nothing, and tells nothing.
    await core.service.redactVersion(core.caller, store.id, other.versionId);
    expect(told).toEqual([
      [store.id, createdVersionId, null],
      [store.id, other.versionId, sha256Hex('token=abc')],
    ]);
  });

  it('the head version of a live memory cannot be redacted (conflict)', async () => {
    const core = await openCore();
    const { store, memory, createdVersionId } = await history(core);
    expect(await codeOf(() => core.service.redactVersion(core.caller, store.id, createdVersionId))).toBe('conflict');
    expect((await core.service.getVersion(core.caller, store.id, createdVersionId)).content).toBe('password=hunter2');
    expect((await core.service.getMemory(core.caller, store.id, memory.id)).content).toBe('password=hunter2');
  });

  it('after a rename the old head can be redacted, and the memory keeps its content', async () => {
    const core = await openCore();
    const { store, memory, createdVersionId } = await history(core);
    const renamed = await core.service.updateMemory(core.caller, store.id, memory.id, { path: '/moved.md' });
    expect((await core.service.redactVersion(core.caller, store.id, createdVersionId)).content).toBeNull();
    expect(await core.service.getMemory(core.caller, store.id, memory.id)).toEqual(renamed);
  });

  it('after a delete every version of the memory can be redacted, the deleted one included', async () => {
    const core = await openCore();
    const { store, memory } = await history(core);
    await core.service.deleteMemory(core.caller, store.id, memory.id);
    const versions = (await core.service.listVersions(core.caller, store.id, versionQuery({ memoryId: memory.id }))).data;
    for (const v of versions) {
      expect(await core.service.redactVersion(core.caller, store.id, v.id)).toMatchObject({ path: null, content: null, redactedBy: core.caller.actor });
    }
    expect((await versionsOf(core, store.id)).every((v) => v.redactedAt !== null && v.path === null)).toBe(true);
  });

  it('redacting again changes nothing: the first redaction time and redactor stay', async () => {
    const clock = fakeClock();
    const core = await openCore({ clock });
    const { store, memory, createdVersionId } = await history(core);
    await core.service.updateMemory(core.caller, store.id, memory.id, { content: 'new' });
    const first = await core.service.redactVersion(core.caller, store.id, createdVersionId);
    const again = await core.service.redactVersion(await otherKey(core), store.id, createdVersionId);
    expect(again).toEqual({ ...first, erased: undefined });
    expect(await core.service.textHolders(core.caller, again)).toBeNull();
  });

  it('an agent (session actor) cannot redact, and an unknown version is not_found', async () => {
    const core = await openCore();
    const { store, memory, createdVersionId } = await history(core);
    await core.service.updateMemory(core.caller, store.id, memory.id, { content: 'new' });
    expect(await codeOf(() => core.service.redactVersion(sessionCaller(core, newId('session')), store.id, createdVersionId))).toBe('forbidden');
    expect(await codeOf(() => core.service.redactVersion(core.caller, store.id, newId('version')))).toBe('not_found');
    expect((await core.service.getVersion(core.caller, store.id, createdVersionId)).redactedAt).toBeNull();
  });

  it('a redacted version still shows in lists and filters by memory and operation', async () => {
    const core = await openCore();
    const { store, memory, createdVersionId } = await history(core);
    await core.service.updateMemory(core.caller, store.id, memory.id, { content: 'new' });
    await core.service.redactVersion(core.caller, store.id, createdVersionId);
    const created = (await core.service.listVersions(core.caller, store.id, versionQuery({ memoryId: memory.id, operation: 'created' }))).data;
    expect(created.map((v) => [v.id, v.path, v.content])).toEqual([[createdVersionId, null, null]]);
  });
});

describe('archived stores', () => {
  async function archived() {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/keep.md': 'keep', '/old.md': 'one' });
    const old = (await core.storage.getMemoryByPath(store.id, '/old.md'))!;
    const updated = await core.service.updateMemory(core.caller, store.id, old.id, { content: 'two' });
    const keep = (await core.storage.getMemoryByPath(store.id, '/keep.md'))!;
    const archivedStore = await core.service.archiveStore(core.caller, store.id);
    return { core, store: archivedStore, keep, old: updated, oldFirstVersion: old.versionId };
  }

  it('an archived store stays readable', async () => {
    const { core, store, keep, oldFirstVersion } = await archived();
    expect(store.archivedAt).not.toBeNull();
    expect(await core.service.getStore(core.caller, store.id)).toEqual(store);
    expect(await core.service.getMemory(core.caller, store.id, keep.id)).toEqual(keep);
    expect(await readTree(core.service, core.caller, store.id)).toEqual({ '/keep.md': 'keep', '/old.md': 'two' });
    expect(await versionsOf(core, store.id)).toHaveLength(3);
    expect((await core.service.getVersion(core.caller, store.id, oldFirstVersion)).content).toBe('one');
  });

  it('an archived store refuses creates and updates with archived', async () => {
    const { core, store, keep } = await archived();
    expect(await codeOf(() => core.service.createMemory(core.caller, store.id, { path: '/new.md', content: 'x' }))).toBe('archived');
    expect(await codeOf(() => core.service.updateMemory(core.caller, store.id, keep.id, { content: 'changed' }))).toBe('archived');
    expect(await codeOf(() => core.service.updateMemory(core.caller, store.id, keep.id, { path: '/moved.md' }))).toBe('archived');
    // Even an update that would change nothing is a write to an archived store.
    expect(await codeOf(() => core.service.updateMemory(core.caller, store.id, keep.id, { content: 'keep' }))).toBe('archived');
    expect(await readTree(core.service, core.caller, store.id)).toEqual({ '/keep.md': 'keep', '/old.md': 'two' });
    expect(await versionsOf(core, store.id)).toHaveLength(3);
  });

  it('an archived store still lets memories be deleted and versions be redacted', async () => {
    const { core, store, old, oldFirstVersion } = await archived();
    expect((await core.service.redactVersion(core.caller, store.id, oldFirstVersion)).content).toBeNull();
    await core.service.deleteMemory(core.caller, store.id, old.id, old.contentSha256);
    expect(await readTree(core.service, core.caller, store.id)).toEqual({ '/keep.md': 'keep' });
    expect((await versionsOf(core, store.id))[0]).toMatchObject({ operation: 'deleted', path: '/old.md' });
  });

  it('an archived store refuses store updates with archived', async () => {
    const { core, store } = await archived();
    expect(await codeOf(() => core.service.updateStore(core.caller, store.id, { name: 'renamed' }))).toBe('archived');
    expect(await codeOf(() => core.service.updateStore(core.caller, store.id, { metadata: { k: 'v' } }))).toBe('archived');
    expect(await core.service.getStore(core.caller, store.id)).toEqual(store);
  });

  it('archiving twice keeps the first archive time', async () => {
    const clock = fakeClock();
    const core = await openCore({ clock });
    const store = await seedStore(core.service, core.caller, {});
    const first = await core.service.archiveStore(core.caller, store.id);
    clock.set('2027-01-01T00:00:00.000Z');
    expect(await core.service.archiveStore(core.caller, store.id)).toEqual(first);
  });

  it('archiving and deleting a store tell the mounter', async () => {
    const core = await openCore();
    const changes: string[] = [];
    const mounter = { ...NO_MOUNTS, storeChanged: (id: string, change: string) => void changes.push(`${change} ${id}`) };
    const service = createService({ storage: core.storage, mounter });
    const store = await seedStore(service, core.caller, {});
    await service.archiveStore(core.caller, store.id);
    await service.deleteStore(core.caller, store.id);
    expect(changes).toEqual([`archived ${store.id}`, `deleted ${store.id}`]);
  });
});

describe('deleting stores', () => {
  it('deleting a store removes its memories and versions and leaves other stores untouched', async () => {
    const core = await openCore();
    const doomed = await seedStore(core.service, core.caller, { '/a': '1', '/b/c': '2' }, 'doomed');
    const kept = await seedStore(core.service, core.caller, { '/a': 'kept' }, 'kept');
    const doomedMemory = (await core.storage.getMemoryByPath(doomed.id, '/a'))!;
    await core.service.updateMemory(core.caller, doomed.id, doomedMemory.id, { content: 'again' });
    const keptVersions = await versionsOf(core, kept.id);
    await core.service.deleteStore(core.caller, doomed.id);
    expect(await codeOf(() => core.service.getStore(core.caller, doomed.id))).toBe('not_found');
    expect(await codeOf(() => core.service.listMemories(core.caller, doomed.id, memoryQuery()))).toBe('not_found');
    // The rows themselves go in the upkeep's steps.
    while (await core.service.purgeDeletedStores());
    expect(await core.storage.getMemory(doomed.id, doomedMemory.id)).toBeNull();
    expect(await core.storage.getVersion(doomed.id, doomedMemory.versionId)).toBeNull();
    expect((await core.storage.listVersions(doomed.id, versionQuery())).data).toEqual([]);
    expect((await core.storage.listMemories(doomed.id, memoryQuery())).data).toEqual([]);
    expect(await readTree(core.service, core.caller, kept.id)).toEqual({ '/a': 'kept' });
    expect(await versionsOf(core, kept.id)).toEqual(keptVersions);
    expect(await core.storage.integrityCheck()).toEqual([]);
  });

  it('an archived store can be deleted; an unknown one is not_found', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/a': '1' });
    await core.service.archiveStore(core.caller, store.id);
    await core.service.deleteStore(core.caller, store.id);
    expect(await codeOf(() => core.service.deleteStore(core.caller, store.id))).toBe('not_found');
    expect(await codeOf(() => core.service.archiveStore(core.caller, store.id))).toBe('not_found');
  });
});

describe('store updates', () => {
  async function withMetadata(metadata: Record<string, string>) {
    const clock = fakeClock();
    const core = await openCore({ clock });
    const store = await core.service.createStore(core.caller, { name: 'notes', description: 'd', metadata });
    return { core, store, clock };
  }

  it('a metadata patch upserts strings, removes nulls and keeps the other keys', async () => {
    const { core, store } = await withMetadata({ keep: '1', change: '2', drop: '3' });
    const updated = await core.service.updateStore(core.caller, store.id, { metadata: { change: 'two', drop: null, add: '4', absent: null } });
    expect(updated.metadata).toEqual({ keep: '1', change: 'two', add: '4' });
    expect(updated).toMatchObject({ name: 'notes', description: 'd' });
    expect(await core.service.getStore(core.caller, store.id)).toEqual(updated);
  });

  it('a patch that would leave more than 16 pairs fails and changes nothing', async () => {
    const sixteen = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v']));
    const { core, store } = await withMetadata(sixteen);
    expect(await codeOf(() => core.service.updateStore(core.caller, store.id, { metadata: { extra: 'v' } }))).toBe('invalid_request');
    expect(await core.service.getStore(core.caller, store.id)).toEqual(store);
    const swapped = await core.service.updateStore(core.caller, store.id, { metadata: { k0: null, extra: 'v' } });
    expect(Object.keys(swapped.metadata)).toHaveLength(16);
    expect(swapped.metadata).toHaveProperty('extra', 'v');
  });

  it('name and description change, and updatedAt moves only on a real change', async () => {
    const { core, store } = await withMetadata({ a: '1' });
    const same = await core.service.updateStore(core.caller, store.id, { name: 'notes', metadata: { a: '1' } });
    expect(same).toEqual(store);
    const changed = await core.service.updateStore(core.caller, store.id, { name: 'renamed', description: '' });
    expect(changed).toMatchObject({ name: 'renamed', description: '', metadata: { a: '1' }, createdAt: store.createdAt });
    expect(changed.updatedAt > store.updatedAt).toBe(true);
  });

  it('an update of an unknown store is not_found', async () => {
    const core = await openCore();
    expect(await codeOf(() => core.service.updateStore(core.caller, newId('store'), { name: 'x' }))).toBe('not_found');
  });
});

describe('listing stores', () => {
  async function stores() {
    const clock = fakeClock();
    const core = await openCore({ clock });
    const made = [];
    for (const [i, day] of ['2026-01-01', '2026-01-02', '2026-01-03', '2026-01-04', '2026-01-05'].entries()) {
      clock.set(`${day}T00:00:00.000Z`);
      made.push(await core.service.createStore(core.caller, { name: `s${i}`, description: '', metadata: {} }));
    }
    clock.set('2026-02-01T00:00:00.000Z');
    await core.service.archiveStore(core.caller, made[2]!.id);
    return { core, made };
  }
  const names = async (core: Core, q: Parameters<typeof storeQuery>[0]) =>
    (await allPages((page) => core.service.listStores(core.caller, storeQuery({ ...q, page })))).map((s) => s.name);

  it('stores list newest first without archived ones, unless include_archived', async () => {
    const { core } = await stores();
    expect(await names(core, {})).toEqual(['s4', 's3', 's1', 's0']);
    expect(await names(core, { includeArchived: true })).toEqual(['s4', 's3', 's2', 's1', 's0']);
  });

  it('created_at[gte] and created_at[lte] bound the list inclusively', async () => {
    const { core } = await stores();
    expect(await names(core, { includeArchived: true, createdGte: '2026-01-02T00:00:00.000Z', createdLte: '2026-01-04T00:00:00.000Z' })).toEqual(['s3', 's2', 's1']);
    expect(await names(core, { createdGte: '2026-01-04T00:00:00.000Z' })).toEqual(['s4', 's3']);
    expect(await names(core, { createdLte: '2025-12-31T00:00:00.000Z' })).toEqual([]);
  });

  it.each([1, 2, 3, 5])('pages of %i cover every store once', async (limit) => {
    const { core } = await stores();
    expect(await names(core, { includeArchived: true, limit })).toEqual(['s4', 's3', 's2', 's1', 's0']);
    expect(await names(core, { limit })).toEqual(['s4', 's3', 's1', 's0']);
  });

  it('another workspace’s stores are not listed', async () => {
    const { core } = await stores();
    const ws = { id: newId('workspace'), name: 'other', createdAt: '2026-01-01T00:00:00.000Z' };
    await core.storage.insertWorkspace(ws, false);
    expect((await core.service.listStores({ workspaceId: ws.id, actor: core.caller.actor }, storeQuery())).data).toEqual([]);
  });
});

describe('mount attributes (times, owner, mode)', () => {
  async function oneMemory() {
    const core = await openCore({ clock: fakeClock('2026-01-01T00:00:00.000Z') });
    const store = await core.service.createStore(core.caller, { name: 's', description: '', metadata: {} });
    const m = await core.service.createMemory(core.caller, store.id, { path: '/a.md', content: 'a' });
    return { core, store, m };
  }

  it('setMemoryTimes, setMemoryOwner and setMemoryMode keep what they set without a version, each moving the ctime', async () => {
    const { core, store, m } = await oneMemory();
    await core.service.setMemoryTimes(core.caller, store.id, m.id, { mtimeMs: 1_600_000_000_000.5 });
    const timed = await core.service.getMemory(core.caller, store.id, m.id);
    expect(timed).toMatchObject({ mtimeMs: 1_600_000_000_000.5, atimeMs: Date.parse(m.updatedAt), uid: null });
    await core.service.setMemoryOwner(core.caller, store.id, m.id, { gid: 50 });
    const owned = await core.service.getMemory(core.caller, store.id, m.id);
    expect(owned).toMatchObject({ uid: null, gid: 50 });
    expect(owned.ctimeMs).toBeGreaterThan(timed.ctimeMs!);
    await core.service.setMemoryMode(core.caller, store.id, m.id, 0o100600);
    const moded = await core.service.getMemory(core.caller, store.id, m.id);
    expect(moded.mode).toBe(0o600);
    expect(moded.ctimeMs).toBeGreaterThan(owned.ctimeMs!);
    expect(await versionsOf(core, store.id)).toHaveLength(1);
    // None of it is on the memory's content or version: an API reader sees the memory unchanged.
    expect(moded).toMatchObject({ versionId: m.versionId, updatedAt: m.updatedAt, contentSha256: m.contentSha256 });
  });

  it('refuses times that are not finite and ids that are not 32-bit (or the -1 that means unchanged)', async () => {
    const { core, store, m } = await oneMemory();
    expect(await codeOf(() => core.service.setMemoryTimes(core.caller, store.id, m.id, { atimeMs: Number.NaN }))).toBe('invalid_request');
    expect(await codeOf(() => core.service.setMemoryTimes(core.caller, store.id, m.id, { mtimeMs: Infinity }))).toBe('invalid_request');
    for (const uid of [-1, 1.5, 0xffffffff, 2 ** 40]) {
      expect(await codeOf(() => core.service.setMemoryOwner(core.caller, store.id, m.id, { uid }))).toBe('invalid_request');
    }
    expect(await core.service.getMemory(core.caller, store.id, m.id)).toMatchObject({ atimeMs: null, mtimeMs: null, uid: null });
  });

  it('needs the right to write, and the memory to exist', async () => {
    const { core, store, m } = await oneMemory();
    const reader = { ...core.caller, grant: { role: 'read_only' as const, storeIds: null } };
    expect(await codeOf(() => core.service.setMemoryOwner(reader, store.id, m.id, { uid: 1 }))).toBe('forbidden');
    expect(await codeOf(() => core.service.setMemoryTimes(core.caller, store.id, newId('memory'), { mtimeMs: 1 }))).toBe('not_found');
  });

  it('a mount save that carries a set mtime keeps it past the new version; an API update resets it', async () => {
    const { core, store, m } = await oneMemory();
    const mount = sessionCaller(core, 'sesn_x');
    const saved = await core.service.updateMemory(mount, store.id, m.id, { content: 'copied' }, { mtimeMs: 1234 });
    expect(saved).toMatchObject({ mtimeMs: 1234, ctimeMs: null });
    const updated = await core.service.updateMemory(core.caller, store.id, m.id, { content: 'api' });
    expect(updated).toMatchObject({ mtimeMs: null, ctimeMs: null, atimeMs: Date.parse(m.updatedAt) });
  });
});
