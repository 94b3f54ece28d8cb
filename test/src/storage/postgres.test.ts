/**
 * The PostgreSQL adapter on a real database (test/helpers/postgres.ts: a throwaway cluster, or
 * MNEMO_TEST_DATABASE_URL in CI): each role's main paths, the schema's append-only trigger, one
 * transaction per operation, `atomic`, two servers (two pools) racing on one memory and on one
 * checkpoint pointer, migrations under concurrent openers and the refusal of a newer schema.
 */
import { PG_UNDO_MIGRATION_22, PG_UNDO_MIGRATION_25, PG_UNDO_MIGRATION_26, PG_UNDO_MIGRATION_27, PG_UNDO_MIGRATION_5 } from '../../helpers/schema-undo.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { sha256Hex } from '../../../src/domain/content.js';
import { MnemoError } from '../../../src/domain/errors.js';
import type { Actor, Caller, Checkpoint, MemoryListQuery, SearchQuery, Store, VersionListQuery } from '../../../src/domain/types.js';
import { newId } from '../../../src/service/ids.js';
import { createGroupCommit } from '../../../src/service/group-commit.js';
import { createService } from '../../../src/service/service.js';
import { createKeys, hashSecret } from '../../../src/service/keys.js';
import type { WriteFound, WriteStamp } from '../../../src/storage/port.js';
import { first, inTransaction, run, runWithNext } from '../../../src/storage/postgres/db.js';
import { openPostgresStorage, type PostgresStorage } from '../../../src/storage/postgres/open.js';
import { PG_HISTORY_SQL } from '../../../src/storage/postgres/history.js';
import { SUBSTRING_BY_TRIGRAMS } from '../../../src/storage/postgres/search.js';
import { PG_MIGRATIONS, PG_SCHEMA_VERSION, SchemaTooNewError, migrate } from '../../../src/storage/postgres/schema/migrations.js';
import { codeOf } from '../../helpers/core.js';
import { eventually } from '../../helpers/mount.js';
import { PURGE_SMALL_SLICE } from '../../../src/storage/postgres/schema/v15.js';
import { createDatabase, databasePerFile, pgSkip } from '../../helpers/postgres.js';

const T0 = Date.parse('2026-03-01T00:00:00.000Z');
const memQ = (q: Partial<MemoryListQuery> = {}): MemoryListQuery => ({ pathPrefix: '/', depth: 0, limit: 100, page: null, view: 'basic', ...q });
const verQ = (q: Partial<VersionListQuery> = {}): VersionListQuery => ({
  memoryId: null, operation: null, sessionId: null, apiKeyId: null, serviceAccountId: null,
  createdGte: null, createdLte: null, limit: 100, page: null, view: 'full', ...q,
});
const searchQ = (q: Partial<SearchQuery> & { q: string }): SearchQuery => ({ mode: 'fts', pathPrefix: '/', limit: 10, page: null, ...q });

