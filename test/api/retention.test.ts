/**
 * Retention (issue 15) in-process, with a clock the test moves and the upkeep's prune called as the
 * server's timer would: the store setting, which versions go (age, keep_last, both), what is never
 * pruned (a live head, a checkpoint's reference), the prunes in the change feed, and the bytes gone
 * from the file.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { expectRawError } from '../helpers/sdk.js';
import { inProcessApp, type InProcessApp } from '../helpers/in-process.js';

const DAY = 86_400_000;

interface WireStore {
  id: string;
  retention?: { max_age_days: number | null; keep_last: number | null };
}

async function createStore(app: InProcessApp, body: Record<string, unknown>): Promise<WireStore> {
  const res = await app.raw('POST', '/v1/memory_stores', { body: JSON.stringify({ name: 'kept', ...body }) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as WireStore;
}

async function history(app: InProcessApp, storeId: string, memoryId: string): Promise<string[]> {
  const page = await app.client.beta.memoryStores.memoryVersions.list(storeId, { memory_id: memoryId, limit: 100 });
  return page.data.map((v) => v.id);
}

/** Writes `n` versions of one memory, a day apart; returns the memory id and its version ids oldest first. */
async function writeVersions(app: InProcessApp, storeId: string, path: string, n: number): Promise<{ id: string; versions: string[] }> {
  const ms = app.client.beta.memoryStores.memories;
  const m = await ms.create(storeId, { path, content: `${path} v1` });
  const versions = [m.memory_version_id];
  for (let i = 2; i <= n; i++) {
    app.clock.advance(DAY);
    versions.push((await ms.update(m.id, { memory_store_id: storeId, content: `${path} v${i}` })).memory_version_id);
  }
  return { id: m.id, versions };
}

describe('retention settings', () => {
  it('is set on create and update, shown on the store, and cleared with null; stores without it show none', async () => {
    const app = await inProcessApp();
    const plain = await createStore(app, {});
    expect(plain).not.toHaveProperty('retention');
    const s = await createStore(app, { retention: { keep_last: 3 } });
    expect(s.retention).toEqual({ max_age_days: null, keep_last: 3 });
    const updated = await app.raw('POST', `/v1/memory_stores/${s.id}`, { body: JSON.stringify({ retention: { max_age_days: 30, keep_last: 2 } }) });
    expect((updated.body as WireStore).retention).toEqual({ max_age_days: 30, keep_last: 2 });
    const renamed = await app.raw('POST', `/v1/memory_stores/${s.id}`, { body: JSON.stringify({ name: 'still kept' }) });
    expect((renamed.body as WireStore).retention).toEqual({ max_age_days: 30, keep_last: 2 });
    const cleared = await app.raw('POST', `/v1/memory_stores/${s.id}`, { body: JSON.stringify({ retention: null }) });
    expect(cleared.body).not.toHaveProperty('retention');
    expect((await app.raw('GET', `/v1/memory_stores/${s.id}`)).body).not.toHaveProperty('retention');
  });

  it('refuses a retention without a rule, or with a rule out of range, with 400', async () => {
    const app = await inProcessApp();
    for (const retention of [{}, { max_age_days: 0 }, { keep_last: -1 }, { keep_last: 1.5 }, { max_age_days: '7' }, { forever: true }, 'week']) {
      expectRawError(await app.raw('POST', '/v1/memory_stores', { body: JSON.stringify({ name: 'bad', retention }) }), 400, 'invalid_request_error');
    }
  });
});

