/**
 * Forks and content stored once (issue 15, item 3): POST /v1/memory_stores/{id}/fork through the
 * official SDK's raw `client.post`, in-process with a clock the test moves (so a recorded sequence
 * of writes has an instant in its middle), over a real SQLite file or, from
 * test/api/on-postgres/forks.test.ts, a real PostgreSQL database; the limits a fork must fit in,
 * through the real server restarted with lower ones.
 */
import Anthropic from '@anthropic-ai/sdk';
import Database from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openPostgresStorage } from '../../src/storage/postgres/open.js';
import { onPostgres } from '../helpers/engine.js';
import { filesUnder, holding } from '../helpers/files.js';
import { inProcessApp, type InProcessOptions, type MovableClock } from '../helpers/in-process.js';
import { createDatabase } from '../helpers/postgres.js';
import { jsonRequest, rawRequest } from '../helpers/sdk.js';
import { makeTempDir, startServer } from '../helpers/server.js';
import { rmSync } from 'node:fs';
import { collect, expectVersionShape } from './shapes.js';
import { notFound } from '../../src/domain/errors.js';
import { ABANDONED_FORK_MS, FORK_BATCH } from '../../src/service/forks.js';
import type { Caller, Store } from '../../src/domain/types.js';
import { dirname } from 'node:path';

interface WireStore {
  id: string;
  name: string;
  archived_at: string | null;
  forked_from?: { memory_store_id: string; as_of: string };
}

async function app(options: Pick<InProcessOptions, 'forks'> = {}) {
  let pgUrl: string | null = null;
  const openStorage = onPostgres()
    ? async (clock: MovableClock) => {
        const db = await createDatabase();
        onTestFinished(db.drop);
        pgUrl = db.url;
        return openPostgresStorage(db.url, { clock });
      }
    : undefined;
  const a = await inProcessApp({ ...options, ...(openStorage ? { openStorage } : {}) });
  const fork = async (storeId: string, body: Record<string, unknown>): Promise<WireStore> =>
    (await a.client.post(`/v1/memory_stores/${storeId}/fork`, { body })) as WireStore;
  return { ...a, ms: a.client.beta.memoryStores, fork, sql: sqlOn(pgUrl, a.file) };
}

/** One count from the app's database through a connection of the test's own (what no face shows: hidden forks). */
function sqlOn(pgUrl: string | null, file: string): (sqliteQuery: string, pgQuery: string) => Promise<number> {
  if (pgUrl === null) {
    const db = new Database(file, { readonly: true });
    onTestFinished(() => void db.close());
    return async (q) => Number(db.prepare(q).pluck().get());
  }
  const pool = new pg.Pool({ connectionString: pgUrl, max: 1 });
  onTestFinished(() => pool.end());
  return async (_q, q) => Number((await pool.query(q)).rows[0].n);
}

/** Every memory of a store as path → content. */
async function contents(client: Anthropic, storeId: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const m of await collect(client.beta.memoryStores.memories.list(storeId, { view: 'full' } as never))) {
    if (m.type === 'memory') out[m.path] = (m as { content: string }).content;
  }
  return out;
}

const status = async (p: Promise<unknown>) => p.then(() => 200, (e: { status?: number }) => e.status ?? 0);

