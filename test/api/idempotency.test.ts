/**
 * Idempotency-Key on every mutating route, against the real server: a retry replays the first
 * answer (even after a restart, and after the memory changed or was deleted), the same key on a
 * different request is 409 idempotency_conflict, failures do not consume the key, 20 concurrent
 * retries make one mutation, receipts expire after the configured period (issue 4), and a deleted
 * store's receipts replay no more and leave the database with its rows.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type Anthropic from '@anthropic-ai/sdk';
import Database from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { databaseFor, onPostgres } from '../helpers/engine.js';
import { inProcessApp } from '../helpers/in-process.js';
import { eventually } from '../helpers/mount.js';
import { expectRawError, rawRequest, type RawResponse, sdkClient, useServer } from '../helpers/sdk.js';
import { makeTempDir, runCli, startServer, type RunningServer } from '../helpers/server.js';
import { collect } from './shapes.js';

let server: RunningServer;
let client: Anthropic;

useServer((s, c) => {
  server = s;
  client = c;
});

function send(method: string, path: string, key: string | null, body?: unknown, apiKey = server.adminKey, url = server.url): Promise<RawResponse> {
  return rawRequest(url, method, path, {
    apiKey,
    headers: key === null ? {} : { 'idempotency-key': key },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
}

/** How many receipts in the server's database hold `text` in their stored answer, read by a connection of the test's own. */
async function receiptsHolding(text: string): Promise<number> {
  const sql = "SELECT count(*) AS n FROM idempotency_receipts WHERE body LIKE '%' || $1 || '%'";
  if (onPostgres()) {
    const c = new pg.Client({ connectionString: await databaseFor(server.dataDir) });
    await c.connect();
    try {
      return Number((await c.query<{ n: string }>(sql, [text])).rows[0]!.n);
    } finally {
      await c.end();
    }
  }
  const db = new Database(join(server.dataDir, 'mnemo.db'), { readonly: true });
  try {
    return db.prepare(sql.replace('$1', '?')).pluck().get(text) as number;
  } finally {
    db.close();
  }
}

const versionCount = async (storeId: string) => (await collect(client.beta.memoryStores.memoryVersions.list(storeId, { limit: 100 }))).length;