describe('retention pruning', () => {
  it('keep_last keeps each memory\'s newest versions, a deleted memory\'s too, and never a live head', async () => {
    const app = await inProcessApp();
    const s = await createStore(app, { retention: { keep_last: 2 } });
    const a = await writeVersions(app, s.id, '/a.md', 5);
    const b = await writeVersions(app, s.id, '/b.md', 3);
    await app.client.beta.memoryStores.memories.delete(b.id, { memory_store_id: s.id });
    const one = await writeVersions(app, s.id, '/one.md', 1);
    expect(await app.service.pruneHistory()).toBe(3 + 2);
    expect(await app.service.pruneHistory()).toBe(0);
    expect(await history(app, s.id, a.id)).toEqual([a.versions[4], a.versions[3]]);
    const bLeft = await history(app, s.id, b.id);
    expect(bLeft).toHaveLength(2);
    expect(bLeft[1]).toBe(b.versions[2]);
    expect(await history(app, s.id, one.id)).toEqual(one.versions);
    const mem = await app.client.beta.memoryStores.memories.retrieve(a.id, { memory_store_id: s.id });
    expect(mem.content).toBe('/a.md v5');
    expectRawError(await app.raw('GET', `/v1/memory_stores/${s.id}/memory_versions/${a.versions[0]}`), 404, 'not_found_error');
  });

  it('max_age_days prunes versions older than that, but not a head however old; with keep_last too, a version goes only when both let it', async () => {
    const app = await inProcessApp();
    const aged = await createStore(app, { retention: { max_age_days: 2 } });
    const both = await createStore(app, { retention: { max_age_days: 2, keep_last: 4 } });
    const c = await writeVersions(app, both.id, '/c.md', 5);
    app.clock.advance(DAY);
    const a = await writeVersions(app, aged.id, '/a.md', 5);
    const old = await writeVersions(app, aged.id, '/old.md', 1);
    // Versions 3 days old and more go; v3 (2 days) is not older than two days.
    await app.service.pruneHistory();
    expect(await history(app, aged.id, a.id)).toEqual([a.versions[4], a.versions[3], a.versions[2]]);
    expect(await history(app, aged.id, old.id)).toEqual(old.versions);
    // keep_last 4 holds v2 back although it is old: only v1 goes.
    expect(await history(app, both.id, c.id)).toEqual([...c.versions].reverse().slice(0, 4));
    app.clock.advance(30 * DAY);
    await app.service.pruneHistory();
    expect(await history(app, aged.id, a.id)).toEqual([a.versions[4]]);
    expect(await history(app, both.id, c.id)).toEqual([...c.versions].reverse().slice(0, 4));
  });

  it('never prunes a version a checkpoint references, until that checkpoint is deleted', async () => {
    const app = await inProcessApp();
    const s = await createStore(app, { retention: { keep_last: 1 } });
    const a = await writeVersions(app, s.id, '/a.md', 3);
    const ckpt = (body: Record<string, unknown>) => app.raw('POST', `/v1/memory_stores/${s.id}/checkpoints`, { body: JSON.stringify({ agent_id: 'agent', session_id: 'sess', goal: 'g', ...body }) });
    const first = await ckpt({ references: [{ memory_id: a.id, memory_version_id: a.versions[0] }] });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    // A newer checkpoint, so the first is no longer the latest and may be deleted.
    expect((await ckpt({})).status).toBe(200);
    await app.service.pruneHistory();
    expect(await history(app, s.id, a.id)).toEqual([a.versions[2], a.versions[0]]);
    const del = await app.raw('DELETE', `/v1/memory_stores/${s.id}/checkpoints/${(first.body as { id: string }).id}`);
    expect(del.status, JSON.stringify(del.body)).toBe(200);
    await app.service.pruneHistory();
    expect(await history(app, s.id, a.id)).toEqual([a.versions[2]]);
  });

  it('keeps a version an idempotency receipt answers with until the receipt expires', async () => {
    const app = await inProcessApp();
    const s = await createStore(app, { retention: { keep_last: 1 } });
    const created = await app.raw('POST', `/v1/memory_stores/${s.id}/memories`, {
      headers: { 'idempotency-key': 'first-write' }, body: JSON.stringify({ path: '/r.md', content: 'one' }),
    });
    const m = created.body as { id: string; memory_version_id: string };
    const next = await app.client.beta.memoryStores.memories.update(m.id, { memory_store_id: s.id, content: 'two' });
    expect(await app.service.pruneHistory()).toBe(0);
    expect(await history(app, s.id, m.id)).toEqual([next.memory_version_id, m.memory_version_id]);
    app.clock.advance(25 * 60 * 60 * 1000);
    await app.idempotency.purge();
    expect(await app.service.pruneHistory()).toBe(1);
    expect(await history(app, s.id, m.id)).toEqual([next.memory_version_id]);
  });

  it('records each prune in the change feed at its own place, after the versions already there', async () => {
    const app = await inProcessApp();
    const s = await createStore(app, { retention: { keep_last: 1 } });
    const a = await writeVersions(app, s.id, '/a.md', 3);
    const before = (await app.raw('GET', `/v1/memory_stores/${s.id}/changes`)).body as { data: { cursor: string }[]; next_after: string };
    expect(before.data).toHaveLength(3);
    await app.service.pruneHistory();
    const after = (await app.raw('GET', `/v1/memory_stores/${s.id}/changes?after=${before.next_after}`)).body as { data: Record<string, unknown>[] };
    expect(after.data).toEqual(
      [a.versions[0], a.versions[1]].map((id) => ({
        cursor: expect.any(String),
        memory_version_pruned: { type: 'memory_version_pruned', memory_version_id: id, memory_id: a.id, memory_store_id: s.id, pruned_at: expect.any(String) },
      })),
    );
    // Read from the start, the feed holds the kept version and the two prunes.
    const all = (await app.raw('GET', `/v1/memory_stores/${s.id}/changes`)).body as { data: Record<string, { id?: string }>[] };
    expect(all.data.map((i) => ('memory_version' in i ? `v:${i['memory_version']!.id}` : 'pruned'))).toEqual([`v:${a.versions[2]}`, 'pruned', 'pruned']);
  });

  it('a pruned version\'s content leaves the database file and its WAL', async () => {
    const app = await inProcessApp();
    const s = await createStore(app, { retention: { keep_last: 1 } });
    const secret = `pruned-secret-${'x'.repeat(5000)}-end`;
    const ms = app.client.beta.memoryStores.memories;
    const m = await ms.create(s.id, { path: '/s.md', content: secret });
    await ms.update(m.id, { memory_store_id: s.id, content: 'nothing to see' });
    expect(await app.service.pruneHistory()).toBe(1);
    app.close();
    for (const file of [app.file, `${app.file}-wal`]) {
      if (existsSync(file)) expect(readFileSync(file).includes(Buffer.from('pruned-secret-'))).toBe(false);
    }
  });
});