describe.skipIf(pgSkip !== null)(`PostgreSQL adapter${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, () => {
  const databaseUrl = databasePerFile();
  let url = '';
  /** The adapter's clock: tests move it to expire memories. */
  let clockMs = T0;
  const clock = () => new Date(clockMs).toISOString();
  let storage: PostgresStorage;
  let admin: pg.Pool;

  beforeAll(async () => {
    url = databaseUrl();
    storage = await openPostgresStorage(url, { clock });
    admin = new pg.Pool({ connectionString: url, max: 2 });
    // The file's database is dropped WITH (FORCE) after it: a pooled connection still closing then
    // hears "terminating connection" (57P01), which the pool re-emits; unheard, it would fail the run.
    admin.on('error', () => {});
  });
  afterAll(async () => {
    await storage?.close();
    await admin?.end();
  });

  /** A second server on the same database: its own pool. */
  async function secondServer(): Promise<PostgresStorage> {
    const other = await openPostgresStorage(url, { clock });
    onTestFinished(() => other.close());
    return other;
  }

  /** A fresh workspace and store per test: tests share the file's database. */
  async function fixture() {
    let tick = 0;
    const now = () => new Date(T0 + 1000 * tick++).toISOString();
    const workspace = { id: newId('workspace'), name: 'default', createdAt: now() };
    await storage.insertWorkspace(workspace, false);
    const actor: Actor = { type: 'api_actor', apiKeyId: newId('apiKey') };
    const stamp = (a: Actor = actor): WriteStamp => ({ actor: a, now: now(), versionId: newId('version') });
    async function addStore(name = 'notes'): Promise<Store> {
      const at = now();
      const store: Store = { id: newId('store'), workspaceId: workspace.id, name, description: '', metadata: {}, createdAt: at, updatedAt: at, archivedAt: null };
      await storage.insertStore(store);
      return store;
    }
    const addMemory = (storeId: string, path: string, content = `content of ${path}`, on: PostgresStorage = storage) =>
      on.createMemory({ ...stamp(), storeId, memoryId: newId('memory'), path, content });
    return { workspace, actor, now, stamp, addStore, addMemory };
  }

  describe('stores, keys and sessions', () => {
    it('a store is inserted, listed newest first, patched, archived (then read-only) and deleted: hidden at once, its rows removed in steps', async () => {
      const { workspace, addStore, addMemory, now } = await fixture();
      const a = await addStore('a');
      const b = await addStore('b');
      expect(await storage.getStore(workspace.id, a.id)).toEqual(a);
      expect(await storage.getStoreById(b.id)).toEqual(b);
      const page = await storage.listStores(workspace.id, { includeArchived: false, createdGte: null, createdLte: null, limit: 1, page: null });
      expect(page.data.map((s) => s.id)).toEqual([b.id]);
      const next = await storage.listStores(workspace.id, { includeArchived: false, createdGte: null, createdLte: null, limit: 1, page: page.nextPage });
      expect(next.data.map((s) => s.id)).toEqual([a.id]);
      expect((await storage.listStores(workspace.id, { includeArchived: false, createdGte: null, createdLte: null, limit: 10, page: null }, [a.id])).data).toHaveLength(1);

      const patched = await storage.updateStore(workspace.id, a.id, { metadata: { k: 'v' } }, now());
      expect(patched.metadata).toEqual({ k: 'v' });
      await addMemory(a.id, '/m.md', 'hello');
      expect(await storage.storeUsage(a.id)).toEqual({ memories: 1, bytes: 5 });
      const archived = await storage.archiveStore(workspace.id, a.id, now());
      expect(archived.archivedAt).not.toBeNull();
      expect(await codeOf(() => addMemory(a.id, '/n.md'))).toBe('archived');
      expect(await codeOf(() => storage.updateStore(workspace.id, a.id, { name: 'x' }, now()))).toBe('archived');

      await storage.deleteStore(workspace.id, a.id);
      expect(await storage.getStoreById(a.id)).toBeNull();
      expect(await storage.getStore(workspace.id, a.id)).toBeNull();
      expect((await storage.getMemoryInStore(workspace.id, a.id, 'mem_x')).storeFound).toBe(false);
      expect((await storage.listStores(workspace.id, { includeArchived: true, createdGte: null, createdLte: null, limit: 10, page: null })).data.map((s) => s.id)).toEqual([b.id]);
      expect(await codeOf(() => storage.deleteStore(workspace.id, a.id))).toBe('not_found');
      const rows = async (table: string) => (await admin.query(`SELECT count(*)::int AS n FROM ${table} WHERE store_id = $1`, [a.id])).rows[0].n as number;
      // The rows stay until the upkeep's steps take them, a slice at a time (postgres/schema/v14.ts).
      expect(await rows('versions')).toBeGreaterThan(0);
      expect(await rows('memories')).toBe(1);
      let steps = 0;
      while (await storage.purgeDeletedStores()) steps++;
      expect(steps).toBeGreaterThanOrEqual(3); // the memory, the versions, the store's row
      for (const table of ['memories', 'versions', 'store_usage', 'checkpoints']) expect(await rows(table), table).toBe(0);
      expect((await admin.query('SELECT count(*)::int AS n FROM stores WHERE id = $1', [a.id])).rows[0].n).toBe(0);
      expect(await storage.domainCheck()).toEqual([]);
    });

    it('a store being deleted takes no write: a writer that waited for the delete finds no store', async () => {
      const { workspace, addStore, addMemory } = await fixture();
      const s = await addStore();
      await addMemory(s.id, '/a.md', 'a');
      // The delete holds the store's row while the writer asks for it; the writer then finds it gone.
      let write: Promise<string> | undefined;
      await inTransaction(admin, async (c) => {
        await run(c, 'SELECT 1 FROM stores WHERE id = $1 FOR NO KEY UPDATE', [s.id]);
        write = addMemory(s.id, '/b.md', 'b').then(() => 'written', (err: unknown) => (err instanceof MnemoError ? err.code : String(err)));
        await new Promise((r) => setTimeout(r, 200));
        await run(c, 'UPDATE stores SET deleted_at = $1 WHERE id = $2', [new Date().toISOString(), s.id]);
      });
      expect(await write).toBe('not_found');
      expect((await admin.query("SELECT count(*)::int AS n FROM memories WHERE store_id = $1 AND path = '/b.md'", [s.id])).rows[0].n).toBe(0);
      while (await storage.purgeDeletedStores());
    });

    it('two servers purging deleted stores at once each take a store of their own, and together leave nothing', async () => {
      const { workspace, addStore, addMemory } = await fixture();
      const stores = [await addStore('x'), await addStore('y')];
      for (const s of stores) for (let i = 0; i < 3; i++) await addMemory(s.id, `/m${i}.md`, `m${i}`);
      for (const s of stores) await storage.deleteStore(workspace.id, s.id);
      const other = await secondServer();
      const drain = async (st: PostgresStorage) => {
        while (await st.purgeDeletedStores());
      };
      await Promise.all([drain(storage), drain(other)]);
      const ids = stores.map((s) => s.id);
      expect((await admin.query('SELECT count(*)::int AS n FROM versions WHERE store_id = ANY($1)', [ids])).rows[0].n).toBe(0);
      expect((await admin.query('SELECT count(*)::int AS n FROM stores WHERE id = ANY($1)', [ids])).rows[0].n).toBe(0);
    });

    /** Texts ordered by their SHA-256 (the order the purge and the prune lock texts in): the lowest, then the others. */
    function textsBySha(n: number): [low: string, others: string[]] {
      const t = Array.from({ length: n }, () => `text ${newId('memory')}`).sort((a, b) => (sha256Hex(a) < sha256Hex(b) ? -1 : 1));
      return [t[0]!, t.slice(1)];
    }

    /**
     * Runs `step` while another transaction holds text `held`; once the step waits for it, counts
     * which of `others` it holds (NOWAIT fails on them). A step that locks its texts in SHA-256 order
     * holds none above the one it waits for: two steps sharing texts then cannot deadlock.
     */
    async function heldWhileWaiting(held: string, others: string[], step: () => Promise<unknown>): Promise<number> {
      const [holder, prober] = [new pg.Client({ connectionString: url }), new pg.Client({ connectionString: url })];
      for (const c of [holder, prober]) {
        await c.connect();
        onTestFinished(() => c.end());
      }
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM contents WHERE sha256 = $1 FOR UPDATE', [sha256Hex(held)]);
      const running = step();
      await eventually(async () => {
        const r = await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
        expect(r.rows[0].n).toBeGreaterThan(0);
      });
      let taken = 0;
      for (const other of others) {
        await prober.query('BEGIN');
        await prober.query('SELECT 1 FROM contents WHERE sha256 = $1 FOR UPDATE NOWAIT', [sha256Hex(other)]).catch((err: pg.DatabaseError) => {
          if (err.code === '55P03') taken++;
          else throw err;
        });
        await prober.query('ROLLBACK');
      }
      await holder.query('COMMIT');
      await running;
      return taken;
    }

    it('a purge step locks the texts its versions release in SHA-256 order, so two purges sharing texts cannot deadlock', async () => {
      const { workspace, stamp, addStore, addMemory } = await fixture();
      while (await storage.purgeDeletedStores());
      const [low, others] = textsBySha(8);
      const s = await addStore();
      // Its versions hold the texts highest first: the order the deletes meet them in.
      for (const [i, text] of [...others.reverse(), low].entries()) {
        const m = await addMemory(s.id, `/m${i}.md`, text);
        await storage.deleteMemory({ ...stamp(), storeId: s.id, memoryId: m.id });
      }
      await storage.deleteStore(workspace.id, s.id);
      expect(await heldWhileWaiting(low, others, () => storage.purgeDeletedStores())).toBe(0);
      while (await storage.purgeDeletedStores());
      expect((await admin.query('SELECT count(*)::int AS n FROM contents WHERE sha256 = ANY($1)', [[low, ...others].map(sha256Hex)])).rows[0].n).toBe(0);
    });

    it('a retention prune locks the texts it releases in SHA-256 order too', async () => {
      const { stamp, now, addStore, addMemory } = await fixture();
      const [low, others] = textsBySha(8);
      const s = await addStore();
      const [first, ...rest] = [...others.reverse(), low, 'last'];
      const m = await addMemory(s.id, '/a.md', first);
      for (const content of rest) await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content });
      const w = { cutoff: null, keepLast: 1, now: now(), after: 0, scan: 100, max: 100 };
      expect(await heldWhileWaiting(low, others, async () => expect(await storage.pruneVersions(s.id, w)).toMatchObject({ pruned: 8 }))).toBe(0);
    });

    it('the purge takes a store\'s recorded prunes and path floors in slices, not in its last step', async () => {
      const { workspace, addStore } = await fixture();
      while (await storage.purgeDeletedStores());
      const s = await addStore();
      // As a store retention pruned for long would hold them: more than one slice of each.
      await admin.query(
        `INSERT INTO version_prunes (store_id, commit_seq, version_id, memory_id, pruned_at)
           SELECT $1, g, 'ver_' || $1 || '_' || g, 'mem_x', '2026-03-01T00:00:00.000Z' FROM generate_series(1, $2::int) g`,
        [s.id, PURGE_SMALL_SLICE + 1],
      );
      await admin.query("INSERT INTO path_number_floors (store_id, path_hash, last) SELECT $1, 'h' || g, 1 FROM generate_series(1, $2::int) g", [s.id, PURGE_SMALL_SLICE + 1]);
      await storage.deleteStore(workspace.id, s.id);
      let steps = 0;
      while (await storage.purgeDeletedStores()) steps++;
      expect(steps).toBe(5); // two slices of each, then the store's row
      for (const table of ['version_prunes', 'path_number_floors']) {
        expect((await admin.query(`SELECT count(*)::int AS n FROM ${table} WHERE store_id = $1`, [s.id])).rows[0].n, table).toBe(0);
      }
    });

    it('API keys are found by hash, revoked once, and one unrevoked key at most is the seeded one', async () => {
      const { workspace, now } = await fixture();
      const key = { id: newId('apiKey'), workspaceId: workspace.id, name: 'k', role: 'read_write' as const, storeIds: ['s1'], allWorkspaces: false, createdAt: now(), revokedAt: null };
      await storage.insertApiKey(key, `hash-${key.id}`);
      expect(await storage.findApiKeyByHash(`hash-${key.id}`)).toEqual(key);
      expect(await storage.listApiKeys(workspace.id)).toEqual([key]);
      const at = now();
      expect((await storage.revokeApiKey(workspace.id, key.id, at)).revokedAt).toBe(at);
      expect((await storage.revokeApiKey(workspace.id, key.id, now())).revokedAt).toBe(at);
      expect(await codeOf(() => storage.revokeApiKey(workspace.id, newId('apiKey'), now()))).toBe('not_found');
      expect(await storage.getWorkspace(workspace.id)).toEqual(workspace);
    });

    it('sessions are listed newest first, counted while active and ended once', async () => {
      const { workspace, now } = await fixture();
      const mk = (localPid?: number) => ({
        id: newId('session'), workspaceId: workspace.id, status: 'active' as const, resources: [], createdAt: now(), endedAt: null,
        ...(localPid === undefined ? {} : { localPid }),
      });
      const s1 = mk();
      const s2 = mk(1234);
      await storage.insertSession(s1);
      await storage.insertSession(s2);
      expect(await storage.getSession(workspace.id, s2.id)).toEqual(s2);
      expect(await storage.countActiveSessions(workspace.id)).toBe(2);
      expect((await storage.listActiveSessions()).map((s) => s.id)).toContain(s1.id);
      expect((await storage.listActiveLocalSessions()).map((s) => s.id)).toContain(s2.id);
      const first = await storage.listSessions(workspace.id, 1, null);
      expect(first.data.map((s) => s.id)).toEqual([s2.id]);
      expect((await storage.listSessions(workspace.id, 1, first.nextPage)).data.map((s) => s.id)).toEqual([s1.id]);
      const at = now();
      expect(await storage.endSession(workspace.id, s1.id, at)).toMatchObject({ status: 'ended', endedAt: at });
      expect((await storage.endSession(workspace.id, s1.id, now())).endedAt).toBe(at);
      expect(await storage.countActiveSessions(workspace.id)).toBe(1);
    });
  });

  describe('memories and versions', () => {
    it('create, update, rename and delete append one version each; a no-op appends none', async () => {
      const { stamp, addStore, addMemory } = await fixture();
      const s = await addStore();
      const m = await addMemory(s.id, '/notes/é.md', 'héllo');
      expect(m).toMatchObject({ path: '/notes/é.md', content: 'héllo', contentSha256: sha256Hex('héllo'), contentSizeBytes: 6, mode: 0o644 });
      expect(await storage.getMemory(s.id, m.id)).toEqual(m);
      const { content: _c, ...meta } = m;
      expect(await storage.getMemoryMetaByPath(s.id, m.path)).toEqual(meta);
      expect((await storage.getMemoryBytesByPath(s.id, m.path))?.bytes).toEqual(Buffer.from('héllo'));
      expect(await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'héllo' })).toEqual({ memory: m, changed: false });
      const st = stamp();
      const moved = await storage.updateMemory({ ...st, storeId: s.id, memoryId: m.id, content: 'two', path: '/b.md' });
      expect(moved.memory).toMatchObject({ path: '/b.md', content: 'two', versionId: st.versionId });
      await storage.deleteMemory({ ...stamp(), storeId: s.id, memoryId: m.id });
      expect(await storage.getMemory(s.id, m.id)).toBeNull();
      const versions = await storage.listVersions(s.id, verQ({ memoryId: m.id }));
      expect(versions.data.map((v) => v.operation)).toEqual(['deleted', 'modified', 'created']);
      expect(versions.data[0]).toMatchObject({ path: '/b.md', content: null, contentSha256: null });
      expect(await storage.getVersion(s.id, m.versionId)).toMatchObject({ content: 'héllo', operation: 'created' });
      expect(await storage.storeUsage(s.id)).toEqual({ memories: 0, bytes: 0 });
    });

    it('overlapping paths are refused with the conflicting memory named, and leave no version behind', async () => {
      const { stamp, addStore, addMemory } = await fixture();
      const s = await addStore();
      const a = await addMemory(s.id, '/a/b');
      for (const path of ['/a/b', '/a', '/a/b/c']) {
        const err = await storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path, content: 'x' }).catch((e: unknown) => e);
        expect(err).toMatchObject({ code: 'path_conflict', details: { conflicting_path: '/a/b', conflicting_memory_id: a.id } });
      }
      expect((await storage.listVersions(s.id, verQ())).data).toHaveLength(1);
    });

    it('a stale expected sha256 is precondition_failed unless the memory already holds what was asked', async () => {
      const { stamp, addStore, addMemory } = await fixture();
      const s = await addStore();
      const m = await addMemory(s.id, '/a', 'one');
      expect(await codeOf(() => storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'two', expectedSha256: sha256Hex('zzz') }))).toBe('precondition_failed');
      expect((await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'one', expectedSha256: sha256Hex('zzz') })).changed).toBe(false);
      expect(await codeOf(() => storage.deleteMemory({ ...stamp(), storeId: s.id, memoryId: m.id, expectedSha256: sha256Hex('zzz') }))).toBe('precondition_failed');
    });

    it('listings walk path order at depth 0 and roll subdirectories into prefixes at depth 1, page by page', async () => {
      const { addStore, addMemory } = await fixture();
      const s = await addStore();
      for (const p of ['/a.md', '/d/x.md', '/d/y.md', '/e/deep/z.md', '/f.md']) await addMemory(s.id, p);
      const flat = await storage.listMemories(s.id, memQ({ limit: 2 }));
      expect(flat.data.map((i) => (i.type === 'memory' ? i.memory.path : i.path))).toEqual(['/a.md', '/d/x.md']);
      const rest = await storage.listMemories(s.id, memQ({ limit: 10, page: flat.nextPage }));
      expect(rest.data.map((i) => (i.type === 'memory' ? i.memory.path : i.path))).toEqual(['/d/y.md', '/e/deep/z.md', '/f.md']);
      const top = await storage.listMemories(s.id, memQ({ depth: 1, limit: 2, view: 'full' }));
      expect(top.data.map((i) => (i.type === 'memory' ? i.memory.path : `${i.path} (prefix)`))).toEqual(['/a.md', '/d/ (prefix)']);
      expect(top.data[0]).toMatchObject({ memory: { content: 'content of /a.md' } });
      const more = await storage.listMemories(s.id, memQ({ depth: 1, limit: 10, page: top.nextPage }));
      expect(more.data.map((i) => (i.type === 'memory' ? i.memory.path : `${i.path} (prefix)`))).toEqual(['/e/ (prefix)', '/f.md']);
      const dir = await storage.listDirectory(s.id, '/d');
      expect(dir.files.map((f) => f.path)).toEqual(['/d/x.md', '/d/y.md']);
      expect((await storage.listDirectory(s.id, '/')).dirs).toEqual(['d', 'e']);
      expect(await storage.hasMemoriesUnder(s.id, '/e')).toBe(true);
      expect(await storage.hasMemoriesUnder(s.id, '/a.md')).toBe(false);
    });

    it('saveMemoryAt creates or updates by path, moveMemory replaces a memory at the target, moveTree moves a directory', async () => {
      const { stamp, addStore, addMemory } = await fixture();
      const s = await addStore();
      const id = newId('memory');
      const created = await storage.saveMemoryAt({ ...stamp(), storeId: s.id, path: '/s.md', content: 'one', memoryId: id, mode: 0o600 });
      expect(created).toMatchObject({ changed: true, memory: { id, mode: 0o600 } });
      const again = await storage.saveMemoryAt({ ...stamp(), storeId: s.id, path: '/s.md', content: 'two', memoryId: newId('memory') });
      expect(again.memory).toMatchObject({ id, content: 'two' });
      const other = await addMemory(s.id, '/t.md', 'target');
      const replacedVersionId = newId('version');
      const moved = await storage.moveMemory({ ...stamp(), storeId: s.id, memoryId: id, path: '/t.md', replacedVersionId });
      expect(moved).toMatchObject({ id, path: '/t.md', content: 'two' });
      expect(await storage.getMemory(s.id, other.id)).toBeNull();
      expect(await storage.getVersion(s.id, replacedVersionId)).toMatchObject({ operation: 'deleted', memoryId: other.id });
      await addMemory(s.id, '/dir/a.md');
      await addMemory(s.id, '/dir/sub/b.md');
      let n = 0;
      const count = await storage.moveTree({ storeId: s.id, from: '/dir', to: '/new', actor: stamp().actor, now: stamp().now, versionIds: () => (n++, newId('version')) });
      expect(count).toBe(2);
      expect(n).toBe(2);
      expect(await storage.getMemoryByPath(s.id, '/new/sub/b.md')).not.toBeNull();
      await storage.setMemoryAttrs(s.id, id, { mode: 0o640, uid: 7 }, stamp().now);
      expect(await storage.getMemory(s.id, id)).toMatchObject({ mode: 0o640, uid: 7 });
    });

    it('a memory whose expiry passed is hidden at once and purged by the next write with a deleted version dated at its expiry', async () => {
      const { stamp, addStore, addMemory } = await fixture();
      const s = await addStore();
      const expiresAt = new Date(clockMs + 60_000).toISOString();
      const m = await storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/ttl.md', content: 'x', expiresAt });
      expect(await storage.nextExpiry(s.id, clock())).toBe(expiresAt);
      clockMs += 120_000;
      onTestFinished(() => {
        clockMs -= 120_000;
      });
      expect(await storage.getMemory(s.id, m.id)).toBeNull();
      expect(await storage.findReferencedMemory(s.id, { memoryId: m.id, path: null })).toEqual({ state: 'expired' });
      // The path is free for a new memory: the write (at the clock's now) purges the expired one first.
      await storage.createMemory({ ...stamp(), now: clock(), storeId: s.id, memoryId: newId('memory'), path: '/ttl.md', content: 'new' });
      const versions = await storage.listVersions(s.id, verQ({ memoryId: m.id }));
      expect(versions.data[0]).toMatchObject({ operation: 'deleted', createdAt: expiresAt });
      expect(await storage.findReferencedMemory(s.id, { memoryId: m.id, path: null })).toEqual({ state: 'expired' });
      expect(await storage.findReferencedMemory(s.id, { memoryId: newId('memory'), path: null })).toEqual({ state: 'missing' });
    });

    it('the expiry sweep purges every store, at most max per call', async () => {
      const { stamp, addStore } = await fixture();
      const s = await addStore();
      const expiresAt = new Date(T0 + 3_600_000).toISOString();
      for (const p of ['/x1', '/x2', '/x3']) await storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: p, content: 'x', expiresAt });
      const later = new Date(T0 + 7_200_000).toISOString();
      expect(await storage.purgeExpiredMemories(later, 2)).toBe(2);
      expect(await storage.purgeExpiredMemories(later)).toBeGreaterThanOrEqual(1);
      expect(await storage.storeUsage(s.id)).toEqual({ memories: 0, bytes: 0 });
    });

    it('redaction nulls an old version and the receipts naming it, refuses a live head, and keeps the first redaction', async () => {
      const { workspace, stamp, addStore, addMemory, now, actor } = await fixture();
      const s = await addStore();
      const m = await addMemory(s.id, '/secret.md', 'password');
      const receipt = {
        workspaceId: workspace.id, apiKeyId: 'k', route: 'POST /v1/memory_stores/{id}/memories', key: newId('memory'),
        fingerprint: 'f', status: 200, body: JSON.stringify({ id: m.id, path: m.path, content: m.content, content_sha256: m.contentSha256, content_size_bytes: 8 }),
        storeId: s.id, versionId: m.versionId, createdAt: now(), expiresAt: now(),
      };
      await storage.insertReceipt(receipt);
      expect(await codeOf(() => storage.redactVersion(s.id, m.versionId, actor, now()))).toBe('conflict');
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'changed' });
      const at = now();
      const red = await storage.redactVersion(s.id, m.versionId, actor, at);
      expect(red).toMatchObject({ path: null, content: null, contentSha256: null, contentSizeBytes: null, redactedAt: at, redactedBy: actor });
      expect((await storage.redactVersion(s.id, m.versionId, actor, now())).redactedAt).toBe(at);
      const body = JSON.parse((await storage.findReceipt(receipt))!.body) as Record<string, unknown>;
      expect(Object.keys(body)).toEqual(['id', 'path', 'content', 'content_sha256', 'content_size_bytes']);
      expect(body).toMatchObject({ id: m.id, path: null, content: null, content_sha256: null, content_size_bytes: null });
      expect(await storage.domainCheck()).toEqual([]);
    });

    it('after a redaction no table a query can read holds the redacted text (the README says where old bytes stay)', async () => {
      const { workspace, stamp, addStore, addMemory, now, actor } = await fixture();
      const s = await addStore();
      const secret = `secret-${newId('memory')}`;
      const m = await addMemory(s.id, `/${secret}.md`, `the ${secret} text`);
      await storage.insertReceipt({
        workspaceId: workspace.id, apiKeyId: 'k', route: 'POST /v1/memory_stores/{id}/memories', key: newId('memory'), fingerprint: 'f', status: 200,
        body: JSON.stringify({ path: m.path, content: m.content }), storeId: s.id, versionId: m.versionId, createdAt: now(), expiresAt: now(),
      });
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, path: '/public.md', content: 'public' });
      await storage.redactVersion(s.id, m.versionId, actor, now());
      const tables = ['memories', 'versions', 'idempotency_receipts', 'memory_expirations', 'checkpoints', 'checkpoint_heads', 'sessions', 'stores'];
      for (const t of tables) {
        const hits = await admin.query(`SELECT count(*)::int AS n FROM ${t} x WHERE x::text LIKE $1`, [`%${secret}%`]);
        expect({ table: t, rows: hits.rows[0].n }).toEqual({ table: t, rows: 0 });
      }
    });

    it('content with NUL, which PostgreSQL text cannot hold, is refused as invalid_request', async () => {
      const { addStore, addMemory } = await fixture();
      const s = await addStore();
      expect(await codeOf(() => addMemory(s.id, '/nul', 'a\0b'))).toBe('invalid_request');
    });
  });

  describe('the schema', () => {
    it("a new text waits for the search upkeep before the trigram index takes it; substring search finds it either way, through the trigram indexes; a text row takes no other change", async () => {
      const { addStore, addMemory } = await fixture();
      const s = await addStore();
      const needle = `needle-${newId('memory')}`;
      const m = await addMemory(s.id, '/t.md', `a text holding ${needle} once`);
      const ready = async () => (await admin.query('SELECT trigrams_ready FROM contents WHERE sha256 = $1', [m.contentSha256])).rows[0]?.trigrams_ready;
      // Queued by the write: the write path paid nothing for the trigram index.
      expect(await ready()).toBe(false);
      const found = async () => (await storage.searchMemories(s.id, searchQ({ q: needle, mode: 'substring' }))).data.map((h) => h.memory.id);
      expect(await found()).toEqual([m.id]);
      while ((await storage.indexSearchBacklog(1000)) > 0);
      expect(await ready()).toBe(true);
      expect(await found()).toEqual([m.id]);
      // The partial index holds it now, and the search's query can ask it for candidates instead of
      // reading the store's texts: with scans that read a table through anything but a condition
      // turned off (a one-memory store is otherwise best read whole), the texts are found through it.
      const c = await admin.connect();
      try {
        await c.query('SET enable_seqscan = off; SET enable_indexscan = off; SET enable_nestloop = off');
        await c.query(`PREPARE substring_page(text, text, text, text, text, int) AS ${SUBSTRING_BY_TRIGRAMS}`);
        const args = [s.id, '/', '0', clock(), `%${needle}%`].map((v) => pg.escapeLiteral(v)).join(', ');
        const plan = (await c.query(`EXPLAIN EXECUTE substring_page(${args}, 11)`)).rows
          .map((r: Record<string, string>) => r['QUERY PLAN'])
          .join('\n');
        expect(plan).toMatch(/Bitmap Index Scan on contents_content_trgm/);
      } finally {
        await c.query('DEALLOCATE ALL; RESET enable_seqscan; RESET enable_indexscan; RESET enable_nestloop');
        c.release();
      }
      // Ready is final, and the text itself never changes.
      await expect(admin.query('UPDATE contents SET trigrams_ready = false WHERE sha256 = $1', [m.contentSha256])).rejects.toThrow(/content rows never change/);
      await expect(admin.query("UPDATE contents SET content = 'other' WHERE sha256 = $1", [m.contentSha256])).rejects.toThrow(/content rows never change/);
    });

    it('migration 12 reads every text stored before it as indexed, and queues the texts written after it', async () => {
      const db = await createDatabase();
      onTestFinished(() => db.drop());
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      try {
        await migrate(c, PG_MIGRATIONS.filter((m) => m.version < 12));
        await c.query("INSERT INTO contents (sha256, content) VALUES ('old', 'written before migration 12')");
        await migrate(c);
        await c.query("INSERT INTO contents (sha256, content) VALUES ('new', 'written after it')");
        expect((await c.query('SELECT sha256, trigrams_ready FROM contents ORDER BY sha256')).rows).toEqual([
          { sha256: 'new', trigrams_ready: false },
          { sha256: 'old', trigrams_ready: true },
        ]);
      } finally {
        await c.end();
      }
    });

    it('migration 13 finds the same words as the function before it, so the vectors indexed before it stay right', async () => {
      // Migration 1's body, which migration 13 replaced (postgres/schema/v13.ts says why).
      const before = `lower(regexp_replace(unaccent('unaccent'::regdictionary, t), '[\\s\\x21-\\x2f\\x3a-\\x40\\x5b-\\x60\\x7b-\\x7e]+', ' ', 'g'))`;
      const pieces = [
        'a', 'B', 'é', 'Ü', 'ß', 'İ', 'ﬁ', 'ǅ', '1', '9', 'x1', 'www', '.com', 'ab-cd', '3.14', '😀', '\u0301', '\u00a0', '\u2003', '\u3000',
        ' ', '\t', '\n', '\r', '\f', '\v', ...'!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~',
      ];
      // Random strings of those pieces (a seeded generator: the same strings each run), and a 4 KiB text.
      let seed = 7;
      const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
      const texts = Array.from({ length: 3000 }, (_, i) => Array.from({ length: 1 + (i % 40) }, () => pieces[rand(pieces.length)]).join(''));
      texts.push('memory 7: the agent noted something worth keeping about task 7, e-mail a.b@c.io; see /docs/x.md!\n'.repeat(45));
      const { rows } = await admin.query<{ vectors: number; queries: number }>(
        `SELECT count(*) FILTER (WHERE to_tsvector('simple', mnemo_words(t)) IS DISTINCT FROM to_tsvector('simple', ${before}))::int AS vectors,
                count(*) FILTER (WHERE plainto_tsquery('simple', mnemo_words(t))::text IS DISTINCT FROM plainto_tsquery('simple', ${before})::text)::int AS queries
           FROM unnest($1::text[]) AS t`,
        [texts],
      );
      expect(rows[0]).toEqual({ vectors: 0, queries: 0 });
      // The body really is the new one (the comparison above is not of a function with itself).
      const { rows: body } = await admin.query<{ src: string }>(`SELECT pg_get_functiondef('mnemo_words'::regproc) AS src`);
      expect(body[0]!.src).not.toContain('\\s');
    });

    it('version rows are append-only: a direct update or delete is refused, a redaction-shaped update and the store cascade are not', async () => {
      const { workspace, addStore, addMemory } = await fixture();
      const s = await addStore();
      const m = await addMemory(s.id, '/a', 'x');
      await expect(admin.query("UPDATE versions SET content_sha256 = 'y' WHERE id = $1", [m.versionId])).rejects.toThrow(/append-only: only redaction/);
      await expect(admin.query("UPDATE contents SET content = 'y' WHERE sha256 = $1", [m.contentSha256])).rejects.toThrow(/never change/);
      await expect(admin.query('DELETE FROM versions WHERE id = $1', [m.versionId])).rejects.toThrow(/append-only: only deleting the store/);
      await expect(admin.query('TRUNCATE versions')).rejects.toThrow(/append-only/);
      await expect(
        admin.query(
          "UPDATE versions SET path = NULL, content_sha256 = NULL, content_size_bytes = NULL, redacted_at = 'now', redacted_by_type = 'api_actor', redacted_by_id = 'k', created_at = 'moved' WHERE id = $1",
          [m.versionId],
        ),
      ).rejects.toThrow(/append-only/);
      await admin.query(
        "UPDATE versions SET path = NULL, content_sha256 = NULL, content_size_bytes = NULL, redacted_at = 'now', redacted_by_type = 'api_actor', redacted_by_id = 'k' WHERE id = $1",
        [m.versionId],
      );
      await expect(admin.query("UPDATE versions SET redacted_at = 'again' WHERE id = $1", [m.versionId])).rejects.toThrow(/append-only/);
      await expect(admin.query("UPDATE checkpoints SET bundle = '{}'")).resolves.toBeDefined(); // no rows: nothing to refuse
      // A deleted store's versions may go: the purge's steps delete them.
      await storage.deleteStore(workspace.id, s.id);
      while (await storage.purgeDeletedStores());
      expect((await admin.query('SELECT count(*)::int AS n FROM versions WHERE store_id = $1', [s.id])).rows[0].n).toBe(0);
    });

    it('a version takes its store\'s current commit number, or one of the block a directory move names while it inserts it, and no other', async () => {
      const { addStore, addMemory } = await fixture();
      const s = await addStore();
      const m = await addMemory(s.id, '/a', 'x');
      const { commit_seq: n } = (await admin.query('SELECT commit_seq FROM stores WHERE id = $1', [s.id])).rows[0];
      const insert = (c: pg.PoolClient, seq: number) =>
        c.query(
          `INSERT INTO versions (id, store_id, memory_id, operation, path, content_sha256, content_size_bytes, created_at, actor_type, actor_id, commit_seq, path_seq)
           VALUES ($1, $2, $3, 'modified', '/a', $4, 1, 'now', 'api_actor', 'k', $5, 9)`,
          [newId('version'), s.id, m.id, m.contentSha256, seq],
        );
      const attempt = async (setting: string | null, seq: number) => {
        const c = await admin.connect();
        try {
          await c.query('BEGIN');
          if (setting !== null) await c.query("SELECT set_config('mnemo.commit_block', $1, true)", [setting]);
          return await insert(c, seq).then(() => 'inserted', (err: pg.DatabaseError) => err.message);
        } finally {
          await c.query('ROLLBACK');
          c.release();
        }
      };
      const refused = /takes its store's next commit_seq/;
      expect(await attempt(null, n + 1)).toMatch(refused);
      // The block a move names: "<store>:<first>:<last>", this store's, holding the number.
      expect(await attempt(`${s.id}:${n + 2}:${n + 5}`, n + 1)).toMatch(refused);
      expect(await attempt(`${s.id}:${n + 2}:${n + 5}`, n + 6)).toMatch(refused);
      expect(await attempt(`${newId('store')}:${n + 1}:${n + 5}`, n + 1)).toMatch(refused);
      expect(await attempt(`${s.id}:${n + 1}`, n + 1)).toMatch(refused);
      expect(await attempt(`${s.id}:x:${n + 5}`, n + 1)).toMatch(refused);
      expect(await attempt(`${s.id}:${n + 1}:99999999999999999999`, n + 1)).toMatch(refused);
      expect(await attempt('', n + 1)).toMatch(refused);
      expect(await attempt(null, n)).toMatch(/versions_by_commit|duplicate key/);
      expect(await attempt(`${s.id}:${n + 1}:${n + 1}`, n + 1)).toBe('inserted');
      expect(await attempt(`${s.id}:${n + 1}:${n + 5}`, n + 3)).toBe('inserted');
      expect(await attempt(`${s.id}:${n + 1}:${n + 5}`, n + 5)).toBe('inserted');
    });

    it("a move's versions are checked against its block without reading the store's row for each (only their foreign key reads it)", async () => {
      const { addStore, addMemory } = await fixture();
      const s = await addStore();
      const m = await addMemory(s.id, '/a', 'x');
      const n = Number((await admin.query('SELECT commit_seq FROM stores WHERE id = $1', [s.id])).rows[0].commit_seq);
      const c = await admin.connect();
      try {
        await c.query('BEGIN');
        const storeScans = async () => Number((await c.query("SELECT idx_scan FROM pg_stat_xact_user_tables WHERE relname = 'stores'")).rows[0].idx_scan);
        await c.query("SELECT set_config('mnemo.commit_block', $1, true)", [`${s.id}:${n + 1}:${n + 5}`]);
        const before = await storeScans();
        await c.query(
          `INSERT INTO versions (id, store_id, memory_id, operation, path, content_sha256, content_size_bytes, created_at, actor_type, actor_id, commit_seq, path_seq)
           SELECT 'v' || i, $1, $2, 'modified', '/a', $3, 1, 'now', 'api_actor', 'k', $4::bigint + i, 9 FROM generate_series(1, 5) AS i`,
          [s.id, m.id, m.contentSha256, n],
        );
        // Five versions: five foreign-key reads of the store's row; the trigger's own read would make ten.
        expect((await storeScans()) - before).toBe(5);
      } finally {
        await c.query('ROLLBACK');
        c.release();
      }
    });

    it('a fork writes no text bytes: memory rows name their text by sha and keep only their words', async () => {
      const { addStore, addMemory, now, actor, workspace } = await fixture();
      const src = await addStore('src');
      for (let i = 0; i < 5; i++) await addMemory(src.id, `/n${i}.md`, `note ${i} `.repeat(200));
      const textBytes = async () => (await admin.query('SELECT count(*)::int AS n, coalesce(sum(octet_length(content)), 0)::bigint AS bytes FROM contents')).rows[0];
      const before = await textBytes();
      const at = now();
      const target: Store = { id: newId('store'), workspaceId: workspace.id, name: 'fork', description: '', metadata: {}, createdAt: at, updatedAt: at, archivedAt: null };
      await storage.beginFork(target);
      const batch = { sourceId: src.id, targetId: target.id, asOf: at, limit: 2, actor, now: at, newMemoryId: () => newId('memory'), newVersionId: () => newId('version') };
      for (let after = await storage.copyForkBatch({ ...batch, after: null }); after !== null; ) after = await storage.copyForkBatch({ ...batch, after });
      await storage.publishFork(target.id);
      expect(await textBytes()).toEqual(before);
      expect((await storage.getMemoryByPath(target.id, '/n3.md'))?.content).toBe('note 3 '.repeat(200));
      expect((await storage.searchMemories(target.id, { q: 'note', mode: 'fts', pathPrefix: '/', limit: 10, page: null })).data).toHaveLength(5);
      expect((await storage.searchMemories(target.id, { q: 'NOTE 3', mode: 'substring', pathPrefix: '/', limit: 10, page: null })).data.map((h) => h.memory.path)).toEqual(['/n3.md']);
      const columns = (await admin.query("SELECT column_name FROM information_schema.columns WHERE table_name = 'memories'")).rows.map((r) => r.column_name);
      expect(columns).toContain('content_sha256');
      expect(columns).not.toContain('content');
      await storage.deleteStore(workspace.id, target.id);
      await storage.deleteStore(workspace.id, src.id);
    });

    it('mnemo check finds a clean database clean, and reports a disabled trigger and a broken invariant', async () => {
      const { addStore, addMemory } = await fixture();
      const s = await addStore();
      const m = await addMemory(s.id, '/check.md', 'ok');
      expect(await storage.integrityCheck()).toEqual([]);
      expect(await storage.domainCheck()).toEqual([]);
      onTestFinished(async () => {
        await admin.query('ALTER TABLE memories ENABLE TRIGGER store_usage_resize');
      });
      await admin.query('ALTER TABLE memories DISABLE TRIGGER store_usage_resize');
      // The row names its text by sha (postgres/schema/v9.ts): a text stored under a wrong key.
      await admin.query("INSERT INTO contents (sha256, content) VALUES ('tampered', 'tampered')");
      onTestFinished(async () => {
        await admin.query("DELETE FROM contents WHERE sha256 = 'tampered'");
      });
      await admin.query("UPDATE memories SET content_sha256 = 'tampered', content_size_bytes = 8 WHERE id = $1", [m.id]);
      expect(await storage.integrityCheck()).toEqual(['postgresql: trigger store_usage_resize is missing or disabled']);
      const problems = await storage.domainCheck();
      expect(problems.some((p) => p.includes(`memory ${m.id}`) && p.includes('content_sha256 does not match'))).toBe(true);
      expect(problems.some((p) => p.includes(`store ${s.id}: usage counter`))).toBe(true);
      // Leave the shared database consistent for the tests after this one: the store and its rows gone.
      await storage.deleteStore(s.workspaceId, s.id);
      while (await storage.purgeDeletedStores());
    });

    it("mnemo check reports a version without its content time or its memory's creation (invariant 20)", async () => {
      const { addStore, addMemory } = await fixture();
      const s = await addStore();
      onTestFinished(async () => {
        await admin.query('ALTER TABLE versions ENABLE TRIGGER versions_content_times');
        await storage.deleteStore(s.workspaceId, s.id);
        while (await storage.purgeDeletedStores());
      });
      // With the trigger off, an append leaves both out, as no writer can otherwise.
      await admin.query('ALTER TABLE versions DISABLE TRIGGER versions_content_times');
      const m = await addMemory(s.id, '/untimed.md', 'x');
      await admin.query('ALTER TABLE versions ENABLE TRIGGER versions_content_times');
      expect(await storage.domainCheck()).toEqual([`version ${m.versionId} in ${s.id}: has no content_at or memory_created_at (a point-in-time mount would date it 1970)`]);
    });

    it('closing twice is harmless', async () => {
      const other = await secondServer();
      await other.close();
      await expect(other.close()).resolves.toBeUndefined();
    });

    it('two servers opening a new database at once migrate it once', async () => {
      const db = await createDatabase();
      onTestFinished(db.drop);
      const [a, b] = await Promise.all([openPostgresStorage(db.url), openPostgresStorage(db.url)]);
      onTestFinished(() => a.close());
      onTestFinished(() => b.close());
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      onTestFinished(() => c.end());
      expect((await c.query('SELECT version FROM schema_version')).rows).toEqual([{ version: PG_SCHEMA_VERSION }]);
      await a.insertWorkspace({ id: 'w', name: 'w', createdAt: 'now' }, true);
      expect(await b.defaultWorkspace()).toMatchObject({ id: 'w' });
    });

    it('of two servers opening a new database at once, the one that migrates it says from which schema version to which, the other nothing', async () => {
      const db = await createDatabase();
      onTestFinished(db.drop);
      const heard: [number, number][] = [];
      const onMigrated = (from: number, to: number, seconds: number) => {
        expect(seconds).toBeGreaterThanOrEqual(0);
        heard.push([from, to]);
      };
      const both = await Promise.all([openPostgresStorage(db.url, { onMigrated }), openPostgresStorage(db.url, { onMigrated })]);
      for (const s of both) onTestFinished(() => s.close());
      expect(heard).toEqual([[0, PG_SCHEMA_VERSION]]);
    });

    it('servers started at once with one admin key on a new database seed it once, in one default workspace, and none fails', async () => {
      const db = await createDatabase();
      onTestFinished(db.drop);
      const servers = await Promise.all([0, 1, 2, 3].map(() => openPostgresStorage(db.url)));
      for (const s of servers) onTestFinished(() => s.close());
      const services = servers.map((s) => createService({ storage: s, clock }));
      for (const s of services) onTestFinished(() => s.durability.stop());
      const secret = 'mnemo-test-one-admin-key-for-every-host';
      const results = await Promise.allSettled(services.flatMap((s) => [s.keys.bootstrapAdminKey(secret), s.keys.bootstrapAdminKey(secret)]));
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      expect(results.filter((r) => r.status === 'fulfilled' && r.value.minted !== null)).toHaveLength(1);
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      onTestFinished(() => c.end());
      expect((await c.query('SELECT count(*)::int AS n FROM workspaces')).rows).toEqual([{ n: 1 }]);
      expect((await c.query('SELECT key_hash, seeded FROM api_keys')).rows).toEqual([{ key_hash: hashSecret(secret), seeded: true }]);
    });

    it('a server whose code is older than the database schema refuses to start and says so', async () => {
      const db = await createDatabase();
      onTestFinished(db.drop);
      const newer = [...PG_MIGRATIONS, { version: PG_SCHEMA_VERSION + 1, sql: 'CREATE TABLE from_the_future (x int)' }];
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      onTestFinished(() => c.end());
      await migrate(c, newer);
      const err = await openPostgresStorage(db.url).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SchemaTooNewError);
      expect((err as Error).message).toBe(
        `PostgreSQL schema version ${PG_SCHEMA_VERSION + 1} is newer than this mnemo understands (${PG_SCHEMA_VERSION}): another host runs a newer mnemo; upgrade this one before starting it`,
      );
      // The refusal changed nothing.
      expect((await c.query('SELECT version FROM schema_version')).rows).toEqual([{ version: PG_SCHEMA_VERSION + 1 }]);
    });
  });

  describe('transactions', () => {
    /**
     * Every round trip of this process, in order: the statements sent together in one write (a
     * transaction's pipelined flight, issued in one synchronous burst; a pooled read is one), joined by '; '.
     */
    function countQueries(): string[] {
      const sent: string[] = [];
      let inFlight = false;
      const original = pg.Client.prototype.query;
      const spy = function (this: pg.Client, ...args: unknown[]) {
        const q = args[0];
        const text = typeof q === 'string' ? q : String((q as { text?: string }).text);
        // The change listener's heartbeat is no round trip of the operation under count.
        if (text === 'SELECT 1') return (original as (...a: unknown[]) => unknown).apply(this, args);
        if (inFlight) {
          sent[sent.length - 1] += `; ${text}`;
        } else {
          sent.push(text);
          inFlight = true;
          queueMicrotask(() => (inFlight = false));
        }
        return (original as (...a: unknown[]) => unknown).apply(this, args);
      };
      pg.Client.prototype.query = spy as typeof original;
      onTestFinished(() => void (pg.Client.prototype.query = original));
      return sent;
    }

    it("a mount's save is two round trips to PostgreSQL: BEGIN with the probe under the store lock (the service's admission with it), then the append with the COMMIT", async () => {
      const { workspace, addStore } = await fixture();
      const s = await addStore();
      // Through the service, as a mount saves: its admission (the store is the caller's, it has room)
      // runs on what the probe finds, where the store and usage reads before it were two round trips more.
      // Its background sync of relaxed commits never runs here: under load it fell inside the count.
      const service = createService({ storage, clock, syncSchedule: () => () => {} });
      onTestFinished(() => service.durability.stop());
      const mount: Caller = { workspaceId: workspace.id, actor: { type: 'session_actor', sessionId: newId('session') } };
      const sent = countQueries();
      const save = (content: string) => service.saveMemoryAt(mount, s.id, { memoryId: newId('memory'), path: '/r/t.md', content });
      const probe = new RegExp(`^BEGIN; SET LOCAL synchronous_commit = off; SAVEPOINT \\w+; SELECT \\* FROM mnemo_write_probe\\(\\$1, \\$2`);
      const shape = [probe, /^SELECT mnemo_append\(.*; RELEASE SAVEPOINT \w+; COMMIT$/s];
      const created = await save('first');
      expect(sent).toHaveLength(2);
      sent.forEach((q, i) => expect(q).toMatch(shape[i]!));
      sent.length = 0;
      // An update of the memory at the path: the same two.
      const updated = await save('second');
      expect(sent).toHaveLength(2);
      sent.forEach((q, i) => expect(q).toMatch(shape[i]!));
      sent.length = 0;
      expect(updated.memory.id).toBe(created.memory.id);
      expect((await storage.getMemoryByPath(s.id, '/r/t.md'))?.content).toBe('second');
      // A rename (mv): the probe with the admission, the lookup of a memory it replaces, the overlap
      // check of the new path, then the append with the COMMIT; the store read before it is gone too.
      sent.length = 0;
      await service.moveMemory(mount, s.id, created.memory.id, '/r/u.md');
      expect(sent).toHaveLength(4);
      expect(sent[3]).toMatch(shape[1]!);
      expect(sent[0]).toMatch(probe);
      // A chmod (no version): the probe with the admission, then the row's attributes and the
      // notice for other servers with the COMMIT.
      sent.length = 0;
      await service.setMemoryMode(mount, s.id, created.memory.id, 0o600);
      expect(sent).toHaveLength(2);
      expect(sent[0]).toMatch(probe);
      expect(sent[1]).toMatch(/^UPDATE memories SET mode = .*; RELEASE SAVEPOINT \w+; SELECT pg_notify\(.*; COMMIT$/s);
      expect((await storage.getMemory(s.id, created.memory.id))?.mode).toBe(0o600);
      // The file's storage is shared: leave no relaxed commit for the tests that count them.
      await storage.syncCommits();
    });

    it("a mount's save of a file it made is one round trip, and one whose path another writer took meanwhile saves over that memory", async () => {
      const { workspace, addStore, addMemory } = await fixture();
      const s = await addStore();
      // Its background sync of relaxed commits never runs here: under load it fell inside the count.
      const service = createService({ storage, clock, syncSchedule: () => () => {} });
      onTestFinished(() => service.durability.stop());
      const mount: Caller = { workspaceId: workspace.id, actor: { type: 'session_actor', sessionId: newId('session') } };
      const sent = countQueries();
      const save = (path: string, content: string) =>
        service.saveMemoryAt(mount, s.id, { memoryId: newId('memory'), path, content, mode: 0o640, attrs: { uid: 7 }, adds: true });
      const made = await save('/new.md', 'first');
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatch(/^BEGIN; SET LOCAL synchronous_commit = off; SAVEPOINT \w+; SELECT mnemo_create_guarded\(\$1.*; RELEASE SAVEPOINT \w+; COMMIT$/s);
      expect(made).toMatchObject({ changed: true, memory: { path: '/new.md', content: 'first', mode: 0o640, uid: 7 } });
      expect(await storage.getMemory(s.id, made.memory.id)).toMatchObject({ content: 'first', mode: 0o640, uid: 7 });
      // Another writer created the path first: refused, run again probe first, and saved over it.
      const theirs = await addMemory(s.id, '/raced.md', 'theirs');
      sent.length = 0;
      const over = await save('/raced.md', 'mine');
      expect(sent[0]).toMatch(/mnemo_create_guarded/);
      expect(sent.slice(1).some((q) => q.includes('mnemo_write_probe'))).toBe(true);
      expect(over).toMatchObject({ changed: true, memory: { id: theirs.id, content: 'mine' } });
      expect((await storage.listVersions(s.id, verQ({ memoryId: theirs.id }))).data.map((v) => v.operation)).toEqual(['modified', 'created']);
      await storage.syncCommits();
    });

    it("an API write's admission costs no round trip: the store and its usage come with the probe, under the lock", async () => {
      const { workspace, stamp, addStore } = await fixture();
      const s = await addStore();
      const seen: WriteFound[] = [];
      const admission = { workspaceId: workspace.id, admit: (f: WriteFound) => void seen.push(f) };
      const sent = countQueries();
      // As a group commit runs an API create: its own savepoint inside the group's transaction.
      const created = await storage.atomic((tx) =>
        tx.atomic((t) => t.createMemory({ ...stamp(), admission, storeId: s.id, memoryId: newId('memory'), path: '/api.md', content: 'four' })),
      );
      // The append rides with the savepoints' RELEASEs and the COMMIT.
      const shape = [/^BEGIN; SAVEPOINT \w+; SAVEPOINT \w+; SELECT \* FROM mnemo_write_probe\(\$1/, /^SELECT mnemo_append\(.*; RELEASE SAVEPOINT \w+; RELEASE SAVEPOINT \w+; COMMIT$/s];
      expect(sent).toHaveLength(2);
      sent.forEach((q, i) => expect(q).toMatch(shape[i]!));
      expect(seen).toEqual([{ storeFound: true, usage: { memories: 0, bytes: 0 }, target: null }]);
      sent.length = 0;
      // An update: the same two, and the admission sees the memory it replaces.
      await storage.atomic((tx) => tx.atomic((t) => t.updateMemory({ ...stamp(), admission, storeId: s.id, memoryId: created.id, content: 'five!' })));
      expect(sent).toHaveLength(2);
      sent.forEach((q, i) => expect(q).toMatch(shape[i]!));
      expect(seen[1]).toEqual({ storeFound: true, usage: { memories: 1, bytes: 4 }, target: { contentSizeBytes: 4 } });
      sent.length = 0;
      // A retrieve after its key: the store and the memory in one statement.
      expect(await storage.getMemoryInStore(workspace.id, s.id, created.id)).toMatchObject({ storeFound: true, memory: { id: created.id, content: 'five!' } });
      expect(sent).toHaveLength(1);
    });

    it("each write of an API group after the first is one round trip: the write before's append rides with its probe", async () => {
      const { workspace, stamp, addStore } = await fixture();
      const s = await addStore();
      const admission = { workspaceId: workspace.id, admit: () => {} };
      const writes = createGroupCommit(storage);
      const sent = countQueries();
      const create = (path: string) => writes.run((tx) => tx.createMemory({ ...stamp(), admission, storeId: s.id, memoryId: newId('memory'), path, content: path }));
      // Asked in one turn of the event loop: one group.
      const made = await Promise.all(['/g/a.md', '/g/b.md', '/g/c.md'].map(create));
      expect(sent).toHaveLength(4);
      expect(sent[0]).toMatch(/^BEGIN; SAVEPOINT \w+; SAVEPOINT \w+; SELECT \* FROM mnemo_write_probe\(\$1/);
      for (const q of sent.slice(1, 3)) expect(q).toMatch(/^SELECT mnemo_append\(.*; RELEASE SAVEPOINT \w+; RELEASE SAVEPOINT \w+; SAVEPOINT \w+; SAVEPOINT \w+; SELECT \* FROM mnemo_write_probe\(\$1/s);
      expect(sent[3]).toMatch(/^SELECT mnemo_append\(.*; RELEASE SAVEPOINT \w+; RELEASE SAVEPOINT \w+; COMMIT$/s);
      for (const m of made) expect((await storage.getMemory(s.id, m.id))?.content).toBe(m.path);
    });

    /**
     * An admission as the service's: `admit` records what it was shown and refuses a store it was not
     * shown or one holding `maxMemories`; `clearBelow` says where it would say yes.
     */
    function admissionOf(workspaceId: string, maxMemories = 1000) {
      const shown: WriteFound[] = [];
      const admission = {
        workspaceId,
        admit(f: WriteFound) {
          shown.push(f);
          if (!f.storeFound) throw new MnemoError('not_found', 'memory store not found');
          if (f.usage.memories >= maxMemories) throw new MnemoError('limit_exceeded', 'the store is full');
        },
        clearBelow: () => ({ memories: maxMemories - 1, bytes: 1_000_000 }),
      };
      return { shown, admission };
    }

    it('an API create the service admits on its usage alone is one statement: alone or three in a group, one round trip, and nothing asks `admit`', async () => {
      const { workspace, stamp, addStore } = await fixture();
      const s = await addStore();
      const { shown, admission } = admissionOf(workspace.id);
      const writes = createGroupCommit(storage);
      const sent = countQueries();
      const create = (path: string) => writes.run((tx) => tx.createMemory({ ...stamp(), admission, storeId: s.id, memoryId: newId('memory'), path, content: path }));
      const one = await create('/one.md');
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatch(/^BEGIN; SAVEPOINT \w+; SAVEPOINT \w+; SELECT mnemo_create_guarded\(\$1.*; RELEASE SAVEPOINT \w+; RELEASE SAVEPOINT \w+; COMMIT$/s);
      sent.length = 0;
      const made = await Promise.all(['/g/a.md', '/g/b.md', '/g/c.md'].map(create));
      expect(sent).toHaveLength(1);
      expect(sent[0]!.match(/mnemo_create_guarded/g)).toHaveLength(3);
      expect(shown).toEqual([]);
      for (const m of [one, ...made]) {
        expect(await storage.getMemory(s.id, m.id)).toMatchObject({ path: m.path, content: m.path, versionId: m.versionId });
        expect((await storage.listVersions(s.id, verQ({ memoryId: m.id }))).data).toMatchObject([{ id: m.versionId, operation: 'created' }]);
      }
      expect(await storage.storeUsage(s.id)).toEqual({ memories: 4, bytes: '/one.md/g/a.md/g/b.md/g/c.md'.length });
    });

    it('a guarded create whose path is taken runs its whole group again probe first: the rules refuse it there, and the others land', async () => {
      const { workspace, stamp, addStore, addMemory } = await fixture();
      const s = await addStore();
      await addMemory(s.id, '/taken.md');
      await addMemory(s.id, '/dir/deep.md');
      const { shown, admission } = admissionOf(workspace.id);
      const writes = createGroupCommit(storage);
      const sent = countQueries();
      const create = (path: string) => writes.run((tx) => tx.createMemory({ ...stamp(), admission, storeId: s.id, memoryId: newId('memory'), path, content: path }));
      // The same path, a file below a file, a file where a directory is: each refused as on the probe's path.
      const outcomes = await Promise.allSettled(['/g/a.md', '/taken.md', '/taken.md/below.md', '/dir', '/g/c.md'].map(create));
      expect(outcomes.map((o) => (o.status === 'fulfilled' ? 'ok' : (o.reason as MnemoError).code))).toEqual(['ok', 'path_conflict', 'path_conflict', 'path_conflict', 'ok']);
      // The first run's one round trip, refused; then the group again with its probes, which showed `admit` each store.
      expect(sent[0]!.match(/mnemo_create_guarded/g)).toHaveLength(5);
      expect(sent.slice(1).every((q) => !q.includes('mnemo_create_guarded'))).toBe(true);
      // (The refused COMMIT's connection is told ROLLBACK, as after any failed COMMIT.)
      expect(sent[1]).toBe('ROLLBACK');
      expect(sent[2]).toMatch(/^BEGIN; SAVEPOINT \w+; SAVEPOINT \w+; SELECT \* FROM mnemo_write_probe\(\$1/);
      expect(shown).toHaveLength(5);
      const paths = (await storage.listMemories(s.id, memQ())).data.map((m) => (m.type === 'memory' ? m.memory.path : null));
      expect(paths).toEqual(['/dir/deep.md', '/g/a.md', '/g/c.md', '/taken.md']);
      expect(await storage.storeUsage(s.id)).toMatchObject({ memories: 4 });
    });

    it('a refusal met inside a savepoint still runs the whole transaction again: nothing after it reaches the server, not even the rollback to that savepoint', async () => {
      const { workspace, stamp, addStore, addMemory } = await fixture();
      const s = await addStore();
      await addMemory(s.id, '/taken.md');
      const { admission } = admissionOf(workspace.id);
      const writes = createGroupCommit(storage);
      // Each job creates and then reads in one savepoint, as an idempotent create records its receipt:
      // the read carries the held create out and meets its refusal, which the savepoint's rollback
      // would otherwise have undone, leaving a transaction that commits the others.
      const job = (path: string) =>
        writes.run((tx) =>
          tx.atomic(async (t) => {
            const m = await t.createMemory({ ...stamp(), admission, storeId: s.id, memoryId: newId('memory'), path, content: path });
            return (await t.getMemory(s.id, m.id))!.content;
          }),
        );
      const outcomes = await Promise.allSettled(['/a.md', '/taken.md', '/b.md'].map(job));
      expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as MnemoError).code))).toEqual(['/a.md', 'path_conflict', '/b.md']);
      expect(await storage.storeUsage(s.id)).toMatchObject({ memories: 3 });
    });

    it('a guarded create refuses past the usage the service gave it, and `admit` answers: the limit the store reached', async () => {
      const { workspace, stamp, addStore } = await fixture();
      const s = await addStore();
      const { shown, admission } = admissionOf(workspace.id, 2);
      const create = (path: string) => storage.atomic((tx) => tx.createMemory({ ...stamp(), admission, storeId: s.id, memoryId: newId('memory'), path, content: 'x' }));
      await create('/1.md');
      await create('/2.md');
      expect(shown).toEqual([]);
      expect(await codeOf(() => create('/3.md'))).toBe('limit_exceeded');
      expect(shown).toMatchObject([{ usage: { memories: 2, bytes: 2 } }]);
      expect(await storage.storeUsage(s.id)).toEqual({ memories: 2, bytes: 2 });
    });

    it("a guarded create in an archived store, another workspace's, or one with an expired memory waiting: each runs probe first, and the rules answer", async () => {
      const { workspace, stamp, addStore, now } = await fixture();
      const create = (storeId: string, path: string, a: ReturnType<typeof admissionOf>['admission'], at: string = stamp().now) =>
        storage.atomic((tx) => tx.createMemory({ ...stamp(), now: at, admission: a, storeId, memoryId: newId('memory'), path, content: 'x' }));
      const archived = await addStore('archived');
      await storage.archiveStore(workspace.id, archived.id, now());
      expect(await codeOf(() => create(archived.id, '/a.md', admissionOf(workspace.id).admission))).toBe('archived');
      const theirs = admissionOf(newId('workspace'));
      const mine = await addStore('mine');
      expect(await codeOf(() => create(mine.id, '/a.md', theirs.admission))).toBe('not_found');
      expect(theirs.shown).toMatchObject([{ storeFound: false }]);
      // An expired memory at the path: the probe's path purges it first, then the create lands there.
      const s = await addStore('ttl');
      const old = await storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/ttl.md', content: 'old', expiresAt: new Date(clockMs + 60_000).toISOString() });
      clockMs += 120_000;
      onTestFinished(() => {
        clockMs -= 120_000;
      });
      const fresh = admissionOf(workspace.id);
      const made = await create(s.id, '/ttl.md', fresh.admission, clock());
      expect(fresh.shown).toHaveLength(1);
      expect(await storage.getMemoryByPath(s.id, '/ttl.md')).toMatchObject({ id: made.id, content: 'x' });
      expect((await storage.listVersions(s.id, verQ({ memoryId: old.id }))).data[0]).toMatchObject({ operation: 'deleted' });
    });

    it.each([
      ['first', '/boom/1.md'],
      ['middle', '/boom/2.md'],
      ['last', '/boom/3.md'],
    ])("an append that fails after its write returned (the %s of a group) fails the whole group: no write is reported saved, none is kept", async (_, failing) => {
      const { workspace, stamp, addStore } = await fixture();
      const s = await addStore();
      // The database refuses one version row, as a failing disk or a broken invariant would: nothing the probe checks.
      const trigger = `boom_${newId('version').slice(-10).toLowerCase()}`;
      await admin.query(`CREATE FUNCTION ${trigger}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'boom'; END $$`);
      await admin.query(`CREATE TRIGGER ${trigger} BEFORE INSERT ON versions FOR EACH ROW WHEN (NEW.store_id = '${s.id}' AND NEW.path = '${failing}') EXECUTE FUNCTION ${trigger}()`);
      onTestFinished(async () => {
        await admin.query(`DROP TRIGGER ${trigger} ON versions`);
        await admin.query(`DROP FUNCTION ${trigger}()`);
      });
      const admission = { workspaceId: workspace.id, admit: () => {} };
      const writes = createGroupCommit(storage);
      const paths = ['/boom/1.md', '/boom/2.md', '/boom/3.md'];
      const outcomes = await Promise.allSettled(
        paths.map((path) => writes.run((tx) => tx.createMemory({ ...stamp(), admission, storeId: s.id, memoryId: newId('memory'), path, content: 'x' }))),
      );
      expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
      for (const path of paths) expect(await storage.getMemoryByPath(s.id, path)).toBeNull();
      expect((await storage.listVersions(s.id, verQ())).data).toHaveLength(0);
      // The connection and the store are fine afterwards: the next group commits.
      const next = await writes.run((tx) => tx.createMemory({ ...stamp(), admission, storeId: s.id, memoryId: newId('memory'), path: '/after.md', content: 'ok' }));
      expect((await storage.getMemory(s.id, next.id))?.content).toBe('ok');
    });

    it('an operation that fails part-way rolls back everything it wrote', async () => {
      const { stamp, addStore, addMemory } = await fixture();
      const s = await addStore();
      await addMemory(s.id, '/d/a.md');
      await addMemory(s.id, '/d/' + 'b'.repeat(200) + '.md');
      // The second moved path is too deep: the whole move fails, the first one included.
      const deep = '/' + Array(30).fill('deep').join('/');
      expect(await codeOf(() => storage.moveTree({ storeId: s.id, from: '/d', to: deep, actor: stamp().actor, now: stamp().now, versionIds: () => newId('version') }))).not.toBe(undefined);
      expect(await storage.getMemoryByPath(s.id, '/d/a.md')).not.toBeNull();
      expect((await storage.listVersions(s.id, verQ())).data).toHaveLength(2);
    });

    it('atomic commits its writes together, or none when it throws', async () => {
      const { stamp, addStore } = await fixture();
      const s = await addStore();
      await storage.atomic(async (tx) => {
        await tx.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/a', content: 'a' });
        await tx.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/b', content: 'b' });
      });
      expect(await storage.getMemoryByPath(s.id, '/b')).not.toBeNull();
      const a = (await storage.getMemoryByPath(s.id, '/a'))!;
      const err = await storage
        .atomic(async (tx) => {
          await tx.updateMemory({ ...stamp(), storeId: s.id, memoryId: a.id, content: 'changed' });
          expect((await tx.getMemory(s.id, a.id))?.content).toBe('changed');
          await tx.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/a/below', content: 'x' });
        })
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'path_conflict' });
      expect(await storage.getMemory(s.id, a.id)).toEqual(a);
    });

    it('a write refused inside atomic can be caught there, and a nested atomic rolls back alone', async () => {
      const { stamp, addStore } = await fixture();
      const s = await addStore();
      const marks = { change: storage.changeMark(), own: storage.ownWriteMark() };
      await storage.atomic(async (tx) => {
        await tx.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/a', content: 'a' });
        expect(await codeOf(() => tx.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/a', content: 'dup' }))).toBe('path_conflict');
        await tx
          .atomic(async (inner) => {
            await inner.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/inner', content: 'x' });
            throw new Error('inner refused');
          })
          .catch((e: Error) => expect(e.message).toBe('inner refused'));
        await tx.atomic(async (inner) => {
          await inner.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/kept', content: 'k' });
        });
      });
      expect(await storage.getMemoryByPath(s.id, '/a')).toMatchObject({ content: 'a' });
      expect(await storage.getMemoryByPath(s.id, '/inner')).toBeNull();
      expect(await storage.getMemoryByPath(s.id, '/kept')).not.toBeNull();
      expect(storage.changeMark() - marks.change).toBe(storage.ownWriteMark() - marks.own);
      expect(storage.ownWriteMark()).toBeGreaterThan(marks.own);
    });

    it("a write's append goes out with the transaction's COMMIT: one that fails there fails the whole transaction, durable or not", async () => {
      const { stamp, addStore } = await fixture();
      const s = await addStore();
      // Two creates with one version id: the second append breaks the versions' primary key.
      const twice = (durable: boolean, prefix: string) =>
        storage.atomic(async (tx) => {
          const versionId = newId('version');
          await tx.createMemory({ ...stamp(), versionId, storeId: s.id, memoryId: newId('memory'), path: `/${prefix}-1`, content: 'one' });
          // A held append has not run yet, so there is nothing to catch here: it fails at the COMMIT.
          await tx.createMemory({ ...stamp(), versionId, storeId: s.id, memoryId: newId('memory'), path: `/${prefix}-2`, content: 'two' }).catch(() => {});
        }, { durable });
      for (const [durable, prefix] of [[true, 'durable'], [false, 'relaxed']] as const) {
        await expect(twice(durable, prefix)).rejects.toThrow(/duplicate key/);
        expect(await storage.getMemoryByPath(s.id, `/${prefix}-1`)).toBeNull();
        expect(await storage.getMemoryByPath(s.id, `/${prefix}-2`)).toBeNull();
      }
      await storage.syncCommits();
    });

    it('a transaction a failed statement left aborted never reports success: its COMMIT, which PostgreSQL answers with ROLLBACK, fails', async () => {
      const { stamp, addStore } = await fixture();
      const s = await addStore();
      const taken = (await storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/taken', content: 't' })).versionId;
      // A's append (a version id already used) is held, then sent ahead of B's savepoint and probe:
      // it fails there, B's savepoint never existed, and B's failure is caught as a caller may.
      const attempt = storage.atomic(async (tx) => {
        await tx.createMemory({ ...stamp(), versionId: taken, storeId: s.id, memoryId: newId('memory'), path: '/a', content: 'a' });
        await tx.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/b', content: 'b' }).catch(() => {});
      }, { durable: false });
      await expect(attempt).rejects.toThrow(/rolled back/);
      expect(await storage.getMemoryByPath(s.id, '/a')).toBeNull();
      await storage.syncCommits();
    });

    it('a transaction whose COMMIT was answered with ROLLBACK gives its connection back to the pool, not to the bin', async () => {
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      onTestFinished(() => pool.end());
      const backend = async () => (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const before = await backend();
      // A held statement that fails when the next one takes it out, caught as a caller may: COMMIT answers ROLLBACK.
      const attempt = inTransaction(pool, async (c) => {
        await runWithNext(c, 'SELECT 1 / 0', []);
        await run(c, 'SELECT 1').catch(() => {});
      });
      await expect(attempt).rejects.toThrow(/rolled back/);
      // The same connection serves the next caller (a healthy one was closed and replaced before).
      expect(await backend()).toBe(before);
      expect(pool.totalCount).toBe(1);
    });

    it('a transaction on a pool that does not pipeline asks for its held statements one at a time, in order, and still fails with the first failure', async () => {
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      onTestFinished(() => pool.end());
      // Per client, how many of its queries were asked for and not yet answered, at most: above one,
      // node-postgres queues the rest behind the first (deprecated, to go in pg@9) and warns.
      const inFlight = new Map<object, number>();
      let most = 0;
      const original = pg.Client.prototype.query;
      pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
        const n = (inFlight.get(this) ?? 0) + 1;
        inFlight.set(this, n);
        most = Math.max(most, n);
        const done = () => void inFlight.set(this, inFlight.get(this)! - 1);
        const answer = (original as (...a: unknown[]) => Promise<unknown>).apply(this, args);
        answer.then(done, done);
        return answer;
      } as typeof original;
      onTestFinished(() => void (pg.Client.prototype.query = original));
      const order: string[] = [];
      await inTransaction(pool, async (c) => {
        await runWithNext(c, "SELECT set_config('mnemo.t', $1, true)", ['a']);
        order.push((await first<{ v: string }>(c, "SELECT current_setting('mnemo.t') || '+b' AS v"))!.v);
      });
      expect(order).toEqual(['a+b']);
      expect(most).toBe(1);
      // A held statement that fails: its own error, not the aborted transaction's of the one after it.
      const err = await inTransaction(pool, async (c) => {
        await runWithNext(c, 'SELECT 1 / 0', []);
        await run(c, 'SELECT 1');
      }).catch((e: unknown) => e);
      expect((err as pg.DatabaseError).code).toBe('22012');
      expect(most).toBe(1);
    });

    it('a receipt written with its mutation in one atomic call goes when the mutation fails, and a failed relaxed commit counts nothing', async () => {
      const { workspace, stamp, addStore, addMemory, now } = await fixture();
      const s = await addStore();
      await addMemory(s.id, '/taken');
      const scope = { workspaceId: workspace.id, apiKeyId: newId('apiKey'), route: 'POST /v1/memory_stores/{id}/memories', key: 'k' };
      const err = await storage
        .atomic(async (tx) => {
          await tx.insertReceipt({ ...scope, fingerprint: 'f', status: 201, body: '{}', storeId: s.id, versionId: null, createdAt: now(), expiresAt: now() });
          await tx.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/taken', content: 'again' });
        }, { durable: false })
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'path_conflict' });
      expect(await storage.findReceipt(scope)).toBeNull();
      expect(storage.unsyncedCommits()).toBe(0);
    });

    it('a commit that is not durable is counted until syncCommits flushes the WAL', async () => {
      const { stamp, addStore } = await fixture();
      const s = await addStore();
      expect(storage.unsyncedCommits()).toBe(0);
      await storage.atomic((tx) => tx.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/nd', content: 'x' }), { durable: false });
      expect(storage.unsyncedCommits()).toBe(1);
      expect(await storage.getMemoryByPath(s.id, '/nd')).not.toBeNull();
      await storage.syncCommits();
      expect(storage.unsyncedCommits()).toBe(0);
      await storage.atomic((tx) => tx.atomic(() => tx.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/d2', content: 'x' }), { durable: false }));
      expect(storage.unsyncedCommits()).toBe(0);
    });
  });

  describe('reads by key', () => {
    /** PostgreSQL's connections (backends) of a storage opened with `application_name` `name`. */
    const backends = async (name: string) =>
      Number((await admin.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1', [name])).rows[0]!.n);

    it('made at once on their own, retrieves, stats and key lookups share one connection, which closing the storage ends; a listing beside them takes the pool', async () => {
      const { workspace, addStore, addMemory } = await fixture();
      const s = await addStore();
      const made = [];
      for (let i = 0; i < 8; i++) made.push(await addMemory(s.id, `/lane/m${i}.md`, `text ${i}`));
      const name = `mnemo_lane_${process.pid}_${Date.now()}`;
      const other = await openPostgresStorage(`${url}${url.includes('?') ? '&' : '?'}application_name=${name}`, { clock });
      let closed = false;
      onTestFinished(() => (closed ? undefined : other.close()));
      const [found, metas, store, key] = await Promise.all([
        Promise.all(made.map((m) => other.getMemoryInStore(workspace.id, s.id, m.id))),
        Promise.all(made.map((m) => other.getMemoryMetaByPath(s.id, m.path))),
        other.getStore(workspace.id, s.id),
        other.findApiKeyByHash('no such hash'),
      ]);
      expect(found.map((f) => f.memory?.content)).toEqual(made.map((m) => m.content));
      expect(found.every((f) => f.storeFound)).toBe(true);
      expect(metas.map((m) => m?.id)).toEqual(made.map((m) => m.id));
      expect(store?.id).toBe(s.id);
      expect(key).toBeNull();
      // Eighteen reads, one backend (on the pool, each had checked out a connection of its own).
      expect(await backends(name)).toBe(1);
      // A listing is no read by key: it runs on a pooled connection, beside the lane.
      expect((await other.listMemories(s.id, memQ({ pathPrefix: '/lane/', depth: 0, limit: 100 }))).data).toHaveLength(8);
      expect(await backends(name)).toBe(2);
      closed = true;
      await other.close();
      await eventually(async () => expect(await backends(name)).toBe(0));
    });
  });

  describe('reads by id', () => {
    it("find their row through the id's unique index whatever the statistics say: generic plans made before a new database's first ANALYZE (the adapter's and the write probe's) read no store's whole range", async () => {
      const db = await createDatabase();
      onTestFinished(db.drop);
      const fresh = await openPostgresStorage(db.url, { clock });
      onTestFinished(() => fresh.close());
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      onTestFinished(() => c.end());
      // Statistics as a new database has them for its first minute: none (autovacuum would analyze later).
      for (const t of ['stores', 'memories', 'versions']) await c.query(`ALTER TABLE ${t} SET (autovacuum_enabled = false)`);
      const workspace = { id: newId('workspace'), name: 'w', createdAt: new Date(T0).toISOString() };
      await fresh.insertWorkspace(workspace, false);
      const at = new Date(T0).toISOString();
      const store: Store = { id: newId('store'), workspaceId: workspace.id, name: 's', description: '', metadata: {}, createdAt: at, updatedAt: at, archivedAt: null };
      await fresh.insertStore(store);
      const actor: Actor = { type: 'api_actor', apiKeyId: newId('apiKey') };
      const made = [];
      for (let i = 0; i < 300; i++) {
        made.push(await fresh.createMemory({ actor, now: at, versionId: newId('version'), storeId: store.id, memoryId: newId('memory'), path: `/m/${i}.md`, content: `text ${i}` }));
      }
      const m = made[150]!;
      const changed = await fresh.updateMemory({ actor, now: at, versionId: newId('version'), storeId: store.id, memoryId: made[100]!.id, content: 'text 100, again' });
      const checkpoints: Checkpoint[] = [];
      for (let i = 0; i < 20; i++) {
        const bundle = {
          id: newId('checkpoint'), storeId: store.id, agentId: 'agent', sessionId: 'sess', goal: 'g', summary: 's', constraints: [], decisions: [],
          openTasks: [], nextAction: null, capsule: null, references: [], sizeBytes: 10, createdAt: at, createdBy: actor,
        } as unknown as Omit<Checkpoint, 'revision' | 'isLatest'>;
        checkpoints.push(await fresh.insertCheckpoint({ checkpoint: bundle, expectedLatestId: checkpoints.at(-1)?.id ?? null }));
      }
      const keys = [];
      for (let i = 0; i < 20; i++) {
        const key = { id: newId('apiKey'), workspaceId: workspace.id, name: `k${i}`, role: 'read_only' as const, storeIds: null, allWorkspaces: false, createdAt: at, revokedAt: null };
        await fresh.insertApiKey(key, `hash-${i}`);
        keys.push(key);
      }
      // The statements the reads send, with their parameters.
      const sent: { text: string; values: unknown[] }[] = [];
      const original = pg.Client.prototype.query;
      pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
        const q = args[0] as { text?: string; values?: unknown[] };
        if (typeof q === 'object' && q.text) sent.push({ text: q.text, values: q.values ?? [] });
        return (original as (...a: unknown[]) => unknown).apply(this, args);
      } as typeof original;
      try {
        expect((await fresh.getMemoryInStore(workspace.id, store.id, m.id)).memory?.id).toBe(m.id);
        expect((await fresh.getMemory(store.id, m.id))?.id).toBe(m.id);
        expect((await fresh.getStore(workspace.id, store.id))?.id).toBe(store.id);
        expect((await fresh.getVersion(store.id, m.versionId))?.id).toBe(m.versionId);
        expect((await fresh.getCheckpoint(store.id, checkpoints[10]!.id))?.id).toBe(checkpoints[10]!.id);
        expect(await fresh.findReferencedMemory(store.id, { memoryId: m.id, path: null })).toMatchObject({ state: 'live', memory: { id: m.id } });
        expect((await fresh.previousVersion(store.id, changed.memory.versionId))?.id).toBe(made[100]!.versionId);
        expect((await fresh.getApiKey(workspace.id, keys[10]!.id))?.id).toBe(keys[10]!.id);
      } finally {
        pg.Client.prototype.query = original;
      }
      expect(sent).toHaveLength(8);
      await c.query('SET plan_cache_mode = force_generic_plan');
      for (const [i, { text, values }] of sent.entries()) {
        await c.query(`PREPARE r${i} AS ${text}`);
        const args = values.map((v) => `'${String(v)}'`).join(', ');
        const plan = (await c.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE r${i}(${args})`)).rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
        // Each row by its id's unique index (or one row of a one-row table), never a store's range of
        // memories, versions or checkpoints, or a workspace's keys. (A version's predecessor is then
        // read through its memory's versions: that range is the question.)
        const ranges = text.includes('JOIN LATERAL') ? /memories_store_path|versions_by_(?!memory)|stores_by_workspace/ : /memories_store_path|versions_by_|stores_by_workspace/;
        expect(plan, text).not.toMatch(ranges);
        expect(plan, text).not.toMatch(/api_keys_by_workspace|checkpoints_store_id/);
        expect(plan, text).not.toMatch(/Rows Removed by Filter: ([2-9]|\d\d)/);
        expect(plan, text).toMatch(/_id_key|api_keys_pkey/);
        if (text.includes('JOIN LATERAL')) expect(plan, text).toMatch(/Index Scan Backward using versions_by_memory on versions b \(actual rows=1 loops=1\)/);
      }
      // The write probe (an update's, a delete's, a move's by id), whose plans PL/pgSQL caches: it
      // reads the memory through the id's index, never the store's (store_id, path) range.
      const tuplesRead = async () => {
        await c.query('SELECT pg_stat_force_next_flush()');
        const r = await c.query<{ name: string; n: string }>(
          "SELECT indexrelname AS name, idx_tup_read AS n FROM pg_stat_user_indexes WHERE indexrelname IN ('memories_store_path', 'memories_id_key')",
        );
        return Object.fromEntries(r.rows.map((x) => [x.name, Number(x.n)]));
      };
      const before = await tuplesRead();
      for (let i = 0; i < 3; i++) {
        const p = await c.query('SELECT store_found, id FROM mnemo_write_probe(NULL, $1, $2, $2, $3, NULL, NULL, NULL, NULL)', [store.id, at, m.id]);
        expect(p.rows).toEqual([{ store_found: true, id: m.id }]);
      }
      const after = await tuplesRead();
      expect(after['memories_store_path']! - before['memories_store_path']!).toBe(0);
      expect(after['memories_id_key']! - before['memories_id_key']!).toBe(3);
    });
  });

  describe('readiness', () => {
    it('a statement cancelled by its timeout reads as what it is on /readyz, not as the database out of reach', async () => {
      const slow = await openPostgresStorage(url, { clock, timeouts: { statementMs: 300, queryMs: 30_000 } });
      onTestFinished(() => slow.close());
      const service = createService({ storage: slow });
      expect((await service.readiness()).database).toBe('ok');
      const locker = await admin.connect();
      try {
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE');
        const r = await service.readiness();
        expect(r.ready).toBe(false);
        expect(r.database).toBe('PostgreSQL cancelled a statement (SQLSTATE 57014: statement_timeout, a lock held too long, or an operator)');
      } finally {
        await locker.query('ROLLBACK');
        locker.release();
      }
      expect((await service.readiness()).database).toBe('ok');
    });
  });

  describe('two servers on one database', () => {
    it('a page cursor sealed through one server opens through the other; a server on another database refuses it', async () => {
      const { workspace, addStore } = await fixture();
      for (const name of ['p0', 'p1', 'p2']) await addStore(name);
      const caller: Caller = { workspaceId: workspace.id, actor: { type: 'api_actor', apiKeyId: newId('apiKey') } };
      const storeQ = { includeArchived: false, createdGte: null, createdLte: null, limit: 1, page: null };
      const page = (await createService({ storage }).listStores(caller, storeQ)).nextPage!;
      const other = await secondServer();
      expect((await createService({ storage: other }).listStores(caller, { ...storeQ, limit: 10, page })).data.map((s) => s.name)).toEqual(['p1', 'p0']);
      const db = await createDatabase();
      onTestFinished(db.drop);
      const elsewhere = await openPostgresStorage(db.url);
      onTestFinished(() => elsewhere.close());
      expect(elsewhere.pageKey().legacyUntil).toBeNull();
      await expect(createService({ storage: elsewhere }).listStores(caller, { ...storeQ, page })).rejects.toMatchObject({ code: 'invalid_request', message: 'page: not a cursor this server issued' });
    });

    it('concurrent preconditioned updates of one memory from two servers: exactly one wins each round', async () => {
      const { stamp, addStore, addMemory } = await fixture();
      const other = await secondServer();
      const s = await addStore();
      const m = await addMemory(s.id, '/race.md', 'v0');
      let sha = m.contentSha256;
      for (let round = 1; round <= 5; round++) {
        const attempts = [storage, other].map((on, i) =>
          on.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: `v${round} from ${i}`, expectedSha256: sha }).then(
            (r) => ({ ok: true as const, r }),
            (e: unknown) => ({ ok: false as const, code: e instanceof MnemoError ? e.code : String(e) }),
          ),
        );
        const results = await Promise.all(attempts);
        const winners = results.filter((r) => r.ok);
        expect(winners).toHaveLength(1);
        expect(results.filter((r) => !r.ok)).toEqual([{ ok: false, code: 'precondition_failed' }]);
        sha = (await storage.getMemory(s.id, m.id))!.contentSha256;
      }
      expect((await storage.listVersions(s.id, verQ({ memoryId: m.id }))).data).toHaveLength(6);
    });

    it('two servers creating overlapping paths at once: one wins, the other gets path_conflict', async () => {
      const { stamp, addStore } = await fixture();
      const other = await secondServer();
      const s = await addStore();
      const results = await Promise.allSettled([
        storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/p', content: 'file' }),
        other.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/p/q', content: 'below' }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: { code: 'path_conflict' } });
    });

    it('the latest-checkpoint race has exactly one winner, and unguarded inserts take consecutive revisions', async () => {
      const { addStore, actor, now } = await fixture();
      const other = await secondServer();
      const s = await addStore();
      const bundle = (id: string): Omit<Checkpoint, 'revision' | 'isLatest'> => ({
        id, storeId: s.id, agentId: 'agent', sessionId: 'sess', goal: 'g', summary: 's', constraints: [], decisions: [], openTasks: [],
        nextAction: null, capsule: null, references: [], sizeBytes: 10, createdAt: now(), createdBy: actor,
      } as unknown as Omit<Checkpoint, 'revision' | 'isLatest'>);
      const first = await storage.insertCheckpoint({ checkpoint: bundle(newId('checkpoint')), expectedLatestId: null });
      for (let round = 0; round < 3; round++) {
        const head = (await storage.getLatestCheckpoint(s.id, 'agent', 'sess'))!;
        const results = await Promise.allSettled(
          [storage, other].map((on) => on.insertCheckpoint({ checkpoint: bundle(newId('checkpoint')), expectedLatestId: head.id })),
        );
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: { code: 'conflict' } });
      }
      const unguarded = await Promise.all([storage, other].map((on) => on.insertCheckpoint({ checkpoint: bundle(newId('checkpoint')), expectedLatestId: undefined })));
      expect(unguarded.map((c) => c.revision).sort()).toEqual([5, 6]);
      const latest = (await storage.getLatestCheckpoint(s.id, 'agent', 'sess'))!;
      expect(latest.revision).toBe(6);
      expect(await codeOf(() => storage.deleteCheckpoint(s.id, latest.id))).toBe('conflict');
      await storage.deleteCheckpoint(s.id, first.id);
      expect(await storage.getCheckpoint(s.id, first.id)).toBeNull();
      expect(await storage.domainCheck()).toEqual([]);
    });
  });

  describe('search', () => {
    it('full-text search ranks path words above body words, quotes a snippet, filters by prefix and pages', async () => {
      const { addStore, addMemory } = await fixture();
      const s = await addStore();
      await addMemory(s.id, '/notes/zebra.md', 'about animals');
      await addMemory(s.id, '/notes/other.md', 'a long text that mentions the zebra once');
      await addMemory(s.id, '/notes/École.md', 'Une école près du lac');
      await addMemory(s.id, '/archive/zebra-old.md', 'zebra zebra');
      const page = await storage.searchMemories(s.id, searchQ({ q: 'zebra', pathPrefix: '/notes/', limit: 1 }));
      expect(page.data).toHaveLength(1);
      expect(page.data[0]!.memory.path).toBe('/notes/zebra.md');
      expect(page.data[0]!.score).toBeLessThan(0);
      expect(page.candidatesCapped).toBe(false);
      const next = await storage.searchMemories(s.id, searchQ({ q: 'zebra', pathPrefix: '/notes/', limit: 1, page: page.nextPage }));
      expect(next.data.map((h) => h.memory.path)).toEqual(['/notes/other.md']);
      expect(next.data[0]!.snippet).toContain('**zebra**');
      expect(next.nextPage).toBeNull();
      expect((await storage.searchMemories(s.id, searchQ({ q: 'ecole' }))).data.map((h) => h.memory.path)).toEqual(['/notes/École.md']);
      expect((await storage.searchMemories(s.id, searchQ({ q: 'ÉCOLE lac' }))).data).toHaveLength(1);
      expect((await storage.searchMemories(s.id, searchQ({ q: '*** ()' }))).data).toEqual([]);
      expect((await storage.searchMemories(s.id, searchQ({ q: 'zebra\0' }))).data.length).toBeGreaterThan(0);
    });

    it('substring search matches content or path case-insensitively, in path order, with a phrase snippet and pages', async () => {
      const { addStore, addMemory, stamp } = await fixture();
      const s = await addStore();
      await addMemory(s.id, '/a.md', 'the Quick brown fox');
      await addMemory(s.id, '/b.md', 'nothing here');
      await addMemory(s.id, '/c-quick.md', 'x');
      await addMemory(s.id, '/d.md', '100% quick_ly');
      const first = await storage.searchMemories(s.id, searchQ({ q: 'quick', mode: 'substring', limit: 2 }));
      expect(first.data.map((h) => h.memory.path)).toEqual(['/a.md', '/c-quick.md']);
      expect(first.data[0]).toMatchObject({ snippet: 'the **Quick** brown fox', score: 0 });
      const rest = await storage.searchMemories(s.id, searchQ({ q: 'quick', mode: 'substring', limit: 2, page: first.nextPage }));
      expect(rest.data.map((h) => h.memory.path)).toEqual(['/d.md']);
      expect(rest.nextPage).toBeNull();
      expect((await storage.searchMemories(s.id, searchQ({ q: '0% q', mode: 'substring' }))).data.map((h) => h.memory.path)).toEqual(['/d.md']);
      expect((await storage.searchMemories(s.id, searchQ({ q: 'k_l', mode: 'substring' }))).data.map((h) => h.memory.path)).toEqual(['/d.md']);
      // Deleted memories no longer match.
      const b = (await storage.getMemoryByPath(s.id, '/a.md'))!;
      await storage.deleteMemory({ ...stamp(), storeId: s.id, memoryId: b.id });
      expect((await storage.searchMemories(s.id, searchQ({ q: 'fox', mode: 'substring' }))).data).toEqual([]);
      expect((await storage.searchMemories(s.id, searchQ({ q: 'fox' }))).data).toEqual([]);
      expect(await storage.indexSearchBacklog(100)).toBe(0);
    });
  });
  describe('search indexing beside writers', () => {
    it("search indexing locks no row while it computes the words: a writer of a queued memory waits only for the batch's short update", async () => {
      const { addStore, addMemory } = await fixture();
      // Texts whose words take a while to compute (100 KB each): the statement runs long enough to probe.
      const text = (i: number) => `word${i} ${'lorem ipsum dolor sit amet, consectetur adipiscing elit '.repeat(1800)}`.slice(0, 100_000);
      const running = async () =>
        (await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%mnemo_search(m.path%' AND pid <> pg_backend_pid()")).rows[0]!.n;
      /**
       * Indexes a new store's 120 texts while another connection tries to lock their rows without
       * waiting: 'free' once a try gets them all while the statement still runs. A try can land in
       * the batch's short update (its rows locked then too) or the statement can end between tries,
       * so a busy host may need another round; before, the rows were locked for all of it.
       */
      async function probeWhileIndexing(): Promise<'free' | 'locked' | 'missed'> {
        const s = await addStore();
        for (let i = 0; i < 120; i++) await addMemory(s.id, `/big/${i}.md`, text(i));
        const indexing = storage.indexSearchBacklog(100_000);
        let probed: 'free' | 'locked' | 'missed' = 'missed';
        try {
          await eventually(async () => expect(await running()).toBe(1));
          for (let tries = 0; tries < 500 && probed !== 'free' && (await running()) === 1; tries++) {
            const c = await admin.connect();
            try {
              await c.query('BEGIN');
              const rows = await c.query('SELECT seq FROM memories WHERE store_id = $1 FOR UPDATE NOWAIT', [s.id]);
              if (rows.rowCount === 120 && (await running()) === 1) probed = 'free';
            } catch (err) {
              if ((err as { code?: string }).code !== '55P03') throw err;
              probed = 'locked';
              await new Promise((r) => setTimeout(r, 5));
            } finally {
              await c.query('ROLLBACK');
              c.release();
            }
          }
        } finally {
          await indexing;
        }
        // The batch skipped the rows a probe held at its update: they wait for the next one.
        while ((await storage.indexSearchBacklog(1000)) > 0);
        expect((await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM memories WHERE store_id = $1 AND search IS NULL', [s.id])).rows[0]!.n).toBe(0);
        return probed;
      }
      const seen: string[] = [];
      for (let round = 0; round < 4 && !seen.includes('free'); round++) seen.push(await probeWhileIndexing());
      expect(seen).toContain('free');
    });

    it('a memory written again while the batch computes its words is not given the old words: it stays queued for its new text', async () => {
      const { addStore, addMemory, stamp } = await fixture();
      const text = (i: number) => `word${i} ${'lorem ipsum dolor sit amet, consectetur adipiscing elit '.repeat(1800)}`.slice(0, 100_000);
      const running = async () =>
        (await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%mnemo_search(m.path%' AND pid <> pg_backend_pid()")).rows[0]!.n;
      /**
       * One round: true if the write began while the indexing statement ran (it had read 'before')
       * and landed before the batch was done. Not whether the statement still ran once the write
       * was answered: on a loaded host the write's own round trips can outlast the statement, and
       * every round came back false (once in a full run beside three CPU hogs).
       */
      async function writeWhileIndexing(): Promise<boolean> {
        const s = await addStore();
        for (let i = 0; i < 80; i++) await addMemory(s.id, `/big/${i}.md`, text(i));
        const m = await addMemory(s.id, '/w.md', 'before');
        let settled = false;
        const indexing = storage.indexSearchBacklog(100_000).finally(() => (settled = true));
        let during = false;
        try {
          while (!settled && (await running()) === 0) await new Promise((r) => setTimeout(r, 2));
          const began = !settled;
          await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'after' });
          during = began && !settled;
        } finally {
          await indexing;
        }
        // Whenever the write landed, the memory ends up found by its new text only.
        const hits = async (q: string) => (await storage.searchMemories(s.id, searchQ({ q }))).data.map((h) => h.memory.id);
        while ((await storage.indexSearchBacklog(1000)) > 0);
        expect(await hits('after')).toEqual([m.id]);
        expect(await hits('before')).toEqual([]);
        return during;
      }
      const rounds: boolean[] = [];
      for (let round = 0; round < 6 && !rounds.includes(true); round++) rounds.push(await writeWhileIndexing());
      expect(rounds).toContain(true);
    });
  });

  describe('tidying after a burst', () => {
    it('tidy vacuums the tables a burst left with many dead rows, once, and is not due again for a while', async () => {
      const { addStore, addMemory } = await fixture();
      const s = await addStore();
      for (let i = 0; i < 1200; i++) await addMemory(s.id, `/burst/${i}.md`, `burst note ${i}`);
      // Indexing rewrites each memory row it indexes (its words live in the row): 1,200 dead versions.
      while ((await storage.indexSearchBacklog(1000)) > 0);
      const table = async (name: string) =>
        (await admin.query<{ dead: number; vacuums: number }>(
          'SELECT n_dead_tup::int AS dead, vacuum_count::int AS vacuums FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = $1',
          [name],
        )).rows[0]!;
      // The counts reach the statistics within a second of the writes.
      await eventually(async () => expect((await table('memories')).dead).toBeGreaterThanOrEqual(1000));
      const before = (await table('memories')).vacuums;
      expect(await storage.tidy!()).toContain('memories');
      await eventually(async () => {
        const after = await table('memories');
        expect(after.vacuums).toBe(before + 1);
        expect(after.dead).toBeLessThan(1000);
      });
      expect(await storage.tidy!()).toEqual([]);
    });
  });

  describe('history by path', () => {
    it('a redaction keeps a version its number at its path, and a direct change of the number is refused', async () => {
      const { stamp, addStore, addMemory, actor, now } = await fixture();
      const s = await addStore();
      const m = await addMemory(s.id, '/h.md', 'one');
      const v2 = await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'two' });
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'three' });
      await expect(admin.query('UPDATE versions SET path_seq = 7 WHERE id = $1', [m.versionId])).rejects.toThrow(/append-only: only redaction/);
      await expect(
        admin.query(
          "UPDATE versions SET path = NULL, content_sha256 = NULL, content_size_bytes = NULL, redacted_at = 'now', redacted_by_type = 'api_actor', redacted_by_id = 'k', path_seq = NULL WHERE id = $1",
          [m.versionId],
        ),
      ).rejects.toThrow(/append-only/);
      await storage.redactVersion(s.id, v2.memory.versionId, actor, now());
      const rows = (await admin.query('SELECT id, path_seq FROM versions WHERE store_id = $1 ORDER BY commit_seq', [s.id])).rows;
      expect(rows.map((r: { path_seq: string }) => Number(r.path_seq))).toEqual([1, 2, 3]);
      expect((await storage.listPathVersions(s.id, '/h.md', 10)).map((v) => v.number)).toEqual([1, 3]);
    });

    it('a database from before migration 21 drops the receipts of stores deleted before it, purged or not, and keeps the others', async () => {
      const db = await createDatabase();
      onTestFinished(db.drop);
      const first = await openPostgresStorage(db.url);
      const at = new Date(T0).toISOString();
      const workspace = { id: newId('workspace'), name: 'default', createdAt: at };
      await first.insertWorkspace(workspace, false);
      const store = async (name: string): Promise<Store> => {
        const s: Store = { id: newId('store'), workspaceId: workspace.id, name, description: '', metadata: {}, createdAt: at, updatedAt: at, archivedAt: null };
        await first.insertStore(s);
        return s;
      };
      const [purged, hidden, kept] = [await store('purged'), await store('hidden'), await store('kept')];
      await first.deleteStore(workspace.id, purged.id);
      while (await first.purgeDeletedStores());
      await first.deleteStore(workspace.id, hidden.id);
      await first.close();
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      onTestFinished(() => c.end());
      // As a mnemo before migration 21 left them: receipts of deleted stores, kept for their 24 hours.
      await c.query(`${PG_UNDO_MIGRATION_22} DROP INDEX idempotency_receipts_by_store; UPDATE schema_version SET version = 20`);
      for (const id of [purged.id, hidden.id, kept.id, null]) {
        await c.query(
          `INSERT INTO idempotency_receipts (workspace_id, api_key_id, route, idem_key, fingerprint, status, body, store_id, version_id, created_at, expires_at)
           VALUES ('wrkspc_x', 'apikey_x', 'POST /v1/memory_stores/{id}', $1, 'f', 200, '{}', $2, NULL, '2026-01-01T00:00:00.000Z', '2999-01-01T00:00:00.000Z')`,
          [`k-${id}`, id],
        );
      }
      const later = await openPostgresStorage(db.url);
      onTestFinished(() => later.close());
      expect((await c.query('SELECT version FROM schema_version')).rows).toEqual([{ version: PG_SCHEMA_VERSION }]);
      expect((await c.query('SELECT store_id FROM idempotency_receipts ORDER BY store_id IS NULL, store_id')).rows).toEqual([{ store_id: kept.id }, { store_id: null }]);
    });

    it('servers meeting a fresh database at once make one default workspace between them', async () => {
      const db = await createDatabase();
      onTestFinished(db.drop);
      const servers = await Promise.all([1, 2, 3, 4].map(() => openPostgresStorage(db.url)));
      onTestFinished(() => Promise.all(servers.map((s) => s.close())).then(() => undefined));
      const clock = () => new Date().toISOString();
      const made = await Promise.all(servers.map((s) => createKeys(s, clock, async () => undefined).defaultWorkspace()));
      expect(new Set(made.map((w) => w.id)).size).toBe(1);
      expect((await servers[0]!.listWorkspaces()).map((w) => w.id)).toEqual([made[0]!.id]);
    });

    it('a database with two default workspaces from before migration 26 keeps the oldest as the default', async () => {
      const db = await createDatabase();
      onTestFinished(db.drop);
      await (await openPostgresStorage(db.url)).close();
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      onTestFinished(() => c.end());
      await c.query(`${PG_UNDO_MIGRATION_26} UPDATE schema_version SET version = 25;
        INSERT INTO workspaces (id, name, is_default, created_at) VALUES
          ('workspace_later', 'default', true, '2026-01-02T00:00:00.000Z'), ('workspace_first', 'default', true, '2026-01-01T00:00:00.000Z')`);
      const later = await openPostgresStorage(db.url);
      onTestFinished(() => later.close());
      expect((await later.defaultWorkspace())?.id).toBe('workspace_first');
      expect((await later.listWorkspaces()).map((w) => w.id)).toEqual(['workspace_first', 'workspace_later']);
    });

    it('a fork build a crash cut short before migration 27 is swept after the upgrade, and its build reads as deleted by the sweep', async () => {
      const db = await createDatabase();
      onTestFinished(db.drop);
      const first = await openPostgresStorage(db.url);
      const at = '2026-03-01T00:00:00.000Z';
      const workspace = { id: newId('workspace'), name: 'default', createdAt: at };
      await first.insertWorkspace(workspace, true);
      const build: Store = { id: newId('store'), workspaceId: workspace.id, name: 'f', description: '', metadata: {}, createdAt: at, updatedAt: at, archivedAt: null };
      await first.beginFork(build);
      await first.close();
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      onTestFinished(() => c.end());
      await c.query(`${PG_UNDO_MIGRATION_27} UPDATE schema_version SET version = 26`);
      const later = await openPostgresStorage(db.url);
      onTestFinished(() => later.close());
      expect((await c.query('SELECT version FROM schema_version')).rows).toEqual([{ version: PG_SCHEMA_VERSION }]);
      expect(await later.purgeAbandonedFork('2026-03-01T01:00:00.000Z', '2026-03-01T02:00:00.000Z')).toBe(build.id);
      expect(await later.publishFork(build.id).catch((e: unknown) => e)).toMatchObject({ code: 'not_found', details: { abandoned_fork: build.id, abandoned_by: 'sweep' } });
    });

    it('a database upgraded to the page key takes unsealed cursors for an hour', async () => {
      const db = await createDatabase();
      onTestFinished(db.drop);
      const first = await openPostgresStorage(db.url);
      await first.insertWorkspace({ id: newId('workspace'), name: 'default', createdAt: new Date().toISOString() }, true);
      await first.close();
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      onTestFinished(() => c.end());
      await c.query(`${PG_UNDO_MIGRATION_25} UPDATE schema_version SET version = 24`);
      const later = await openPostgresStorage(db.url);
      onTestFinished(() => later.close());
      const left = later.pageKey().legacyUntil! - Date.now();
      expect(left).toBeGreaterThan(59 * 60_000);
      expect(left).toBeLessThanOrEqual(60 * 60_000);
    });

    it('a database from before migration 4 numbers its versions per path in commit order, and a redacted one takes no number', async () => {
      const db = await createDatabase();
      onTestFinished(db.drop);
      const first = await openPostgresStorage(db.url);
      let tick = 0;
      const now = () => new Date(T0 + 1000 * tick++).toISOString();
      const actor: Actor = { type: 'api_actor', apiKeyId: 'k' };
      const stamp = (): WriteStamp => ({ actor, now: now(), versionId: newId('version') });
      const workspace = { id: newId('workspace'), name: 'default', createdAt: now() };
      await first.insertWorkspace(workspace, false);
      const store: Store = { id: newId('store'), workspaceId: workspace.id, name: 'old', description: '', metadata: {}, createdAt: now(), updatedAt: now(), archivedAt: null };
      await first.insertStore(store);
      const a = await first.createMemory({ ...stamp(), storeId: store.id, memoryId: newId('memory'), path: '/a.md', content: '1' });
      await first.updateMemory({ ...stamp(), storeId: store.id, memoryId: a.id, content: '2' });
      await first.createMemory({ ...stamp(), storeId: store.id, memoryId: newId('memory'), path: '/b.md', content: '1' });
      await first.updateMemory({ ...stamp(), storeId: store.id, memoryId: a.id, content: '3' });
      await first.redactVersion(store.id, a.versionId, actor, now());
      await first.updateMemory({ ...stamp(), storeId: store.id, memoryId: a.id, path: '/a2.md' });
      await first.close();
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      onTestFinished(() => c.end());
      // Back to schema 3: what a database written by the previous mnemo holds.
      await c.query(PG_UNDO_MIGRATION_5);
      await c.query('DROP INDEX versions_by_path; DROP INDEX versions_by_memory_time; ALTER TABLE versions DROP COLUMN path_seq; UPDATE schema_version SET version = 3');
      const later = await openPostgresStorage(db.url);
      onTestFinished(() => later.close());
      expect((await c.query('SELECT version FROM schema_version')).rows).toEqual([{ version: PG_SCHEMA_VERSION }]);
      expect((await later.listPathVersions(store.id, '/a.md', 10)).map((v) => v.number)).toEqual([1, 2]);
      expect((await later.listPathVersions(store.id, '/b.md', 10)).map((v) => v.number)).toEqual([1]);
      expect((await later.listPathVersions(store.id, '/a2.md', 10)).map((v) => v.number)).toEqual([1]);
      const numbered = (await c.query('SELECT path_seq FROM versions WHERE store_id = $1 AND path IS NULL', [store.id])).rows;
      expect(numbered).toEqual([{ path_seq: null }]);
      const next = await later.updateMemory({ ...stamp(), storeId: store.id, memoryId: a.id, path: '/a.md' });
      expect((await later.getPathVersion(store.id, '/a.md', 3))?.versionId).toBe(next.memory.versionId);
      expect(await later.integrityCheck()).toEqual([]);
    });

    it('every history statement is answered from an index of versions, never a scan of the table', async () => {
      const c = await admin.connect();
      try {
        // Seq scans priced out: a plan that still shows one has no index to use.
        await c.query('SET enable_seqscan = off');
        await c.query('SET plan_cache_mode = force_generic_plan');
        for (const [name, sql] of Object.entries(PG_HISTORY_SQL)) {
          const n = new Set(sql.match(/\$\d+/g) ?? []).size;
          await c.query(`PREPARE h_${name} AS ${sql}`);
          const plan = (await c.query(`EXPLAIN EXECUTE h_${name}(${Array.from({ length: n }, () => "'1'").join(', ')})`)).rows
            .map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN'])
            .join('\n');
          await c.query(`DEALLOCATE h_${name}`);
          expect(plan, name).toMatch(/Index (Only )?Scan|Bitmap Index Scan/);
          expect(plan, name).not.toMatch(/Seq Scan/);
        }
      } finally {
        await c.query('RESET ALL').catch(() => undefined);
        c.release();
      }
    });
  });
});