describe('idempotency keys', () => {
  it("the SDK's idempotencyKey option sends no header (each call is a new write), and headers: {'Idempotency-Key'} replays", async () => {
    const store = await client.beta.memoryStores.create({ name: 'idem-sdk' });
    const body = { path: '/sdk.md', content: 'once' };
    const key = randomUUID();
    // As the README says: @anthropic-ai/sdk has the option, but this client sends no header for it,
    // so the retry is a new create of a taken path (409), not a replay.
    await client.beta.memoryStores.memories.create(store.id, body, { idempotencyKey: key });
    await expect(client.beta.memoryStores.memories.create(store.id, body, { idempotencyKey: key })).rejects.toMatchObject({ status: 409 });
    const other = await client.beta.memoryStores.create({ name: 'idem-sdk-headers' });
    const headerKey = randomUUID();
    const first = await client.beta.memoryStores.memories.create(other.id, body, { headers: { 'Idempotency-Key': headerKey } });
    const again = await client.beta.memoryStores.memories.create(other.id, body, { headers: { 'Idempotency-Key': headerKey } });
    expect(again).toEqual(first);
    expect(await versionCount(other.id)).toBe(1);
  });

  it('a retry of a memory create replays the first status and body with idempotent-replayed, and adds no version', async () => {
    const store = await client.beta.memoryStores.create({ name: 'idem-create' });
    const key = randomUUID();
    const first = await send('POST', `/v1/memory_stores/${store.id}/memories`, key, { path: '/a.md', content: 'one' });
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await send('POST', `/v1/memory_stores/${store.id}/memories`, key, { path: '/a.md', content: 'one' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await versionCount(store.id)).toBe(1);
  });

  it('treats key order and whitespace in the body as the same request', async () => {
    const store = await client.beta.memoryStores.create({ name: 'idem-normalise' });
    const key = randomUUID();
    const first = await send('POST', `/v1/memory_stores/${store.id}/memories`, key, '{"path":"/n.md","content":"x"}');
    const again = await send('POST', `/v1/memory_stores/${store.id}/memories`, key, '{ "content" : "x",\n "path": "/n.md" }');
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await versionCount(store.id)).toBe(1);
  });

  it('the same key with a different request is 409 idempotency_conflict and changes nothing', async () => {
    const store = await client.beta.memoryStores.create({ name: 'idem-conflict' });
    const key = randomUUID();
    await send('POST', `/v1/memory_stores/${store.id}/memories`, key, { path: '/a.md', content: 'one' });
    const other = await send('POST', `/v1/memory_stores/${store.id}/memories`, key, { path: '/a.md', content: 'two' });
    expectRawError(other, 409, 'idempotency_conflict');
    const query = await send('POST', `/v1/memory_stores/${store.id}/memories?view=full`, key, { path: '/a.md', content: 'one' });
    expectRawError(query, 409, 'idempotency_conflict');
    expect(await versionCount(store.id)).toBe(1);
  });

  it('replays after the memory was changed and deleted, without undoing either', async () => {
    const store = await client.beta.memoryStores.create({ name: 'idem-later' });
    const m = await client.beta.memoryStores.memories.create(store.id, { path: '/a.md', content: 'v1' });
    const key = randomUUID();
    const update = { content: 'v2' };
    const first = await send('POST', `/v1/memory_stores/${store.id}/memories/${m.id}`, key, update);
    expect(first.status).toBe(200);
    await client.beta.memoryStores.memories.update(m.id, { memory_store_id: store.id, content: 'v3' });
    const afterChange = await send('POST', `/v1/memory_stores/${store.id}/memories/${m.id}`, key, update);
    expect(afterChange.body).toEqual(first.body);
    await client.beta.memoryStores.memories.delete(m.id, { memory_store_id: store.id });
    const afterDelete = await send('POST', `/v1/memory_stores/${store.id}/memories/${m.id}`, key, update);
    expect(afterDelete.status).toBe(200);
    expect(afterDelete.body).toEqual(first.body);
    expect(await versionCount(store.id)).toBe(4);
  });

  it('a request that fails validation or a precondition does not consume the key', async () => {
    const store = await client.beta.memoryStores.create({ name: 'idem-failures' });
    const m = await client.beta.memoryStores.memories.create(store.id, { path: '/a.md', content: 'v1' });
    const key = randomUUID();
    const bad = await send('POST', `/v1/memory_stores/${store.id}/memories`, key, { path: 'no-slash', content: 'x' });
    expectRawError(bad, 400, 'invalid_request_error');
    const ok = await send('POST', `/v1/memory_stores/${store.id}/memories`, key, { path: '/b.md', content: 'x' });
    expect(ok.status).toBe(200);

    const key2 = randomUUID();
    const stale = { content: 'v2', precondition: { type: 'content_sha256', content_sha256: '0'.repeat(64) } };
    expectRawError(await send('POST', `/v1/memory_stores/${store.id}/memories/${m.id}`, key2, stale), 409, 'memory_precondition_failed_error');
    const fresh = { content: 'v2', precondition: { type: 'content_sha256', content_sha256: m.content_sha256 } };
    expect((await send('POST', `/v1/memory_stores/${store.id}/memories/${m.id}`, key2, fresh)).status).toBe(200);

    const key3 = randomUUID();
    expectRawError(await send('POST', `/v1/memory_stores/${store.id}/memories`, key3, { path: '/b.md', content: 'taken' }), 409, 'memory_path_conflict_error');
    expect((await send('POST', `/v1/memory_stores/${store.id}/memories`, key3, { path: '/c.md', content: 'free' })).status).toBe(200);
  });

  it('refuses an empty, over-long or control-character key with 400 and no mutation', async () => {
    const store = await client.beta.memoryStores.create({ name: 'idem-header' });
    for (const key of ['', 'x'.repeat(257), 'a\tb', 'é'.repeat(129)]) {
      const res = await send('POST', `/v1/memory_stores/${store.id}/memories`, key, { path: '/a.md', content: 'x' });
      expectRawError(res, 400, 'invalid_request_error');
    }
    expect((await send('POST', `/v1/memory_stores/${store.id}/memories`, 'k'.repeat(256), { path: '/a.md', content: 'x' })).status).toBe(200);
    expect(await versionCount(store.id)).toBe(1);
  });

  it('scopes receipts by API key and route: the same key elsewhere is a new request', async () => {
    const store = await client.beta.memoryStores.create({ name: 'idem-scope' });
    const made = await runCli(['keys', 'create', '--role', 'read_write', '--data-dir', server.dataDir]);
    expect(made.code, made.stderr).toBe(0);
    const other = made.stdout.trim();
    const key = randomUUID();
    const mine = await send('POST', `/v1/memory_stores/${store.id}/memories`, key, { path: '/a.md', content: 'x' });
    const theirs = await send('POST', `/v1/memory_stores/${store.id}/memories`, key, { path: '/b.md', content: 'x' }, other);
    expect([mine.status, theirs.status], JSON.stringify(theirs.body)).toEqual([200, 200]);
    const storeCreate = await send('POST', '/v1/memory_stores', key, { name: 'same key, other route' });
    expect(storeCreate.status).toBe(200);
    expect(storeCreate.headers.get('idempotent-replayed')).toBeNull();
    expect(await versionCount(store.id)).toBe(2);
  });

  it('20 concurrent retries of one key make exactly one memory and one version', async () => {
    const store = await client.beta.memoryStores.create({ name: 'idem-concurrent' });
    const key = randomUUID();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => send('POST', `/v1/memory_stores/${store.id}/memories`, key, { path: '/race.md', content: 'once' })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const ids = new Set(results.map((r) => (r.body as { id: string }).id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(19);
    expect(await versionCount(store.id)).toBe(1);

    const storeKey = randomUUID();
    const stores = await Promise.all(Array.from({ length: 20 }, () => send('POST', '/v1/memory_stores', storeKey, { name: 'once' })));
    expect(new Set(stores.map((r) => (r.body as { id: string }).id)).size).toBe(1);
  });

  it('every mutating route replays its first answer: store update/archive/delete, memory delete, redact, checkpoint save/delete', async () => {
    const ms = client.beta.memoryStores;
    const store = await ms.create({ name: 'idem-routes' });
    const m = await ms.memories.create(store.id, { path: '/s.md', content: 'secret' });
    await ms.memories.update(m.id, { memory_store_id: store.id, content: 'rotated' });
    const checkpoint = { agent_id: 'agent', session_id: 'sess', goal: 'g' };
    const older = (await send('POST', `/v1/memory_stores/${store.id}/checkpoints`, null, checkpoint)).body as { id: string };
    const calls: [string, string, unknown][] = [
      // The latest checkpoint cannot be deleted: the save below makes `older` deletable.
      ['POST', `/v1/memory_stores/${store.id}/checkpoints`, checkpoint],
      ['DELETE', `/v1/memory_stores/${store.id}/checkpoints/${older.id}`, undefined],
      ['POST', `/v1/memory_stores/${store.id}`, { name: 'renamed' }],
      ['POST', `/v1/memory_stores/${store.id}/memory_versions/${m.memory_version_id}/redact`, undefined],
      ['DELETE', `/v1/memory_stores/${store.id}/memories/${m.id}`, undefined],
      ['POST', `/v1/memory_stores/${store.id}/archive`, undefined],
      ['DELETE', `/v1/memory_stores/${store.id}`, undefined],
    ];
    for (const [method, path, body] of calls) {
      const key = randomUUID();
      const first = await send(method, path, key, body);
      expect(first.status, `${method} ${path}: ${JSON.stringify(first.body)}`).toBe(200);
      const again = await send(method, path, key, body);
      expect(again.status, `${method} ${path}`).toBe(200);
      // A redaction's count and list of the versions still holding its text are read after the commit
      // and kept out of the receipt (README, "Content stored once"): its replay answers with the version alone.
      expect(again.body).toEqual(path.endsWith('/redact') ? { ...(first.body as object), content_still_held_by: undefined, content_still_held_in: undefined } : first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    }
    // The store is gone, yet its delete (and everything before it) still replays.
    expect((await send('GET', `/v1/memory_stores/${store.id}`, null)).status).toBe(404);
  });

  it("a deleted store's receipts are not replayed: each retry answers as a new request would, and the receipts leave the database", async () => {
    const ms = client.beta.memoryStores;
    const storeKey = randomUUID();
    const doomed = (await send('POST', '/v1/memory_stores', storeKey, { name: 'idem-doomed' })).body as { id: string };
    const kept = await ms.create({ name: 'idem-kept' });
    const m = await ms.memories.create(doomed.id, { path: '/m.md', content: 'v1' });
    const gone = await ms.memories.create(doomed.id, { path: '/gone.md', content: 'x' });
    const calls: [string, string, unknown][] = [
      ['POST', `/v1/memory_stores/${doomed.id}/memories?view=full`, { path: '/sd.md', content: 'DELSTORETEXT' }],
      ['POST', `/v1/memory_stores/${doomed.id}/memories/${m.id}?view=full`, { content: 'DELSTORETEXT v2' }],
      ['DELETE', `/v1/memory_stores/${doomed.id}/memories/${gone.id}`, undefined],
      ['POST', `/v1/memory_stores/${doomed.id}/checkpoints`, { agent_id: 'agent', session_id: 'sess', goal: 'DELSTORETEXT goal' }],
      ['POST', `/v1/memory_stores/${doomed.id}`, { description: 'DELSTORETEXT description' }],
    ];
    const keys = calls.map(() => randomUUID());
    for (const [i, [method, path, body]] of calls.entries()) expect((await send(method, path, keys[i]!, body)).status, `${method} ${path}`).toBe(200);
    const keptKey = randomUUID();
    const keptFirst = await send('POST', `/v1/memory_stores/${kept.id}/memories?view=full`, keptKey, { path: '/kept.md', content: 'KEPTTEXT' });
    const deleteKey = randomUUID();
    const deleted = await send('DELETE', `/v1/memory_stores/${doomed.id}`, deleteKey);
    expect(deleted.status).toBe(200);

    for (const [i, [method, path, body]] of calls.entries()) {
      const retry = await send(method, path, keys[i]!, body);
      expectRawError(retry, 404, 'not_found_error');
      expect(retry.headers.get('idempotent-replayed'), `${method} ${path}`).toBeNull();
      expect(JSON.stringify(retry.body)).not.toContain('DELSTORETEXT');
    }
    // The store's create is answered as a new create: another store, not the deleted one.
    const recreated = await send('POST', '/v1/memory_stores', storeKey, { name: 'idem-doomed' });
    expect(recreated.status).toBe(200);
    expect(recreated.headers.get('idempotent-replayed')).toBeNull();
    expect((recreated.body as { id: string }).id).not.toBe(doomed.id);
    // The delete's own answer names no content: its retry still replays, and other stores' receipts are untouched.
    const deleteAgain = await send('DELETE', `/v1/memory_stores/${doomed.id}`, deleteKey);
    expect(deleteAgain.headers.get('idempotent-replayed')).toBe('true');
    expect(deleteAgain.body).toEqual(deleted.body);
    const keptAgain = await send('POST', `/v1/memory_stores/${kept.id}/memories?view=full`, keptKey, { path: '/kept.md', content: 'KEPTTEXT' });
    expect(keptAgain.headers.get('idempotent-replayed')).toBe('true');
    expect(keptAgain.body).toEqual(keptFirst.body);

    expect(await eventually(async () => {
      const held = await receiptsHolding('DELSTORETEXT');
      if (held !== 0) throw new Error(`${held} receipts still hold the deleted store's text`);
      return held;
    }, 15_000)).toBe(0);
    expect(await receiptsHolding('KEPTTEXT')).toBe(1);
  });

  it("a session create's receipt answers its own store only, and goes with that store's delete", async () => {
    const first = await client.beta.memoryStores.create({ name: 'idem-session-a' });
    const other = await client.beta.memoryStores.create({ name: 'idem-session-b' });
    const key = randomUUID();
    const resources = (storeId: string) => ({ resources: [{ type: 'memory_store', memory_store_id: storeId, access: 'read_only' }] });
    const created = await send('POST', '/v1/sessions', key, resources(first.id));
    expect(created.status).toBe(200);
    const session = created.body as { id: string };
    const again = await send('POST', '/v1/sessions', key, resources(first.id));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(created.body);
    expectRawError(await send('POST', '/v1/sessions', key, resources(other.id)), 409, 'idempotency_conflict');

    expect((await send('DELETE', `/v1/sessions/${session.id}`, null)).status).toBe(200);
    expect((await send('DELETE', `/v1/memory_stores/${first.id}`, null)).status).toBe(200);
    const retry = await send('POST', '/v1/sessions', key, resources(first.id));
    expectRawError(retry, 404, 'not_found_error');
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a request without a key is not deduplicated', async () => {
    const a = await send('POST', '/v1/memory_stores', null, { name: 'no key' });
    const b = await send('POST', '/v1/memory_stores', null, { name: 'no key' });
    expect((a.body as { id: string }).id).not.toBe((b.body as { id: string }).id);
  });
});

describe('idempotency receipts across restarts and expiry', () => {
  it('replays after a SIGTERM restart and after kill -9', async () => {
    const dataDir = makeTempDir('mnemo-idem-restart-');
    try {
      let s = await startServer({ dataDir });
      const env = { MNEMO_ADMIN_KEY: s.adminKey };
      const c = sdkClient(s.url, s.adminKey);
      const store = await c.beta.memoryStores.create({ name: 'restart' });
      const key = randomUUID();
      const first = await send('POST', `/v1/memory_stores/${store.id}/memories`, key, { path: '/a.md', content: 'x' }, s.adminKey, s.url);
      await s.stop();
      s = await startServer({ dataDir, env });
      const afterStop = await send('POST', `/v1/memory_stores/${store.id}/memories`, key, { path: '/a.md', content: 'x' }, s.adminKey, s.url);
      expect(afterStop.body).toEqual(first.body);
      expect(afterStop.headers.get('idempotent-replayed')).toBe('true');
      const key2 = randomUUID();
      const second = await send('POST', `/v1/memory_stores/${store.id}/memories`, key2, { path: '/b.md', content: 'y' }, s.adminKey, s.url);
      await s.kill9();
      s = await startServer({ dataDir, env });
      const afterKill = await send('POST', `/v1/memory_stores/${store.id}/memories`, key2, { path: '/b.md', content: 'y' }, s.adminKey, s.url);
      expect(afterKill.body).toEqual(second.body);
      expect((await collect(sdkClient(s.url, s.adminKey).beta.memoryStores.memoryVersions.list(store.id))).length).toBe(2);
      await s.stop();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('a receipt kept under a 24 h retention replays no more once a restart lowers MNEMO_IDEMPOTENCY_TTL_SECONDS below its age', async () => {
    const dataDir = makeTempDir('mnemo-idem-ttl-');
    try {
      let s = await startServer({ dataDir });
      const key = randomUUID();
      const create = () => send('POST', '/v1/memory_stores', key, { name: 'kept a day' }, s.adminKey, s.url);
      const first = await create();
      const madeAt = Date.now();
      expect((await create()).headers.get('idempotent-replayed')).toBe('true');
      await s.stop();
      s = await startServer({ dataDir, env: { MNEMO_ADMIN_KEY: s.adminKey, MNEMO_IDEMPOTENCY_TTL_SECONDS: '1' } });
      // The receipt is over a second old: under the retention now in force it has expired.
      await new Promise((r) => setTimeout(r, Math.max(0, madeAt + 1500 - Date.now())));
      const later = await create();
      expect(later.status).toBe(200);
      expect(later.headers.get('idempotent-replayed')).toBeNull();
      expect((later.body as { id: string }).id).not.toBe((first.body as { id: string }).id);
      await s.stop();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  // In-process, with a clock the test moves: the retention period passes without waiting for it.
  it('after the retention period a receipt is gone and the key makes a new request', async () => {
    const { client: c, clock, raw } = await inProcessApp({ idempotencyTtlSeconds: 1 });
    const key = randomUUID();
    const post = () => raw('POST', '/v1/memory_stores', { headers: { 'idempotency-key': key }, body: JSON.stringify({ name: 'short-lived' }) });
    const first = await post();
    const replay = await post();
    expect(replay.body).toEqual(first.body);
    clock.advance(1500);
    const later = await post();
    expect(later.status).toBe(200);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect((later.body as { id: string }).id).not.toBe((first.body as { id: string }).id);
    expect((await collect(c.beta.memoryStores.list())).length).toBe(2);
  });

  it("the server's receipt purge removes receipts past their retention and keeps the others", async () => {
    const { clock, raw, idempotency } = await inProcessApp({ idempotencyTtlSeconds: 60 });
    const post = (key: string, name: string) => raw('POST', '/v1/memory_stores', { headers: { 'idempotency-key': key }, body: JSON.stringify({ name }) });
    await post(randomUUID(), 'old');
    clock.advance(30_000);
    const kept = randomUUID();
    const young = await post(kept, 'young');
    expect(await idempotency.purge()).toBe(0);
    clock.advance(31_000);
    expect(await idempotency.purge()).toBe(1);
    const replay = await post(kept, 'young');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(young.body);
  });
});
