/**
 * Checkpoints (issue 6) through the official SDK against the real server: saving with the latest
 * pointer and its guard, the race between two writers, reading, deletion rules, every validation
 * limit, restore budgets and the status of each reference.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { extensions, type CheckpointBody } from '../helpers/continuity.js';
import { inProcessApp } from '../helpers/in-process.js';
import { startServer, type RunningServer } from '../helpers/server.js';
import { expectApiError, rawRequest, sdkClient, useServer } from '../helpers/sdk.js';
import { freshStore, sha256, type Store } from './shapes.js';

let server: RunningServer;
let client: Anthropic;
let ext: ReturnType<typeof extensions>;

useServer((s, c) => {
  server = s;
  client = c;
  ext = extensions(client);
});

let n = 0;
const session = () => `sess-${++n}`;

function bundle(sessionId: string, extra: Partial<CheckpointBody> = {}): CheckpointBody {
  return { agent_id: 'agent-1', session_id: sessionId, goal: 'ship the release', ...extra };
}

describe('saving a checkpoint', () => {
  let store: Store;
  beforeAll(async () => {
    store = await freshStore(client, 'checkpoints');
  });

  it('returns an id, revision 1 and a stable locator, and reads back unchanged', async () => {
    const s = session();
    const body = bundle(s, {
      summary: 'long notes',
      constraints: ['never push to main'],
      decisions: ['use blue-green'],
      open_tasks: ['write changelog'],
      next_action: 'run the tests',
      capsule: 'You were shipping the release.',
      references: [{ path: '/notes/plan.md', content_sha256: sha256('plan'), note: 'the plan' }],
    });
    const c = await ext.checkpoint(store.id, body);
    expect(c).toMatchObject({
      type: 'checkpoint', agent_id: 'agent-1', session_id: s, revision: 1, is_latest: true,
      goal: 'ship the release', constraints: ['never push to main'], decisions: ['use blue-green'],
      open_tasks: ['write changelog'], next_action: 'run the tests', capsule: 'You were shipping the release.',
      references: [{ memory_id: null, path: '/notes/plan.md', content_sha256: sha256('plan'), memory_version_id: null, note: 'the plan' }],
    });
    expect(c.id).toMatch(/^ckpt_[0-9A-Za-z]+$/);
    expect(c.locator).toBe(`mnemo://memory_stores/${store.id}/checkpoints/${c.id}`);
    expect(await ext.getCheckpoint(store.id, c.id)).toEqual(c);
    expect(await ext.latest(store.id, 'agent-1', s)).toEqual(c);
  });

  it('numbers revisions per agent and session and moves the latest pointer', async () => {
    const s = session();
    const one = await ext.checkpoint(store.id, bundle(s));
    const two = await ext.checkpoint(store.id, bundle(s, { expected_latest_checkpoint_id: one.id }));
    const other = await ext.checkpoint(store.id, { ...bundle(s), agent_id: 'agent-2' });
    expect([one.revision, two.revision, other.revision]).toEqual([1, 2, 1]);
    expect((await ext.latest(store.id, 'agent-1', s)).id).toBe(two.id);
    expect((await ext.getCheckpoint(store.id, one.id)).is_latest).toBe(false);
  });

  it('refuses a save whose expected_latest_checkpoint_id is not the latest with 409', async () => {
    const s = session();
    const one = await ext.checkpoint(store.id, bundle(s, { expected_latest_checkpoint_id: null }));
    await ext.checkpoint(store.id, bundle(s, { expected_latest_checkpoint_id: one.id }));
    const err = await expectApiError(ext.checkpoint(store.id, bundle(s, { expected_latest_checkpoint_id: one.id })), 409, 'conflict_error');
    expect(err.message).toContain(one.id);
    await expectApiError(ext.checkpoint(store.id, bundle(s, { expected_latest_checkpoint_id: null })), 409, 'conflict_error');
  });

  it('lets exactly one of two concurrent saves with the same expected latest win', async () => {
    const s = session();
    const base = await ext.checkpoint(store.id, bundle(s));
    for (let round = 0; round < 5; round++) {
      const latest = (await ext.latest(store.id, 'agent-1', s)).id;
      const results = await Promise.allSettled([
        ext.checkpoint(store.id, bundle(s, { goal: 'a', expected_latest_checkpoint_id: latest })),
        ext.checkpoint(store.id, bundle(s, { goal: 'b', expected_latest_checkpoint_id: latest })),
      ]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r) => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect((lost[0] as PromiseRejectedResult).reason).toMatchObject({ status: 409 });
      expect((await ext.latest(store.id, 'agent-1', s)).id).toBe((won[0] as PromiseFulfilledResult<{ id: string }>).value.id);
    }
    expect((await ext.latest(store.id, 'agent-1', s)).revision).toBe(base.revision + 5);
  });

  it('replays a save retried with the same Idempotency-Key instead of adding a revision', async () => {
    const s = session();
    const path = `/v1/memory_stores/${store.id}/checkpoints`;
    const headers = { 'idempotency-key': `ckpt-${s}` };
    const first = await client.post<{ id: string; revision: number }>(path, { body: bundle(s), headers });
    const again = await client.post<{ id: string; revision: number }>(path, { body: bundle(s), headers });
    expect(again).toEqual(first);
    expect((await ext.latest(store.id, 'agent-1', s)).revision).toBe(1);
  });

  it('is invisible to the memory routes: a checkpoint is not a memory', async () => {
    const s = await freshStore(client, 'ckpt-only');
    const c = await ext.checkpoint(s.id, bundle(session()));
    const page = await client.beta.memoryStores.memories.list(s.id);
    expect(page.data).toEqual([]);
    await expectApiError(client.beta.memoryStores.memories.retrieve(c.id, { memory_store_id: s.id }), 404, 'not_found_error');
  });

  it('is refused on an archived store, which still restores and deletes', async () => {
    const s = await freshStore(client, 'archived-ckpt');
    const sid = session();
    const one = await ext.checkpoint(s.id, bundle(sid));
    const two = await ext.checkpoint(s.id, bundle(sid));
    await client.beta.memoryStores.archive(s.id);
    await expectApiError(ext.checkpoint(s.id, bundle(sid)), 409, 'conflict_error');
    expect((await ext.restore(s.id, two.id)).checkpoint_id).toBe(two.id);
    await ext.deleteCheckpoint(s.id, one.id);
  });
});

describe('deleting a checkpoint', () => {
  it('refuses the latest until a newer one exists, then deletes it for good', async () => {
    const store = await freshStore(client, 'delete-ckpt');
    const s = session();
    const one = await ext.checkpoint(store.id, bundle(s));
    await expectApiError(ext.deleteCheckpoint(store.id, one.id), 409, 'conflict_error');
    const two = await ext.checkpoint(store.id, bundle(s));
    expect(await ext.deleteCheckpoint(store.id, one.id)).toEqual({ id: one.id, type: 'checkpoint_deleted' });
    await expectApiError(ext.getCheckpoint(store.id, one.id), 404, 'not_found_error');
    await expectApiError(ext.restore(store.id, one.id), 404, 'not_found_error');
    await expectApiError(ext.deleteCheckpoint(store.id, one.id), 404, 'not_found_error');
    const three = await ext.checkpoint(store.id, bundle(s));
    expect(three.id).not.toBe(one.id);
    expect(three.revision).toBe(3);
    await expectApiError(ext.deleteCheckpoint(store.id, three.id), 409, 'conflict_error');
    expect((await ext.getCheckpoint(store.id, two.id)).is_latest).toBe(false);
  });

  it('answers 404 for a checkpoint of another store', async () => {
    const a = await freshStore(client, 'a');
    const b = await freshStore(client, 'b');
    const c = await ext.checkpoint(a.id, bundle(session()));
    await expectApiError(ext.getCheckpoint(b.id, c.id), 404, 'not_found_error');
    await expectApiError(ext.deleteCheckpoint(b.id, c.id), 404, 'not_found_error');
  });
});

describe('checkpoint validation', () => {
  let store: Store;
  beforeAll(async () => {
    store = await freshStore(client, 'limits');
  });
  const ref = (i: number) => ({ path: `/r/${i}.md`, content_sha256: sha256(String(i)) });

  it('accepts a 16 KiB capsule and refuses one byte more', async () => {
    await ext.checkpoint(store.id, bundle(session(), { capsule: 'x'.repeat(16 * 1024) }));
    const err = await expectApiError(ext.checkpoint(store.id, bundle(session(), { capsule: 'x'.repeat(16 * 1024 + 1) })), 400, 'invalid_request_error');
    expect(err.message).toMatch(/capsule.*16384 bytes/);
  });

  it('counts the capsule in bytes, not characters', async () => {
    await expectApiError(ext.checkpoint(store.id, bundle(session(), { capsule: 'é'.repeat(8 * 1024 + 1) })), 400, 'invalid_request_error');
  });

  it('accepts 64 references and refuses 65', async () => {
    await ext.checkpoint(store.id, bundle(session(), { references: Array.from({ length: 64 }, (_, i) => ref(i)) }));
    const err = await expectApiError(
      ext.checkpoint(store.id, bundle(session(), { references: Array.from({ length: 65 }, (_, i) => ref(i)) })),
      400, 'invalid_request_error',
    );
    expect(err.message).toContain('at most 64 references');
  });

  it.each([
    ['a missing goal', { agent_id: 'a', session_id: 's' }, 'goal'],
    ['a blank goal', { agent_id: 'a', session_id: 's', goal: '  ' }, 'goal'],
    ['an agent id with a slash', { agent_id: 'a/b', session_id: 's', goal: 'g' }, 'agent_id'],
    ['an empty session id', { agent_id: 'a', session_id: '', goal: 'g' }, 'session_id'],
    ['an unknown field', { agent_id: 'a', session_id: 's', goal: 'g', mood: 'ok' }, 'mood'],
    ['constraints that are not strings', { agent_id: 'a', session_id: 's', goal: 'g', constraints: [1] }, 'constraints'],
    ['a reference naming no memory', { agent_id: 'a', session_id: 's', goal: 'g', references: [{ content_sha256: sha256('x') }] }, 'memory_id or path'],
    ['a reference without sha or version', { agent_id: 'a', session_id: 's', goal: 'g', references: [{ path: '/a' }] }, 'content_sha256 or memory_version_id'],
    ['a reference with a bad path', { agent_id: 'a', session_id: 's', goal: 'g', references: [{ path: 'rel', content_sha256: sha256('x') }] }, 'references.0.path'],
    ['a reference with a bad sha', { agent_id: 'a', session_id: 's', goal: 'g', references: [{ path: '/a', content_sha256: 'ABC' }] }, 'content_sha256'],
    ['a reference with a version id that is not one', { agent_id: 'a', session_id: 's', goal: 'g', references: [{ path: '/a', memory_version_id: 'memver_bogus' }] }, 'references.0.memory_version_id: must be a memory version id (memver_…)'],
    ['a reference with a memory id for a version id', { agent_id: 'a', session_id: 's', goal: 'g', references: [{ path: '/a', memory_version_id: 'mem_0123456789ABCDEFabcdefgh' }] }, 'references.0.memory_version_id'],
    ['a reference with a memory id that is not one', { agent_id: 'a', session_id: 's', goal: 'g', references: [{ memory_id: 'mem_bogus', content_sha256: sha256('x') }] }, 'references.0.memory_id: must be a memory id (mem_…)'],
    ['a reference with a version id for a memory id', { agent_id: 'a', session_id: 's', goal: 'g', references: [{ memory_id: 'memver_0123456789ABCDEFabcdefgh', content_sha256: sha256('x') }] }, 'references.0.memory_id'],
    ['a reference with a store id for a memory id', { agent_id: 'a', session_id: 's', goal: 'g', references: [{ memory_id: 'memstore_0123456789ABCDEFabcdefgh', content_sha256: sha256('x') }] }, 'references.0.memory_id'],
  ])('refuses %s with 400', async (_name, body, mention) => {
    const err = await expectApiError(ext.checkpoint(store.id, body as CheckpointBody), 400, 'invalid_request_error');
    expect(err.message).toContain(mention);
  });

  it('refuses a bundle over MNEMO_CHECKPOINT_MAX_BYTES, naming both sizes', async () => {
    const small = await startServer({ env: { MNEMO_CHECKPOINT_MAX_BYTES: '4096' } });
    try {
      const c = sdkClient(small.url, small.adminKey);
      const s = await freshStore(c, 'small');
      await extensions(c).checkpoint(s.id, bundle('s', { summary: 'y'.repeat(3000) }));
      const err = await expectApiError(extensions(c).checkpoint(s.id, bundle('s', { summary: 'y'.repeat(5000) })), 400, 'invalid_request_error');
      expect(err.message).toMatch(/checkpoint bundle is \d+ bytes; this server accepts at most 4096/);
    } finally {
      await small.stop();
    }
  });
});

describe('restoring a checkpoint', () => {
  let store: Store;
  beforeAll(async () => {
    store = await freshStore(client, 'restore');
  });

  it('refuses max_bytes outside 512 B to 1.25 MiB', async () => {
    const c = await ext.checkpoint(store.id, bundle(session()));
    for (const max_bytes of [511, 1024 * 1024 + 64 * 4096 + 1, 1.5]) {
      const err = await expectApiError(ext.restore(store.id, c.id, { max_bytes }), 400, 'invalid_request_error');
      expect(err.message).toContain('max_bytes');
    }
    expect((await ext.restore(store.id, c.id, { max_bytes: 512 })).max_bytes).toBe(512);
    expect((await ext.restore(store.id, c.id)).max_bytes).toBe(32 * 1024);
  });

  it('leaves out the summary and notes before any essential field, and says so', async () => {
    const c = await ext.checkpoint(store.id, bundle(session(), {
      summary: 's'.repeat(4000),
      constraints: ['c1', 'c2'],
      decisions: ['d1'],
      references: [{ path: '/x.md', content_sha256: sha256('x'), note: 'n'.repeat(1000) }],
    }));
    const full = await ext.restore(store.id, c.id, { max_bytes: 8192 });
    expect(full.summary).toBe('s'.repeat(4000));
    expect(full.omitted).toEqual([]);
    const lean = await ext.restore(store.id, c.id, { max_bytes: 1024 });
    expect(lean).toMatchObject({ summary: null, omitted: ['summary', 'references.note'], constraints: ['c1', 'c2'], decisions: ['d1'] });
    expect(lean.references[0]!.note).toBeNull();
    expect(lean.size_bytes).toBeLessThanOrEqual(1024);
  });

  it('states its own size exactly, as Content-Length counts it, whatever the digits of max_bytes', async () => {
    const c = await ext.checkpoint(store.id, bundle(session(), { summary: 's'.repeat(4000), constraints: ['c1'] }));
    const restore = async (max_bytes: number) => {
      const res = await rawRequest(server.url, 'POST', `/v1/memory_stores/${store.id}/checkpoints/${c.id}/restore`, {
        apiKey: server.adminKey, body: JSON.stringify({ max_bytes }),
      });
      expect(res.status).toBe(200);
      const body = res.body as { size_bytes: number; max_bytes: number; omitted: string[] };
      expect(body.size_bytes).toBe(Number(res.headers.get('content-length')));
      expect(body.size_bytes).toBe(Buffer.byteLength(JSON.stringify(body)));
      return body;
    };
    for (const max of [8192, 32768, 100_000, 1_048_576]) expect(await restore(max)).toMatchObject({ max_bytes: max, omitted: [] });
    // The boundary: a budget exactly the full answer's size keeps everything, one byte less drops the summary.
    let exact = (await restore(8192)).size_bytes;
    for (let size = (await restore(exact)).size_bytes; size !== exact; size = (await restore(exact)).size_bytes) exact = size;
    expect(await restore(exact)).toMatchObject({ size_bytes: exact, max_bytes: exact, omitted: [] });
    expect((await restore(exact - 1)).omitted).toEqual(['summary']);
  });

  it('fails with the size it needs when the essentials do not fit, and that size works', async () => {
    const c = await ext.checkpoint(store.id, bundle(session(), { constraints: ['k'.repeat(2000)] }));
    const err = await expectApiError(ext.restore(store.id, c.id, { max_bytes: 1024 }), 400, 'invalid_request_error');
    const needed = (err as unknown as { needed_bytes: number }).needed_bytes;
    expect(needed).toBeGreaterThan(2000);
    expect(err.message).toContain(`needs at least ${needed} bytes`);
    const r = await ext.restore(store.id, c.id, { max_bytes: needed });
    expect(r.constraints).toEqual(['k'.repeat(2000)]);
    expect(r.size_bytes).toBeLessThanOrEqual(needed);
    await expectApiError(ext.restore(store.id, c.id, { max_bytes: needed - 1 }), 400, 'invalid_request_error');
  });

  it('restores at the largest max_bytes a bundle of the largest size whose 64 references hold the longest paths', async () => {
    const refs = [];
    for (let i = 0; i < 64; i++) {
      // 1,024 bytes, each quote two as JSON: the longest `current.path` a restore can add.
      const m = await client.beta.memoryStores.memories.create(store.id, { path: `/${String(i).padStart(2, '0')}${'"'.repeat(1021)}`, content: 'v1' });
      refs.push({ memory_id: m.id, content_sha256: m.content_sha256 });
    }
    // A bundle of exactly the largest size a save accepts: a small one's size says how much to add.
    const s = session();
    const small = await ext.checkpoint(store.id, bundle(s, { constraints: ['c'], references: refs }));
    const c = await ext.checkpoint(store.id, bundle(s, { constraints: ['c'.repeat(1 + 1024 * 1024 - small.size_bytes)], references: refs }));
    expect(c.size_bytes).toBe(1024 * 1024);
    const r = await ext.restore(store.id, c.id, { max_bytes: 1024 * 1024 + 64 * 4096 });
    expect(r.references.map((x) => x.status)).toEqual(refs.map(() => 'ok'));
    expect(r.size_bytes).toBeGreaterThan(1024 * 1024);
    // The smallest max_bytes a refusal advises is one the server takes.
    const err = await expectApiError(ext.restore(store.id, c.id, { max_bytes: 1024 * 1024 }), 400, 'invalid_request_error');
    const needed = (err as unknown as { needed_bytes: number }).needed_bytes;
    expect((await ext.restore(store.id, c.id, { max_bytes: needed })).size_bytes).toBe(needed);
  });

  // In-process, with a clock the test moves: the expiry passes without waiting for it.
  it('reports each reference as ok, changed, missing or expired', async () => {
    const { client, clock } = await inProcessApp();
    const ext = extensions(client);
    const store = await freshStore(client, 'checkpoints');
    const mem = client.beta.memoryStores.memories;
    const same = await mem.create(store.id, { path: '/ref/same.md', content: 'same' });
    const edited = await mem.create(store.id, { path: '/ref/edited.md', content: 'before' });
    const removed = await mem.create(store.id, { path: '/ref/removed.md', content: 'gone soon' });
    const fading = await client.post<{ id: string }>(`/v1/memory_stores/${store.id}/memories`, {
      body: { path: '/ref/fading.md', content: 'short-lived', ttl_seconds: 1 },
    });
    const s = session();
    await ext.checkpoint(store.id, bundle(s, {
      references: [
        { path: '/ref/same.md', content_sha256: same.content_sha256 },
        { memory_id: edited.id, memory_version_id: edited.memory_version_id },
        { path: '/ref/removed.md', content_sha256: removed.content_sha256 },
        { memory_id: fading.id, content_sha256: sha256('short-lived') },
        { path: '/ref/never.md', content_sha256: sha256('never') },
      ],
    }));
    await mem.update(edited.id, { memory_store_id: store.id, content: 'after' });
    await mem.delete(removed.id, { memory_store_id: store.id });
    clock.advance(1200);
    const r = await ext.restoreLatest(store.id, 'agent-1', s);
    expect(r.references.map((x) => x.status)).toEqual(['ok', 'changed', 'missing', 'expired', 'missing']);
    expect(r.references[1]!.current).toMatchObject({ memory_id: edited.id, content_sha256: sha256('after') });
    expect(r.references[2]!.current).toBeNull();
    // A later write purges the expired memory; the reference still reads as expired.
    await mem.create(store.id, { path: '/ref/other.md', content: 'x' });
    const again = await ext.restoreLatest(store.id, 'agent-1', s);
    expect(again.references[3]!.status).toBe('expired');
  });

  it('reports a reference whose memory_version_id was never a version of its memory as missing, with the memory as it is', async () => {
    const mem = client.beta.memoryStores.memories;
    const beta = await mem.create(store.id, { path: '/notes/beta.md', content: 'beta' });
    const gamma = await mem.create(store.id, { path: '/notes/gamma.md', content: 'gamma' });
    const s = session();
    await ext.checkpoint(store.id, bundle(s, {
      references: [
        { path: '/notes/beta.md', memory_version_id: 'memver_000000000000000000000000' },
        { path: '/notes/beta.md', memory_version_id: gamma.memory_version_id },
        { path: '/notes/beta.md', memory_version_id: beta.memory_version_id },
      ],
    }));
    await mem.update(beta.id, { memory_store_id: store.id, content: 'beta, edited' });
    const r = await ext.restoreLatest(store.id, 'agent-1', s);
    expect(r.references.map((x) => x.status)).toEqual(['missing', 'missing', 'changed']);
    for (const x of r.references) expect(x.current).toMatchObject({ memory_id: beta.id, path: '/notes/beta.md', content_sha256: sha256('beta, edited') });
  });

  it("reports a reference whose memory_id no memory of the store has (another store's, or never made) as missing", async () => {
    const elsewhere = await freshStore(client, 'checkpoints elsewhere');
    const foreign = await client.beta.memoryStores.memories.create(elsewhere.id, { path: '/notes/foreign.md', content: 'foreign' });
    const s = session();
    await ext.checkpoint(store.id, bundle(s, {
      references: [
        { memory_id: foreign.id, content_sha256: foreign.content_sha256 },
        { memory_id: 'mem_000000000000000000000000', memory_version_id: foreign.memory_version_id },
      ],
    }));
    const r = await ext.restoreLatest(store.id, 'agent-1', s);
    expect(r.references.map((x) => [x.status, x.current])).toEqual([['missing', null], ['missing', null]]);
  });

  it('restores the latest by agent and session, and 404s for an unknown session', async () => {
    const s = session();
    await ext.checkpoint(store.id, bundle(s, { goal: 'first' }));
    await ext.checkpoint(store.id, bundle(s, { goal: 'second' }));
    expect((await ext.restoreLatest(store.id, 'agent-1', s)).goal).toBe('second');
    await expectApiError(ext.restoreLatest(store.id, 'agent-1', 'no-such-session'), 404, 'not_found_error');
    await expectApiError(ext.latest(store.id, 'agent-1', 'no-such-session'), 404, 'not_found_error');
  });
});

describe('checkpoint permissions', () => {
  it('lets a read_only key restore but not save or delete, and hides other stores from a scoped key', async () => {
    const store = await freshStore(client, 'perm');
    const other = await freshStore(client, 'perm-other');
    const s = session();
    const one = await ext.checkpoint(store.id, bundle(s));
    await ext.checkpoint(store.id, bundle(s));
    const minted = await client.post<{ secret: string }>('/v1/api_keys', {
      body: { name: 'reader', role: 'read_only', memory_store_ids: [store.id] },
    });
    const reader = extensions(sdkClient(server.url, minted.secret));
    expect((await reader.restoreLatest(store.id, 'agent-1', s)).revision).toBe(2);
    await expectApiError(reader.checkpoint(store.id, bundle(s)), 403, 'permission_error');
    await expectApiError(reader.deleteCheckpoint(store.id, one.id), 403, 'permission_error');
    await expectApiError(reader.latest(other.id, 'agent-1', s), 404, 'not_found_error');
  });
});