describe('forks', () => {
  it('holds the source memories as they were at as_of, same paths and texts, each one created version of its own', async () => {
    const { client, ms, clock, fork } = await app();
    const source = await ms.create({ name: 'source' });
    const a = await ms.memories.create(source.id, { path: '/a.md', content: 'one' });
    const b = await ms.memories.create(source.id, { path: '/b.md', content: 'bee' });
    const c = await ms.memories.create(source.id, { path: '/dir/c.md', content: 'cee' });
    clock.advance(1000);
    const asOf = clock();
    clock.advance(1000);
    // After the instant: a change, a delete, a create, a rename.
    await ms.memories.update(a.id, { memory_store_id: source.id, content: 'two' });
    await ms.memories.delete(b.id, { memory_store_id: source.id });
    await ms.memories.create(source.id, { path: '/d.md', content: 'dee' });
    await ms.memories.update(c.id, { memory_store_id: source.id, path: '/e.md' });
    const sourceHistory = await collect(ms.memoryVersions.list(source.id, { view: 'full' } as never));

    const forked = await fork(source.id, { name: 'fork', description: 'at the instant', metadata: { k: 'v' }, as_of: asOf });
    expect(forked).toMatchObject({ type: 'memory_store', name: 'fork', description: 'at the instant', metadata: { k: 'v' }, archived_at: null });
    expect(forked.forked_from).toEqual({ memory_store_id: source.id, as_of: asOf });
    expect(await contents(client, forked.id)).toEqual({ '/a.md': 'one', '/b.md': 'bee', '/dir/c.md': 'cee' });
    const versions = await collect(ms.memoryVersions.list(forked.id, { view: 'full' } as never));
    expect(versions.map((v) => [v.operation, v.path, v.content]).sort()).toEqual([
      ['created', '/a.md', 'one'], ['created', '/b.md', 'bee'], ['created', '/dir/c.md', 'cee'],
    ]);
    for (const v of versions) expectVersionShape(v);
    // New memory ids; the source keeps its own.
    const forkedIds = new Set(versions.map((v) => v.memory_id));
    expect([a.id, b.id, c.id].some((id) => forkedIds.has(id))).toBe(false);

    // The provenance field on every route that returns the store; none on other stores.
    expect((await ms.retrieve(forked.id)) as WireStore).toMatchObject({ forked_from: { memory_store_id: source.id, as_of: asOf } });
    const listed = (await collect(ms.list())) as WireStore[];
    expect(listed.find((s) => s.id === forked.id)?.forked_from).toEqual({ memory_store_id: source.id, as_of: asOf });
    expect('forked_from' in (listed.find((s) => s.id === source.id) as object)).toBe(false);
    // The source's history is untouched.
    expect(await collect(ms.memoryVersions.list(source.id, { view: 'full' } as never))).toEqual(sourceHistory);
    expect(await contents(client, source.id)).toEqual({ '/a.md': 'two', '/d.md': 'dee', '/e.md': 'cee' });
  });

  it('defaults as_of to now, and stores no text twice: as many content rows after a fork of 450 memories as before', async () => {
    const { client, ms, clock, fork, storage } = await app();
    const source = await ms.create({ name: 'big' });
    for (let i = 0; i < 450; i++) await ms.memories.create(source.id, { path: `/n/${String(i).padStart(3, '0')}.md`, content: `note ${i % 300}` });
    clock.advance(10);
    const before = await storage.countContents();
    expect(before).toBe(300);
    const forked = await fork(source.id, { name: 'copy' });
    expect(forked.forked_from).toEqual({ memory_store_id: source.id, as_of: clock() });
    expect(await storage.countContents()).toBe(before);
    expect(await contents(client, forked.id)).toEqual(await contents(client, source.id));
    expect(await storage.domainCheck()).toEqual([]);
  });

  it('of an archived store is a live, writable store', async () => {
    const { client, ms, fork } = await app();
    const source = await ms.create({ name: 'old' });
    await ms.memories.create(source.id, { path: '/keep.md', content: 'kept' });
    await ms.archive(source.id);
    const forked = await fork(source.id, { name: 'revived' });
    expect(forked.archived_at).toBeNull();
    await ms.memories.create(forked.id, { path: '/new.md', content: 'new' });
    expect(await contents(client, forked.id)).toEqual({ '/keep.md': 'kept', '/new.md': 'new' });
  });

  it('copies only the memories live at as_of: one expired by then is not copied, though no sweep has deleted it yet', async () => {
    const { client, ms, clock, fork } = await app();
    const source = await ms.create({ name: 'expiring' });
    await ms.memories.create(source.id, { path: '/keep.md', content: 'kept' });
    await ms.memories.create(source.id, { path: '/exp.md', content: 'gone soon', ttl_seconds: 1 } as never);
    clock.advance(2000);
    expect(await contents(client, source.id)).toEqual({ '/keep.md': 'kept' });
    const now = await fork(source.id, { name: 'fe now' });
    expect(await contents(client, now.id)).toEqual({ '/keep.md': 'kept' });
    const later = await fork(source.id, { name: 'fe at an instant', as_of: new Date(Date.parse(clock()) - 500).toISOString() });
    expect(await contents(client, later.id)).toEqual({ '/keep.md': 'kept' });
    expect((await collect(ms.memoryVersions.list(now.id))).map((v) => v.path)).toEqual(['/keep.md']);
  });

  it('a copied memory keeps its expiry, so it expires in the fork when it does in the source; one that expired after as_of is not copied', async () => {
    const { client, ms, clock, fork, service } = await app();
    const source = await ms.create({ name: 'ttl source' });
    await ms.memories.create(source.id, { path: '/plain.md', content: 'stays' });
    const soon = (await ms.memories.create(source.id, { path: '/soon.md', content: 'expires in 1 s', ttl_seconds: 1 } as never)) as { expires_at?: string };
    const hour = (await ms.memories.create(source.id, { path: '/hour.md', content: 'expires in an hour', ttl_seconds: 3600 } as never)) as { expires_at?: string };
    const asOf = clock();
    clock.advance(2000);
    // At as_of all three were live; /soon.md has expired since, in the source and so in the copy.
    const forked = await fork(source.id, { name: 'ttl fork', as_of: asOf });
    expect(await contents(client, forked.id)).toEqual({ '/plain.md': 'stays', '/hour.md': 'expires in an hour' });
    const copied = (await collect(ms.memories.list(forked.id))) as { path: string; expires_at?: string }[];
    expect(Object.fromEntries(copied.map((m) => [m.path, m.expires_at ?? null]))).toEqual({ '/plain.md': null, '/hour.md': hour.expires_at });
    expect(soon.expires_at).toBeDefined();
    // The same once the sweep has deleted /soon.md (a `deleted` version dated at its expiry, after as_of).
    expect(await service.purgeExpiredMemories()).toBe(1);
    const swept = await fork(source.id, { name: 'ttl fork after the sweep', as_of: asOf });
    expect(await contents(client, swept.id)).toEqual({ '/plain.md': 'stays', '/hour.md': 'expires in an hour' });
    clock.advance(3600 * 1000);
    expect(await contents(client, forked.id)).toEqual({ '/plain.md': 'stays' });
    expect(await contents(client, source.id)).toEqual({ '/plain.md': 'stays' });
  });

  it('refuses an as_of in the future or before the source existed (400), and a bad body, and creates nothing', async () => {
    const { ms, clock, fork } = await app();
    const before = clock();
    clock.advance(1000);
    const source = await ms.create({ name: 'src' });
    clock.advance(1000);
    const future = new Date(Date.parse(clock()) + 60_000).toISOString();
    expect(await status(fork(source.id, { name: 'f', as_of: future }))).toBe(400);
    expect(await status(fork(source.id, { name: 'f', as_of: before }))).toBe(400);
    expect(await status(fork(source.id, { name: 'f', as_of: 'yesterday' }))).toBe(400);
    expect(await status(fork(source.id, { name: '' }))).toBe(400);
    expect(await status(fork(source.id, { name: 'f', extra: 1 }))).toBe(400);
    expect(await status(fork('memstore_nope', { name: 'f' }))).toBe(404);
    expect((await collect(ms.list())).map((s) => s.id)).toEqual([source.id]);
  });

  it('a fork holding more than the store limits in force since a restart lowered them is refused with 413 naming the limit, and leaves no store', async () => {
    const dataDir = makeTempDir('mnemo-fork-limits-');
    onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
    let server = await startServer({ dataDir });
    const post = (path: string, body: unknown) => jsonRequest(server, 'POST', path, server.adminKey, body);
    const source = (await post('/v1/memory_stores', { name: 'grown' })).body as { id: string };
    for (const n of [1, 2, 3]) expect((await post(`/v1/memory_stores/${source.id}/memories`, { path: `/m${n}.md`, content: 'x'.repeat(100) })).status).toBe(200);
    const stores = async () => ((await rawRequest(server.url, 'GET', '/v1/memory_stores', { apiKey: server.adminKey })).body as { data: unknown[] }).data.length;
    for (const [name, value] of [['MNEMO_STORE_MAX_MEMORIES', '2'], ['MNEMO_STORE_MAX_BYTES', '250']]) {
      await server.stop();
      server = await startServer({ dataDir, env: { MNEMO_ADMIN_KEY: server.adminKey, [name!]: value! } });
      const refused = await post(`/v1/memory_stores/${source.id}/fork`, { name: 'copy' });
      expect(refused.status, JSON.stringify(refused.body)).toBe(413);
      expect(refused.body).toMatchObject({ type: 'error', error: { type: 'request_too_large', message: expect.stringContaining(`${name}=${value}`) } });
      expect(await stores()).toBe(1);
    }
    await server.stop();
  });

  it('replays a retry with the same Idempotency-Key, and needs the right to create stores', async () => {
    const { ms, raw, service } = await app();
    const source = await ms.create({ name: 'src' });
    await ms.memories.create(source.id, { path: '/a.md', content: 'a' });
    const send = () => raw('POST', `/v1/memory_stores/${source.id}/fork`, { headers: { 'idempotency-key': 'fork-1' }, body: JSON.stringify({ name: 'once' }) });
    const first = await send();
    const again = await send();
    expect(first.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await collect(ms.list())).filter((s) => s.name === 'once')).toHaveLength(1);

    const workspace = (await service.keys.defaultWorkspace()).id;
    const readOnly = await service.keys.createKey('reader', 'read_only', workspace);
    const scoped = await service.keys.createKey('scoped', 'read_write', workspace, { storeIds: [source.id] });
    for (const k of [readOnly, scoped]) {
      const res = await raw('POST', `/v1/memory_stores/${source.id}/fork`, { apiKey: k.secret, body: JSON.stringify({ name: 'nope' }) });
      expect(res.status).toBe(403);
    }
  });

  it('a not_found about a build that its storage did not report abandoned is the request\'s answer after that one build: only an abandoned build is built again', async () => {
    const { ms, service } = await app();
    const source = await ms.create({ name: 'src' });
    await ms.memories.create(source.id, { path: '/a.md', content: 'a' });
    const workspaceId = (await service.keys.defaultWorkspace()).id;
    const { key } = await service.keys.createKey('forker', 'admin', workspaceId);
    const caller: Caller = { workspaceId, actor: { type: 'api_actor', apiKeyId: key.id }, grant: { role: 'admin', storeIds: null } };
    // The receipt of an Idempotency-Key is recorded in the publish's transaction: one that fails
    // with a not_found naming the new store (no storage signal of an abandoned build) stands for any
    // such error of a layer above the storage.
    const published: string[] = [];
    const hooks = {
      record: async (store: Store) => {
        published.push(store.id);
        throw notFound('memory store', store.id);
      },
      forget: async () => {},
    };

    const err = await service.forkStore(caller, source.id, { name: 'once', description: '', metadata: {}, asOf: null }, hooks).then(() => null, (e: unknown) => e);
    expect(published).toHaveLength(1);
    expect(err).toMatchObject({ code: 'not_found', message: `memory store not found: ${published[0]}` });
    expect((await collect(ms.list())).map((s) => s.id)).toEqual([source.id]);
  });
});

describe('content stored once, and redaction', () => {
  it('redacting one of two versions with the same text keeps the bytes and says so; redacting the other erases them', async () => {
    const { ms, storage, file } = await app();
    const secret = `hunter${Math.random().toString(36).slice(2)}secret`;
    const store = await ms.create({ name: 'twins' });
    const a = await ms.memories.create(store.id, { path: '/a.md', content: secret });
    const b = await ms.memories.create(store.id, { path: '/b.md', content: secret });
    await ms.memories.update(a.id, { memory_store_id: store.id, content: 'rotated a' });
    await ms.memories.update(b.id, { memory_store_id: store.id, content: 'rotated b' });
    const rows = await storage.countContents();

    const first = (await ms.memoryVersions.redact(a.memory_version_id, { memory_store_id: store.id })) as { content_still_held_by?: number };
    expect(first.content_still_held_by).toBe(1);
    expect(await storage.countContents()).toBe(rows);
    expect((await ms.memoryVersions.retrieve(b.memory_version_id, { memory_store_id: store.id })).content).toBe(secret);

    const second = (await ms.memoryVersions.redact(b.memory_version_id, { memory_store_id: store.id })) as { content_still_held_by?: number };
    expect(second.content_still_held_by).toBe(0);
    expect(await storage.countContents()).toBe(rows - 1);
    if (!onPostgres()) expect(holding(filesUnder(dirname(file)), secret)).toEqual([]);
    expect(await storage.domainCheck()).toEqual([]);
  });

  // Findings "redact" #7: the fork appeared after the redaction answered, holding the redacted text.
  it('a fork still being built when a version it copied is redacted is published without that text, and the redaction counts no holder', async () => {
    const { client, ms, clock, fork, file, sql, service, storage } = await app();
    const secret = `zebra${Math.random().toString(36).slice(2)}leak`;
    const source = await ms.create({ name: 'big' });
    // Enough memories for a dozen batches; the secret in the one a fork copies first (the smallest id).
    const made = [];
    for (let i = 0; i < 300; i += 1) made.push(await ms.memories.create(source.id, { path: `/big/${i}.md`, content: `filler ${i}` }));
    const firstId = made.map((m) => m.id).sort()[0]!;
    const v1 = await ms.memories.update(firstId, { memory_store_id: source.id, content: `secret ${secret}` });
    clock.advance(1000);
    const asOf = clock();
    clock.advance(1000);
    await ms.memories.update(firstId, { memory_store_id: source.id, content: 'rotated' });

    const building = fork(source.id, { name: 'fork', as_of: asOf });
    const copied = async () => sql(
      `SELECT count(*) FROM memories m JOIN stores s ON s.id = m.store_id WHERE s.forking_since IS NOT NULL AND s.deleted_at IS NULL AND m.path = '${v1.path}'`,
      `SELECT count(*)::int AS n FROM memories m JOIN stores s ON s.id = m.store_id WHERE s.forking_since IS NOT NULL AND s.deleted_at IS NULL AND m.path = '${v1.path}'`,
    );
    while ((await copied()) === 0) await new Promise((r) => setImmediate(r));
    const redacted = (await ms.memoryVersions.redact(v1.memory_version_id, { memory_store_id: source.id })) as { content_still_held_by?: number };
    const forked = await building;

    expect(redacted.content_still_held_by).toBe(0);
    const texts = await contents(client, forked.id);
    expect(texts[v1.path]).toBeUndefined();
    expect(Object.keys(texts)).toHaveLength(299);
    expect(Object.values(texts).filter((t) => t.includes(secret))).toEqual([]);
    if (!onPostgres()) {
      // The abandoned build's rows go with the deleted-store purge, as any deleted store's.
      while (await service.purgeDeletedStores());
      // Its memories left the index without secure-delete: the merge the purge marked takes their words.
      while (await storage.eraseSearchRemnants?.());
      expect(holding(filesUnder(dirname(file)), secret)).toEqual([]);
    }
  });

  it('a fork whose every build a redaction abandons fails with a 409 conflict about its source, never a 404 for an id nobody was given, and makes no store', async () => {
    const { client, ms, raw, clock, sql } = await app();
    const source = await ms.create({ name: 'redacted thrice' });
    const made = [];
    for (let i = 0; i < 300; i += 1) made.push(await ms.memories.create(source.id, { path: `/big/${i}.md`, content: `filler ${i}` }));
    // The three memories a build copies first (the smallest ids), each with a version at as_of to redact.
    const first = made.map((m) => m.id).sort().slice(0, 3);
    const leaks = [];
    for (const id of first) leaks.push(await ms.memories.update(id, { memory_store_id: source.id, content: `secret of ${id}` }));
    clock.advance(1000);
    const asOf = clock();
    clock.advance(1000);
    // Only a version that is no memory's current one can be redacted.
    for (const id of first) await ms.memories.update(id, { memory_store_id: source.id, content: 'rotated' });
    const storesBefore = await sql('SELECT count(*) FROM stores', 'SELECT count(*)::int AS n FROM stores');

    const building = raw('POST', `/v1/memory_stores/${source.id}/fork`, { body: JSON.stringify({ name: 'never', as_of: asOf }) });
    const answers = [];
    for (const leak of leaks) {
      // This build (the one not deleted yet) has copied the memory: a redaction of its version abandons it.
      const copied = () => sql(
        `SELECT count(*) FROM memories m JOIN stores s ON s.id = m.store_id WHERE s.forking_since IS NOT NULL AND s.deleted_at IS NULL AND m.path = '${leak.path}'`,
        `SELECT count(*)::int AS n FROM memories m JOIN stores s ON s.id = m.store_id WHERE s.forking_since IS NOT NULL AND s.deleted_at IS NULL AND m.path = '${leak.path}'`,
      );
      while ((await copied()) === 0) await new Promise((r) => setImmediate(r));
      // Once it has committed, not once it answers: the answer counts the text's holders after the
      // commit, on a reader thread, and the next build may finish meanwhile on a busy host.
      answers.push(ms.memoryVersions.redact(leak.memory_version_id, { memory_store_id: source.id }));
      const redacted = () => sql(
        `SELECT count(*) FROM versions WHERE id = '${leak.memory_version_id}' AND redacted_at IS NOT NULL`,
        `SELECT count(*)::int AS n FROM versions WHERE id = '${leak.memory_version_id}' AND redacted_at IS NOT NULL`,
      );
      while ((await redacted()) === 0) await new Promise((r) => setImmediate(r));
    }
    const failed = await building;
    for (const answer of await Promise.all(answers)) expect((answer as { content_still_held_by?: number }).content_still_held_by).toBe(0);

    expect(failed.status).toBe(409);
    const error = (failed.body as { error: { type: string; message: string; abandoned_by?: string } }).error;
    expect(error.type).toBe('conflict_error');
    expect(error.message).toBe(
      `the fork of memory store ${source.id} was abandoned 3 times: each build lost a version it copied to a redaction while it ran; no store was made, and the same request may be tried again`,
    );
    expect(error.abandoned_by).toBe('redaction');
    // No retry is ruled out: the next build leaves the redacted texts out.
    expect(failed.headers.get('x-should-retry')).toBeNull();
    expect((await collect(ms.list())).map((s) => s.id)).toEqual([source.id]);
    // Every build's store row went (deleted, its rows purged in the background); none was published.
    expect(await sql('SELECT count(*) FROM stores WHERE deleted_at IS NULL', 'SELECT count(*)::int AS n FROM stores WHERE deleted_at IS NULL')).toBe(storesBefore);

    const retried = await raw('POST', `/v1/memory_stores/${source.id}/fork`, { body: JSON.stringify({ name: 'at last', as_of: asOf }) });
    expect(retried.status).toBe(200);
    const texts = await contents(client, (retried.body as WireStore).id);
    expect(Object.keys(texts)).toHaveLength(297);
    expect(Object.values(texts).filter((t) => t.startsWith('secret of'))).toEqual([]);
  });

  it('a fork whose build the sweep of forks a crash cut short deletes while it runs fails at once with a 409 that names the sweep, not a redaction, and is not built again', async () => {
    // The build is held after its first batch (its turn between batches: ServiceOptions.forks),
    // as on a host too loaded to finish it, until the sweep has run.
    let held = false;
    let reached!: () => void;
    const atHold = new Promise<void>((r) => (reached = r));
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const yieldTurn = async () => {
      if (!held) {
        held = true;
        reached();
        await released;
      }
      await new Promise((r) => setImmediate(r));
    };
    const { client, ms, raw, clock, sql, service } = await app({ forks: { yieldTurn } });
    const source = await ms.create({ name: 'slow to fork' });
    // Three batches: the build is held between the first two.
    for (let i = 0; i < 60; i += 1) await ms.memories.create(source.id, { path: `/big/${i}.md`, content: `filler ${i}` });
    clock.advance(1000);
    const building = raw('POST', `/v1/memory_stores/${source.id}/fork`, { body: JSON.stringify({ name: 'too slow' }) });
    // Held, or answered first (a failure before the first batch's turn: reported, not waited on).
    await Promise.race([atHold, building.then((r) => Promise.reject(new Error(`answered before its first batch was done: ${r.status} ${JSON.stringify(r.body)}`)))]);
    const copying = () => sql(
      'SELECT count(*) FROM memories m JOIN stores s ON s.id = m.store_id WHERE s.forking_since IS NOT NULL AND s.deleted_at IS NULL',
      'SELECT count(*)::int AS n FROM memories m JOIN stores s ON s.id = m.store_id WHERE s.forking_since IS NOT NULL AND s.deleted_at IS NULL',
    );
    // One batch copied, the build not finished: an hour passes for the server, and its minute sweep runs.
    expect(await copying()).toBe(FORK_BATCH);
    clock.advance(ABANDONED_FORK_MS + 1000);
    const swept = await service.purgeAbandonedForks();
    release();
    const failed = await building;

    expect(failed.status, JSON.stringify(failed.body)).toBe(409);
    const error = (failed.body as { error: { type: string; message: string; abandoned_by?: string } }).error;
    expect(error.type).toBe('conflict_error');
    expect(error.message).toBe(
      `the fork of memory store ${source.id} was abandoned: its build was still running an hour after the request began, so the sweep of forks a crash cut short deleted it; no store was made, and the same request may take as long again`,
    );
    expect(error.abandoned_by).toBe('sweep');
    // Not retried by the SDK: a build as slow would be deleted again.
    expect(failed.headers.get('x-should-retry')).toBe('false');
    // One build, deleted by the sweep; none was begun again (a retry would be as old for the sweep).
    expect(swept).toBe(1);
    expect(await sql('SELECT count(*) FROM stores WHERE forked_from IS NOT NULL', 'SELECT count(*)::int AS n FROM stores WHERE forked_from IS NOT NULL')).toBe(1);
    expect((await collect(ms.list())).map((s) => s.id)).toEqual([source.id]);

    // A request the sweep does not interrupt makes the fork.
    const retried = await raw('POST', `/v1/memory_stores/${source.id}/fork`, { body: JSON.stringify({ name: 'at last' }) });
    expect(retried.status).toBe(200);
    expect(Object.keys(await contents(client, (retried.body as WireStore).id))).toHaveLength(60);
  });

  it('a text a fork still holds stays when the source redacts it, and goes when the fork redacts it too', async () => {
    const { ms, clock, fork, storage, file } = await app();
    const secret = `token${Math.random().toString(36).slice(2)}leak`;
    const source = await ms.create({ name: 'leaky' });
    const m = await ms.memories.create(source.id, { path: '/env.md', content: secret });
    clock.advance(1000);
    const forked: WireStore = await fork(source.id, { name: 'branch' });
    const [inFork] = await collect(ms.memories.list(forked.id));
    await ms.memories.update(m.id, { memory_store_id: source.id, content: 'clean' });
    await ms.memories.update((inFork as { id: string }).id, { memory_store_id: forked.id, content: 'clean too' });
    const rows = await storage.countContents();

    const inSource = (await ms.memoryVersions.redact(m.memory_version_id, { memory_store_id: source.id })) as { content_still_held_by?: number };
    expect(inSource.content_still_held_by).toBe(1);
    expect(await storage.countContents()).toBe(rows);
    const forkCreated = (await collect(ms.memoryVersions.list(forked.id, { operation: 'created' } as never)))[0]!;
    expect((await ms.memoryVersions.retrieve(forkCreated.id, { memory_store_id: forked.id })).content).toBe(secret);

    const inBranch = (await ms.memoryVersions.redact(forkCreated.id, { memory_store_id: forked.id })) as { content_still_held_by?: number };
    expect(inBranch.content_still_held_by).toBe(0);
    expect(await storage.countContents()).toBe(rows - 1);
    if (!onPostgres()) expect(holding(filesUnder(dirname(file)), secret)).toEqual([]);
    expect(await storage.domainCheck()).toEqual([]);
  });
});
