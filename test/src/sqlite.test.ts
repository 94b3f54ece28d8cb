/**
 * The SQLite adapter: runs the Storage conformance suite, then pins what only SQLite shows: durable
 * pragmas, user_version migrations, triggers that keep versions append-only against plain SQL, and
 * redaction that erases the bytes from the database file and its WAL.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../src/storage/sqlite/schema/migrations.js';
import { openSqliteStorage } from '../../src/storage/sqlite/open.js';
import { codeOf, errorOf, openCore, queuedForSearch, rawConnection, storeQuery, versionQuery, withRaw, type Core } from '../helpers/core.js';
import { tmpDir } from '../helpers/tmp.js';
import { UNDO_MIGRATION_11, UNDO_MIGRATION_20, UNDO_MIGRATION_21, UNDO_MIGRATION_24, UNDO_MIGRATION_25, UNDO_MIGRATION_26, UNDO_MIGRATION_27, UNDO_MIGRATION_9 } from '../helpers/schema-undo.js';
import { createService } from '../../src/service/service.js';
import type Database from 'better-sqlite3';
import { newId } from '../../src/service/ids.js';
import { HISTORY_SQL } from '../../src/storage/sqlite/history.js';
import { RETENTION_SQL } from '../../src/storage/sqlite/retention.js';
import { runStorageSuite } from './storage.suite.js';
import { fixture } from './storage/fixture.js';

describe('sqlite storage', () => {
  runStorageSuite(() => openSqliteStorage(join(tmpDir(), 'data', 'mnemo.db')));
});

describe('sqlite connection', () => {
  it('a call through the outer port while a transaction is open waits for it and sees its commit, not its middle', async () => {
    const { storage, actor, addStore, addMemory } = await fixture(() => openSqliteStorage(join(tmpDir(), 'mnemo.db')));
    const s = await addStore();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const order: string[] = [];
    const tx = storage.atomic(async (t) => {
      await addMemory(s.id, '/a', 'a', actor, t);
      // The transaction waits on something that is not storage: outer calls must not slip in (the writer gate).
      await held;
      await addMemory(s.id, '/b', 'b', actor, t);
      order.push('committed');
    });
    const outside = storage.getMemoryByPath(s.id, '/b').then((m) => {
      order.push('outer read');
      return m;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([]);
    release();
    await tx;
    expect((await outside)?.content).toBe('b');
    expect(order).toEqual(['committed', 'outer read']);
  });


  it('opens with WAL, synchronous=FULL, foreign keys, secure_delete, and no busy timeout once open (a write waits for another process\'s lock on a timer: lock-wait.test.ts)', async () => {
    const storage = openSqliteStorage(join(tmpDir(), 'mnemo.db'));
    try {
      expect(storage.readPragma('journal_mode')).toBe('wal');
      expect(storage.readPragma('synchronous')).toBe(2);
      expect(storage.readPragma('foreign_keys')).toBe(1);
      expect(storage.readPragma('secure_delete')).toBe(1);
      expect(storage.readPragma('busy_timeout')).toBe(0);
    } finally {
      await storage.close();
    }
  });

  it('creates the data directory and the file leaves WAL mode on disk', async () => {
    const file = join(tmpDir(), 'deep', 'er', 'mnemo.db');
    await openSqliteStorage(file).close();
    expect(withRaw(file, (raw) => raw.pragma('journal_mode', { simple: true }))).toBe('wal');
  });
});

describe('sqlite migrations', () => {
  it('a fresh file is migrated to the latest user_version', async () => {
    const file = join(tmpDir(), 'mnemo.db');
    const storage = openSqliteStorage(file);
    expect(storage.readPragma('user_version')).toBe(SCHEMA_VERSION);
    await storage.close();
    const tables = withRaw(file, (raw) => raw.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all());
    expect(tables).toEqual(expect.arrayContaining(['workspaces', 'api_keys', 'stores', 'memories', 'versions', 'sessions']));
  });

  it('reopening a migrated file runs no migration again and keeps the data', async () => {
    const dir = tmpDir();
    const first = await openCore({ dir });
    const store = await first.service.createStore(first.caller, { name: 'kept', description: 'd', metadata: { k: 'v' } });
    const memory = await first.service.createMemory(first.caller, store.id, { path: '/a.md', content: 'x' });
    first.close();
    const storage = openSqliteStorage(join(dir, 'mnemo.db'));
    try {
      expect(storage.readPragma('user_version')).toBe(SCHEMA_VERSION);
      expect(await storage.getStoreById(store.id)).toEqual(store);
      expect(await storage.getMemory(store.id, memory.id)).toEqual(memory);
      expect(await storage.integrityCheck()).toEqual([]);
    } finally {
      await storage.close();
    }
  });

  it('a file from before migration 8 keeps its memories, which derive their times and owner, and stats still read only the meta index', async () => {
    const dir = tmpDir();
    const first = await openCore({ dir });
    const store = await first.service.createStore(first.caller, { name: 'old', description: '', metadata: {} });
    const memory = await first.service.createMemory(first.caller, store.id, { path: '/a.md', content: 'x' });
    first.close();
    // Back to schema 7 by hand: the columns and index as migration 7 left them, and no later table.
    withRaw(join(dir, 'mnemo.db'), (raw) => {
      raw.exec(UNDO_MIGRATION_9);
      raw.exec(`DROP INDEX memories_meta_by_path;
        ALTER TABLE memories DROP COLUMN atime_us; ALTER TABLE memories DROP COLUMN mtime_us; ALTER TABLE memories DROP COLUMN ctime_us;
        ALTER TABLE memories DROP COLUMN uid; ALTER TABLE memories DROP COLUMN gid;
        CREATE INDEX memories_meta_by_path ON memories
          (store_id, path, id, version_id, content_sha256, content_size_bytes, mode, created_at, updated_at, expires_at);
        PRAGMA user_version = 7;`);
    });
    const storage = openSqliteStorage(join(dir, 'mnemo.db'));
    try {
      expect(storage.readPragma('user_version')).toBe(SCHEMA_VERSION);
      expect(await storage.getMemory(store.id, memory.id)).toEqual({ ...memory, atimeMs: null, mtimeMs: null, ctimeMs: null, uid: null, gid: null });
      expect(await storage.integrityCheck()).toEqual([]);
    } finally {
      await storage.close();
    }
    const plan = withRaw(join(dir, 'mnemo.db'), (raw) =>
      raw.prepare("EXPLAIN QUERY PLAN SELECT path, mode, atime_us, mtime_us, ctime_us, uid, gid FROM memories INDEXED BY memories_meta_by_path WHERE store_id = ? AND path = ?").all('s', '/a.md'),
    ) as { detail: string }[];
    expect(plan.map((p) => p.detail).join('\n')).toContain('COVERING INDEX memories_meta_by_path');
  });

  it('every history statement (.history, point-in-time mounts) is an index search, never a scan of the versions', async () => {
    const file = join(tmpDir(), 'mnemo.db');
    await openSqliteStorage(file).close();
    const plans = withRaw(file, (raw) =>
      Object.entries(HISTORY_SQL).map(([name, sql]) => {
        const named = [...new Set(sql.match(/@\w+/g) ?? [])];
        const params = named.length > 0 ? [Object.fromEntries(named.map((n) => [n.slice(1), 'x']))] : Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => 'x');
        return [name, (raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail).join('; ')] as const;
      }),
    );
    for (const [name, plan] of plans) {
      expect(plan, name).toMatch(/^SEARCH (versions|memories) USING (COVERING )?INDEX/);
      expect(plan, name).not.toMatch(/\bSCAN\b/);
      // A seek on the store alone (versions_by_memory: store_id=?) reads every version of the store.
      expect(plan, name).not.toMatch(/\(store_id=\?\)/);
    }
    // A path's memories come from the path's own entries, not the store's versions in memory order.
    expect(Object.fromEntries(plans).atPath).toMatch(/^SEARCH versions USING INDEX versions_by_path \(store_id=\? AND path=\?\)/);
  });

  it("a point-in-time mount's listing and directory check run on a reader thread: a point read asked after them is answered first", async () => {
    const core = await openCore({ readers: 1 });
    const store = await core.service.createStore(core.caller, { name: 'past', description: '', metadata: {} });
    await core.service.createMemory(core.caller, store.id, { path: '/d/a.md', content: 'a' });
    const asOf = new Date().toISOString();
    // Settled on the serving connection, their answers would come in the same turn, before the point read's.
    const answered: string[] = [];
    const listing = core.storage.listDirectoryAsOf(store.id, '/', asOf, 100).then((l) => answered.push(`listing ${l.dirs.join()}`));
    const under = core.storage.hasMemoriesUnderAsOf(store.id, '/d', asOf).then((any) => answered.push(`under ${any}`));
    const point = core.storage.getStoreById(store.id).then(() => answered.push('point read'));
    await Promise.all([listing, under, point]);
    expect(answered[0]).toBe('point read');
    expect(answered.slice(1).sort()).toEqual(['listing d', 'under true']);
  });

  it("a prune batch finds each memory's keep-th newest version once, and never counts a memory's newer versions for each version of its window", async () => {
    const file = join(tmpDir(), 'mnemo.db');
    await openSqliteStorage(file).close();
    const plan = withRaw(file, (raw) =>
      (raw.prepare(`EXPLAIN QUERY PLAN ${RETENTION_SQL.candidates}`).all({ store: 's', after: 0, scan: 2000, cutoff: null, keep: 10, max: 500 }) as { detail: string }[]).map((r) => r.detail),
    );
    const memorySeeks = plan.filter((d) => /versions_by_memory\b/.test(d));
    // One seek from the memory's newest version (its LIMIT/OFFSET stops after `keep` steps), none from a window row's seq onwards.
    expect(memorySeeks, plan.join('; ')).toEqual([expect.stringMatching(/^SEARCH n USING COVERING INDEX versions_by_memory \(store_id=\? AND memory_id=\?\)$/)]);
    expect(plan.join('; ')).not.toMatch(/\bseq>\?/);
  });

  it('a file from before migration 11 numbers its versions per path in commit order', async () => {
    const dir = tmpDir();
    const first = await openCore({ dir });
    const store = await first.service.createStore(first.caller, { name: 'old', description: '', metadata: {} });
    const a = await first.service.createMemory(first.caller, store.id, { path: '/a.md', content: '1' });
    await first.service.updateMemory(first.caller, store.id, a.id, { content: '2' });
    await first.service.createMemory(first.caller, store.id, { path: '/b.md', content: '1' });
    await first.service.updateMemory(first.caller, store.id, a.id, { path: '/b2.md' });
    first.close();
    withRaw(join(dir, 'mnemo.db'), (raw) => raw.exec(`${UNDO_MIGRATION_11} PRAGMA user_version = 10;`));
    const storage = openSqliteStorage(join(dir, 'mnemo.db'));
    try {
      expect(storage.readPragma('user_version')).toBe(SCHEMA_VERSION);
      expect((await storage.listPathVersions(store.id, '/a.md', 10)).map((v) => v.number)).toEqual([1, 2]);
      expect((await storage.listPathVersions(store.id, '/b2.md', 10)).map((v) => v.number)).toEqual([1]);
      expect(await storage.integrityCheck()).toEqual([]);
    } finally {
      await storage.close();
    }
  });

  it('a file from before migration 20 drops the receipts of stores deleted before it, purged or not, and keeps the others', async () => {
    const dir = tmpDir();
    const file = join(dir, 'mnemo.db');
    const first = await openCore({ dir });
    const store = (name: string) => first.service.createStore(first.caller, { name, description: '', metadata: {} });
    const [purged, hidden, kept] = [await store('purged'), await store('hidden'), await store('kept')];
    await first.service.deleteStore(first.caller, purged.id);
    while (await first.storage.purgeDeletedStores());
    await first.service.deleteStore(first.caller, hidden.id);
    await first.close();
    // As a mnemo before migration 20 left them: receipts of deleted stores, kept for their 24 hours.
    withRaw(file, (raw) => {
      raw.exec(`${UNDO_MIGRATION_20} PRAGMA user_version = 19;`);
      const insert = raw.prepare(
        `INSERT INTO idempotency_receipts (workspace_id, api_key_id, route, idem_key, fingerprint, status, body, store_id, version_id, created_at, expires_at)
         VALUES ('wrkspc_x', 'apikey_x', 'POST /v1/memory_stores/{id}', ?, 'f', 200, '{}', ?, NULL, '2026-01-01T00:00:00.000Z', '2999-01-01T00:00:00.000Z')`,
      );
      for (const id of [purged.id, hidden.id, kept.id, null]) insert.run(`k-${id}`, id);
    });
    const storage = openSqliteStorage(file);
    try {
      expect(storage.readPragma('user_version')).toBe(SCHEMA_VERSION);
      expect(withRaw(file, (raw) => raw.prepare('SELECT store_id FROM idempotency_receipts ORDER BY store_id IS NULL, store_id').pluck().all())).toEqual([kept.id, null]);
    } finally {
      await storage.close();
    }
  });

  it('a file from before migration 21 keeps its sessions, with no creator, and records the creator of new ones', async () => {
    const file = join(tmpDir(), 'mnemo.db');
    const at = new Date().toISOString();
    const workspace = { id: newId('workspace'), name: 'default', createdAt: at };
    const session = { id: newId('session'), workspaceId: workspace.id, status: 'active' as const, resources: [], createdAt: at, endedAt: null };
    const first = openSqliteStorage(file);
    await first.insertWorkspace(workspace, true);
    await first.insertSession(session);
    await first.close();
    withRaw(file, (raw) => raw.exec(`${UNDO_MIGRATION_21} PRAGMA user_version = 20;`));
    const storage = openSqliteStorage(file);
    try {
      expect(storage.readPragma('user_version')).toBe(SCHEMA_VERSION);
      expect(await storage.getSession(workspace.id, session.id)).toEqual(session);
      const apiKeyId = newId('apiKey');
      const made = { ...session, id: newId('session'), createdBy: { type: 'api_actor' as const, apiKeyId } };
      await storage.insertSession(made);
      expect(await storage.listActiveSessionsOfKey(apiKeyId)).toEqual([made]);
    } finally {
      await storage.close();
    }
  });

  it('a version an older mnemo appends without its content time and memory creation gets both from the database, as on PostgreSQL', async () => {
    const { file, store, expected } = await contentTimesFixture();
    withRaw(file, (raw) => expected.appends.forEach((a) => appendAsOlderMnemo(raw, store.id, a)));
    expect(withRaw(file, contentTimes)).toEqual(expected.times);
  });

  it('a file whose versions an older mnemo appended without their times, before migration 25, has them filled, and mnemo check finds none missing', async () => {
    const { file, store, expected } = await contentTimesFixture();
    withRaw(file, (raw) => {
      raw.exec(`${UNDO_MIGRATION_25} PRAGMA user_version = 24;`);
      expected.appends.forEach((a) => appendAsOlderMnemo(raw, store.id, a));
    });
    expect(withRaw(file, contentTimes).filter((v) => v.content_at === null && v.memory_created_at === null)).toHaveLength(3);
    const storage = openSqliteStorage(file);
    try {
      expect(storage.readPragma('user_version')).toBe(SCHEMA_VERSION);
      expect(withRaw(file, contentTimes)).toEqual(expected.times);
      expect((await storage.domainCheck()).filter((p) => p.includes('content_at'))).toEqual([]);
    } finally {
      await storage.close();
    }
  });

  it('a file with two default workspaces from before migration 26 keeps the oldest as the default, and the other as an ordinary one', async () => {
    const file = join(tmpDir(), 'mnemo.db');
    await openSqliteStorage(file).close();
    withRaw(file, (raw) => {
      raw.exec(`${UNDO_MIGRATION_26} PRAGMA user_version = 25;`);
      const insert = raw.prepare('INSERT INTO workspaces (id, name, is_default, created_at) VALUES (?, ?, 1, ?)');
      insert.run('workspace_later', 'default', '2026-01-02T00:00:00.000Z');
      insert.run('workspace_first', 'default', '2026-01-01T00:00:00.000Z');
    });
    const storage = openSqliteStorage(file);
    try {
      expect(storage.readPragma('user_version')).toBe(SCHEMA_VERSION);
      expect((await storage.defaultWorkspace())?.id).toBe('workspace_first');
      expect((await storage.listWorkspaces()).map((w) => w.id)).toEqual(['workspace_first', 'workspace_later']);
      await storage.insertWorkspace({ id: newId('workspace'), name: 'default', createdAt: new Date().toISOString() }, true);
      expect((await storage.listWorkspaces()).map((w) => w.id)).toEqual(['workspace_first', 'workspace_later']);
    } finally {
      await storage.close();
    }
  });

  it('a fork build a crash cut short before migration 27 is swept after the upgrade, and its build reads as deleted by the sweep', async () => {
    const file = join(tmpDir(), 'mnemo.db');
    const first = openSqliteStorage(file);
    const at = '2026-03-01T00:00:00.000Z';
    const workspace = { id: newId('workspace'), name: 'default', createdAt: at };
    await first.insertWorkspace(workspace, true);
    const build = { id: newId('store'), workspaceId: workspace.id, name: 'f', description: '', metadata: {}, createdAt: at, updatedAt: at, archivedAt: null };
    await first.beginFork(build);
    await first.close();
    withRaw(file, (raw) => raw.exec(`${UNDO_MIGRATION_27} PRAGMA user_version = 26;`));
    const storage = openSqliteStorage(file);
    try {
      expect(storage.readPragma('user_version')).toBe(SCHEMA_VERSION);
      expect(await storage.purgeAbandonedFork('2026-03-01T01:00:00.000Z', '2026-03-01T02:00:00.000Z')).toBe(build.id);
      expect(await storage.publishFork(build.id).catch((e: unknown) => e)).toMatchObject({ code: 'not_found', details: { abandoned_fork: build.id, abandoned_by: 'sweep' } });
    } finally {
      await storage.close();
    }
  });

  it('an empty file at user_version 0 is migrated', async () => {
    const file = join(tmpDir(), 'mnemo.db');
    withRaw(file, (raw) => raw.pragma('user_version = 0'));
    const storage = openSqliteStorage(file);
    expect(storage.readPragma('user_version')).toBe(SCHEMA_VERSION);
    expect(await storage.defaultWorkspace()).toBeNull();
    await storage.close();
  });
});

/** A version as an older mnemo's append wrote it (before migration 22): its commit number and path number, no times. */
interface OlderAppend { id: string; memory: string; operation: 'created' | 'modified'; path: string; sha: string; at: string }

function appendAsOlderMnemo(raw: Database.Database, store: string, a: OlderAppend): void {
  raw.prepare('UPDATE stores SET commit_seq = commit_seq + 1 WHERE id = ?').run(store);
  raw.prepare(
    `INSERT INTO versions (id, store_id, memory_id, operation, path, content_sha256, content_size_bytes, created_at, actor_type, actor_id, commit_seq, path_seq)
     VALUES (@id, @store, @memory, @operation, @path, @sha, 3, @at, 'api_actor', 'apikey_older', (SELECT commit_seq FROM stores WHERE id = @store),
             (SELECT coalesce(max(path_seq), 0) + 1 FROM versions WHERE store_id = @store AND path = @path))`,
  ).run({ ...a, store });
}

const contentTimes = (raw: Database.Database) =>
  raw.prepare('SELECT id, content_at, memory_created_at FROM versions ORDER BY seq').all() as { id: string; content_at: string | null; memory_created_at: string | null }[];

/**
 * A memory created ('one') and changed ('two') through the service, then what an older mnemo appends
 * after it: a rename that keeps the text (keeps its content time), a change back to 'one' (its own
 * time), and a new memory; with the times each version must carry.
 */
async function contentTimesFixture() {
  const core = await openCore();
  const store = await core.service.createStore(core.caller, { name: 'older', description: '', metadata: {} });
  const m = await core.service.createMemory(core.caller, store.id, { path: '/a.md', content: 'one' });
  await core.service.updateMemory(core.caller, store.id, m.id, { content: 'two' });
  await core.close();
  const [v1, v2] = withRaw(core.file, (raw) => raw.prepare('SELECT id, created_at, content_sha256 AS sha FROM versions ORDER BY seq').all()) as { id: string; created_at: string; sha: string }[];
  const later = (s: number) => new Date(Date.parse(v2!.created_at) + s * 1000).toISOString();
  const other = newId('memory');
  const appends: OlderAppend[] = [
    { id: newId('version'), memory: m.id, operation: 'modified', path: '/b.md', sha: v2!.sha, at: later(1) },
    { id: newId('version'), memory: m.id, operation: 'modified', path: '/b.md', sha: v1!.sha, at: later(2) },
    { id: newId('version'), memory: other, operation: 'created', path: '/c.md', sha: v1!.sha, at: later(3) },
  ];
  const times = [
    { id: v1!.id, content_at: v1!.created_at, memory_created_at: v1!.created_at },
    { id: v2!.id, content_at: v2!.created_at, memory_created_at: v1!.created_at },
    { id: appends[0]!.id, content_at: v2!.created_at, memory_created_at: v1!.created_at },
    { id: appends[1]!.id, content_at: later(2), memory_created_at: v1!.created_at },
    { id: appends[2]!.id, content_at: later(3), memory_created_at: later(3) },
  ];
  return { file: core.file, store, expected: { appends, times } };
}

/** A store with one memory that has a created, a modified and (if asked) a deleted version. */
async function historyFixture(core: Core) {
  const { service, caller } = core;
  const store = await service.createStore(caller, { name: 'audit', description: '', metadata: {} });
  const m = await service.createMemory(caller, store.id, { path: '/a.md', content: 'one' });
  await service.updateMemory(caller, store.id, m.id, { content: 'two' });
  const versions = (await service.listVersions(caller, store.id, versionQuery())).data;
  const created = versions.find((v) => v.operation === 'created')!;
  return { store, memory: m, created, versions };
}

describe('sqlite page cursors', () => {
  const stores = async (core: Core, n: number) => {
    for (let i = 0; i < n; i++) await core.service.createStore(core.caller, { name: `s${i}`, description: '', metadata: {} });
  };
  const refusal = async (fn: () => Promise<unknown>) => (await errorOf(fn)).message;

  it('each storage seals with its own file\'s key: a reopened file takes its cursors, another file open beside it refuses them', async () => {
    const dir = tmpDir();
    const a = await openCore({ dir });
    const b = await openCore();
    await stores(a, 3);
    await stores(b, 3);
    const page = (await a.service.listStores(a.caller, storeQuery({ limit: 1 }))).nextPage!;
    expect(a.storage.pageKey().key.equals(b.storage.pageKey().key)).toBe(false);
    expect(await refusal(() => b.service.listStores(b.caller, storeQuery({ limit: 1, page })))).toBe('page: not a cursor this server issued');
    await a.close();
    const again = openSqliteStorage(join(dir, 'mnemo.db'));
    try {
      const service = createService({ storage: again });
      expect((await service.listStores(a.caller, storeQuery({ limit: 10, page }))).data.map((s) => s.name)).toEqual(['s1', 's0']);
    } finally {
      await again.close();
    }
  });

  it('an upgraded file takes unsealed cursors until an hour after its migration; a new file never does', async () => {
    const dir = tmpDir();
    const file = join(dir, 'mnemo.db');
    const first = await openCore({ dir });
    await stores(first, 3);
    const sealed = await first.service.listStores(first.caller, storeQuery({ limit: 10 }));
    const third = sealed.data[2]!;
    const seq = withRaw(file, (raw) => raw.prepare('SELECT seq FROM stores WHERE id = ?').pluck().get(third.id)) as number;
    const unsealed = 'page_' + Buffer.from(JSON.stringify({ s: seq + 1 })).toString('base64url');
    expect(first.storage.pageKey().legacyUntil).toBeNull();
    expect(await refusal(() => first.service.listStores(first.caller, storeQuery({ page: unsealed })))).toBe('page: not a cursor this server issued');
    await first.close();
    withRaw(file, (raw) => raw.exec(`${UNDO_MIGRATION_24} PRAGMA user_version = 23;`));
    const storage = openSqliteStorage(file);
    try {
      const { legacyUntil } = storage.pageKey();
      expect(legacyUntil! - Date.now()).toBeGreaterThan(59 * 60_000);
      expect(legacyUntil! - Date.now()).toBeLessThanOrEqual(60 * 60_000);
      const service = createService({ storage });
      expect((await service.listStores(first.caller, storeQuery({ page: unsealed }))).data.map((s) => s.id)).toEqual([third.id]);
      const untaggedKey = 'page_' + Buffer.from(JSON.stringify({ i: (await service.keys.listKeyPage(first.caller, { limit: 1, page: null })).data[0]!.id })).toString('base64url');
      expect((await service.keys.listKeyPage(first.caller, { limit: 10, page: untaggedKey })).data).toEqual([]);
    } finally {
      await storage.close();
    }
  });
});

describe('sqlite append-only versions', () => {
  const attempts: [string, string][] = [
    ['path', "UPDATE versions SET path = '/forged.md' WHERE id = @id"],
    ['sha256', "UPDATE versions SET content_sha256 = '0000000000000000000000000000000000000000000000000000000000000000' WHERE id = @id"],
    ['size', 'UPDATE versions SET content_size_bytes = 0 WHERE id = @id'],
    ['operation', "UPDATE versions SET operation = 'deleted' WHERE id = @id"],
    ['created_at', "UPDATE versions SET created_at = '2000-01-01T00:00:00.000Z' WHERE id = @id"],
    ['actor', "UPDATE versions SET actor_id = 'apikey_forged' WHERE id = @id"],
    ['actor type', "UPDATE versions SET actor_type = 'session_actor' WHERE id = @id"],
    ['memory id', "UPDATE versions SET memory_id = 'mem_forged' WHERE id = @id"],
    ['version id', "UPDATE versions SET id = 'memver_forged' WHERE id = @id"],
    ['seq', 'UPDATE versions SET seq = seq + 1000 WHERE id = @id'],
    ['a redaction without redactor', "UPDATE versions SET path = NULL, content_sha256 = NULL, content_size_bytes = NULL, redacted_at = '2026-01-01T00:00:00.000Z' WHERE id = @id"],
    ['a redaction that keeps the content', "UPDATE versions SET redacted_at = '2026-01-01T00:00:00.000Z', redacted_by_type = 'api_actor', redacted_by_id = 'apikey_x' WHERE id = @id"],
    ['a no-op update', 'UPDATE versions SET path = path WHERE id = @id'],
  ];

  it.each(attempts)('plain SQL cannot change the %s of a version', async (_name, sql) => {
    const core = await openCore();
    const { created } = await historyFixture(core);
    const before = await core.storage.getVersion(created.storeId, created.id);
    withRaw(core.file, (raw) => expect(() => raw.prepare(sql).run({ id: created.id })).toThrow(/append-only/));
    expect(await core.storage.getVersion(created.storeId, created.id)).toEqual(before);
  });

  it('plain SQL cannot change a stored text, which every version holding it shares', async () => {
    const core = await openCore();
    const { created } = await historyFixture(core);
    const before = await core.storage.getVersion(created.storeId, created.id);
    withRaw(core.file, (raw) => expect(() => raw.prepare("UPDATE contents SET content = 'forged' WHERE sha256 = ?").run(created.contentSha256)).toThrow(/never change/));
    expect(await core.storage.getVersion(created.storeId, created.id)).toEqual(before);
  });

  it('plain SQL cannot delete a version, nor all of them', async () => {
    const core = await openCore();
    const { store, created, versions } = await historyFixture(core);
    withRaw(core.file, (raw) => {
      expect(() => raw.prepare('DELETE FROM versions WHERE id = ?').run(created.id)).toThrow(/append-only/);
      expect(() => raw.prepare('DELETE FROM versions').run()).toThrow(/append-only/);
    });
    expect((await core.service.listVersions(core.caller, store.id, versionQuery())).data).toEqual(versions);
  });

  it('plain SQL cannot un-redact or re-redact a redacted version', async () => {
    const core = await openCore();
    const { store, created } = await historyFixture(core);
    const redacted = await core.service.redactVersion(core.caller, store.id, created.id);
    withRaw(core.file, (raw) => {
      expect(() => raw.prepare("UPDATE versions SET content_sha256 = 'aa' WHERE id = ?").run(created.id)).toThrow(/append-only/);
      expect(() => raw.prepare("UPDATE versions SET path = '/a.md', redacted_at = NULL, redacted_by_type = NULL, redacted_by_id = NULL WHERE id = ?").run(created.id)).toThrow(/append-only/);
      expect(() => raw.prepare("UPDATE versions SET redacted_at = '2030-01-01T00:00:00.000Z' WHERE id = ?").run(created.id)).toThrow(/append-only/);
    });
    expect(await core.storage.getVersion(store.id, created.id)).toEqual({ ...redacted, erased: undefined });
  });

  it('a fork writes no text bytes: memory rows name their text by sha, so the stored texts stay as they were', async () => {
    const core = await openCore();
    const src = await core.service.createStore(core.caller, { name: 'src', description: '', metadata: {} });
    for (let i = 0; i < 5; i++) await core.service.createMemory(core.caller, src.id, { path: `/n${i}.md`, content: `note ${i} `.repeat(200) });
    const textBytes = () => withRaw(core.file, (raw) => raw.prepare('SELECT count(*) AS n, total(length(CAST(content AS BLOB))) AS bytes FROM contents').get());
    const before = textBytes();
    const fork = await core.service.forkStore(core.caller, src.id, { name: 'fork', description: '', metadata: {}, asOf: null });
    expect(textBytes()).toEqual(before);
    expect((await core.service.getMemoryByPath(core.caller, fork.id, '/n3.md'))?.content).toBe('note 3 '.repeat(200));
    const columns = withRaw(core.file, (raw) => raw.prepare("SELECT name FROM pragma_table_info('memories')").pluck().all());
    expect(columns).toContain('content_sha256');
    expect(columns).not.toContain('content');
  });

  it('a fork whose source is deleted while it copies is refused with not_found and leaves no store', async () => {
    const core = await openCore();
    const src = await core.service.createStore(core.caller, { name: 'src', description: '', metadata: {} });
    // More than one batch of the fork (FORK_BATCH 25): the delete lands between two of them.
    for (let i = 0; i < 60; i++) await core.service.createMemory(core.caller, src.id, { path: `/n${i}.md`, content: `note ${i}` });
    const storesBefore = withRaw(core.file, (raw) => raw.prepare('SELECT count(*) FROM stores').pluck().get());
    const fork = core.service.forkStore(core.caller, src.id, { name: 'fork', description: '', metadata: {}, asOf: null }).then(
      () => 'forked',
      (err: unknown) => codeOf(() => Promise.reject(err)),
    );
    // Queued at the writer gate behind the fork's first batch: it runs before the second.
    await core.service.deleteStore(core.caller, src.id);
    expect(await fork).toBe('not_found');
    const listed = await core.service.listStores(core.caller, { includeArchived: true, createdGte: null, createdLte: null, limit: 100, page: null });
    expect(listed.data.map((s) => s.name)).not.toContain('fork');
    while (await core.storage.purgeDeletedStores());
    expect(withRaw(core.file, (raw) => raw.prepare('SELECT count(*) FROM stores').pluck().get())).toBe(Number(storesBefore) - 1);
  });

  it('deleting the store with plain SQL cascades to its memories and versions', async () => {
    const core = await openCore();
    const { store } = await historyFixture(core);
    const other = await core.service.createStore(core.caller, { name: 'other', description: '', metadata: {} });
    await core.service.createMemory(core.caller, other.id, { path: '/b.md', content: 'b' });
    const counts = withRaw(core.file, (raw) => {
      raw.pragma('foreign_keys = ON');
      raw.prepare('DELETE FROM stores WHERE id = ?').run(store.id);
      const count = (table: string, storeId: string) => raw.prepare(`SELECT count(*) FROM ${table} WHERE store_id = ?`).pluck().get(storeId);
      return [count('memories', store.id), count('versions', store.id), count('memories', other.id), count('versions', other.id)];
    });
    expect(counts).toEqual([0, 0, 1, 1]);
    expect(await core.storage.integrityCheck()).toEqual([]);
  });
});

/** Raw bytes of the database file and its WAL (if there is one). */
function diskBytes(file: string): Buffer {
  const parts = [readFileSync(file)];
  if (existsSync(file + '-wal')) parts.push(readFileSync(file + '-wal'));
  return Buffer.concat(parts);
}

/** Pieces of `secret` to look for: the whole string when short, else 32-byte slices across it. */
function needles(secret: string): Buffer[] {
  if (secret.length <= 64) return [Buffer.from(secret)];
  const out: Buffer[] = [];
  for (let i = 0; i + 32 <= secret.length; i += 256) out.push(Buffer.from(secret.slice(i, i + 32)));
  out.push(Buffer.from(secret.slice(-32)));
  return out;
}

function found(file: string, secret: string): number {
  const bytes = diskBytes(file);
  return needles(secret).filter((n) => bytes.includes(n)).length;
}

function uniqueSecret(length: number): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
  let s = 'SECRET-';
  while (s.length < length) s += alphabet[Math.floor(Math.random() * alphabet.length)];
  return s;
}

/** One lower-case word, as the full-text index stores a term: its bytes in the file are the word's. */
const indexWord = () => `zq${uniqueSecret(30).slice(7).toLowerCase().replace(/[^a-z]/g, 'x')}`;

/** Indexes everything queued, as the upkeep would between writes. */
async function indexAll(storage: Core['storage']): Promise<void> {
  while ((await storage.indexSearchBacklog(1000)) > 0);
}

/** A memory written, indexed, edited, and indexed again: its first words are taken out of the index. */
async function editedAfterIndexing(core: Core, storeId: string, path: string, first: string, second: string) {
  const m = await core.service.createMemory(core.caller, storeId, { path, content: first });
  await indexAll(core.storage);
  await core.service.updateMemory(core.caller, storeId, m.id, { content: second });
  await indexAll(core.storage);
  return m;
}

const remnantStores = (file: string) => withRaw(file, (raw) => raw.prepare('SELECT store_id FROM search_remnants ORDER BY store_id').pluck().all());

describe('sqlite redaction erases bytes', () => {
  const cases: [string, number, 'updated' | 'deleted', boolean][] = [
    ['a small inline secret, memory updated, storage left open', 40, 'updated', false],
    ['a small inline secret, memory updated, storage closed', 40, 'updated', true],
    ['a small inline secret, memory deleted', 40, 'deleted', false],
    ['a 12 KiB secret in overflow pages, memory updated, storage left open', 12_000, 'updated', false],
    ['a 12 KiB secret in overflow pages, memory updated, storage closed', 12_000, 'updated', true],
    ['a 12 KiB secret in overflow pages, memory deleted', 12_000, 'deleted', true],
  ];

  it.each(cases)('%s: the secret appears nowhere in the file or its WAL', async (_name, length, then, close) => {
    const core = await openCore();
    const { service, caller, file } = core;
    const secret = uniqueSecret(length);
    const store = await service.createStore(caller, { name: 'leaky', description: '', metadata: {} });
    await service.createMemory(caller, store.id, { path: '/other.md', content: 'unrelated' });
    const m = await service.createMemory(caller, store.id, { path: '/creds.md', content: `token: ${secret}\n` });
    if (then === 'updated') await service.updateMemory(caller, store.id, m.id, { content: 'token: (rotated)\n' });
    else await service.deleteMemory(caller, store.id, m.id);
    await service.createMemory(caller, store.id, { path: '/later.md', content: 'after' });

    expect(found(file, secret)).toBe(needles(secret).length);

    const redacted = await service.redactVersion(caller, store.id, m.versionId);
    expect(redacted.content).toBeNull();
    if (close) core.close();

    expect(found(file, secret)).toBe(0);
    if (!close) {
      core.close();
      expect(found(file, secret)).toBe(0);
    }
    const reopened = openSqliteStorage(file);
    try {
      expect(await reopened.integrityCheck()).toEqual([]);
      expect((await reopened.getVersion(store.id, m.versionId))?.content).toBeNull();
      expect((await reopened.getMemoryByPath(store.id, '/other.md'))?.content).toBe('unrelated');
    } finally {
      await reopened.close();
    }
  });

  it('a redacted version leaves none of its words in the search index either (migration 5 queues re-indexing)', async () => {
    const core = await openCore();
    const { service, caller, file } = core;
    // Lower case, one token: exactly the bytes the full-text index stores as a term.
    const word = `zq${uniqueSecret(30).slice(7).toLowerCase().replace(/[^a-z]/g, 'x')}`;
    const store = await service.createStore(caller, { name: 'leaky', description: '', metadata: {} });
    const m = await service.createMemory(caller, store.id, { path: '/creds.md', content: `token ${word}` });
    const search = async () => (await service.searchMemories(caller, store.id, { q: word, mode: 'fts', pathPrefix: '/', limit: 10, page: null })).data;
    expect(await search()).toHaveLength(1);
    await service.updateMemory(caller, store.id, m.id, { content: 'token rotated' });
    await service.redactVersion(caller, store.id, m.versionId);
    expect(found(file, word)).toBe(0);
    core.close();
    expect(found(file, word)).toBe(0);
  });

  // The heavy turns (secure-delete batches, merge steps) run on a reader thread's connection when
  // there is one (test/src/index-aside.test.ts), on the serving connection when there is not.
  describe.each([['with reader threads', 2], ['without reader threads', 0]])('%s', (_name, readers) => {
    it('an edit re-indexes without erasing the old words (the store is noted), and a redaction then erases them from the index too', async () => {
      const core = await openCore({ readers });
      const { service, caller, file } = core;
      const word = indexWord();
      const store = await service.createStore(caller, { name: 'edited', description: '', metadata: {} });
      // The upkeep's re-indexing, before the redaction: the old words stay in the pages, cancelled.
      const m = await editedAfterIndexing(core, store.id, '/creds.md', `token ${word}`, 'token rotated');
      expect(await service.searchMemories(caller, store.id, { q: word, mode: 'fts', pathPrefix: '/', limit: 10, page: null })).toMatchObject({ data: [] });
      expect(withRaw(file, (raw) => raw.prepare('SELECT store_id, erase_due FROM search_remnants').all())).toEqual([{ store_id: store.id, erase_due: 0 }]);
      await service.redactVersion(caller, store.id, m.versionId);
      expect(found(file, word)).toBe(0);
      expect(remnantStores(file)).toEqual([]);
      core.close();
      expect(found(file, word)).toBe(0);
    });

    it('a store with a retention re-indexes with secure-delete, and a prune in a store noted before its retention erases the pruned words', async () => {
      const core = await openCore({ readers });
      const { service, caller, file } = core;
      const kept = await service.createStore(caller, { name: 'kept', description: '', metadata: {}, retention: { maxAgeDays: null, keepLast: 5 } });
      await editedAfterIndexing(core, kept.id, '/k.md', 'first words', 'second words');
      expect(remnantStores(file)).toEqual([]);

      const word = indexWord();
      const later = await service.createStore(caller, { name: 'later', description: '', metadata: {} });
      await editedAfterIndexing(core, later.id, '/n.md', `note ${word}`, 'note rewritten');
      expect(remnantStores(file)).toEqual([later.id]);
      await service.updateStore(caller, later.id, { retention: { maxAgeDays: null, keepLast: 1 } });
      expect(await service.pruneHistory()).toBe(1);
      expect(found(file, word)).toBe(0);
      expect(remnantStores(file)).toEqual([]);
    });

    it('a turn that only puts texts in commits with secure-delete off, and a turn that erases turns it on again', async () => {
      const core = await openCore({ readers });
      const { service, caller, file, storage } = core;
      const secureDelete = () => withRaw(file, (raw) => raw.prepare(`SELECT v FROM memories_fts_config WHERE k = 'secure-delete'`).pluck().get());
      // A new file starts with it on (schema/search.ts); new texts alone do not need it.
      expect(secureDelete()).toBe(1);
      const plain = await service.createStore(caller, { name: 'plain', description: '', metadata: {} });
      await service.createMemory(caller, plain.id, { path: '/new.md', content: 'fresh words' });
      await indexAll(storage);
      expect(secureDelete()).toBe(0);

      const word = indexWord();
      const kept = await service.createStore(caller, { name: 'kept', description: '', metadata: {}, retention: { maxAgeDays: null, keepLast: 5 } });
      await editedAfterIndexing(core, kept.id, '/k.md', `first ${word}`, 'second words');
      expect(secureDelete()).toBe(1);
      await service.createMemory(caller, plain.id, { path: '/newer.md', content: 'more fresh words' });
      await indexAll(storage);
      expect(secureDelete()).toBe(0);
      const hits = await service.searchMemories(caller, plain.id, { q: 'fresh', mode: 'fts', pathPrefix: '/', limit: 10, page: null });
      expect(hits.data.map((h) => h.memory.path).sort()).toEqual(['/new.md', '/newer.md']);
    });

    it('an erasure a crash left due is finished by the search upkeep before it indexes again', async () => {
      const core = await openCore({ readers });
      const { service, caller, file, storage } = core;
      const store = await service.createStore(caller, { name: 'crashed', description: '', metadata: {} });
      const m = await service.createMemory(caller, store.id, { path: '/a.md', content: `alpha ${indexWord()}` });
      await indexAll(storage);
      // Segments to merge: thirty batches of one.
      for (let i = 0; i < 30; i++) await service.createMemory(caller, store.id, { path: `/f${i}.md`, content: `filler ${i}` });
      while ((await storage.indexSearchBacklog(1)) > 0);
      await service.updateMemory(caller, store.id, m.id, { content: 'alpha gone' });
      await indexAll(storage);
      await service.createMemory(caller, store.id, { path: '/queued.md', content: 'queued meanwhile' });
      // As a redaction's transaction leaves it when the process dies before the steps after it.
      withRaw(file, (raw) => raw.prepare('UPDATE search_remnants SET erase_due = 1').run());
      await core.close();
      const restarted = await openCore({ dir: dirname(file), readers });
      const queued = () => withRaw(file, (raw) => raw.prepare('SELECT count(*) FROM search_backlog').pluck().get());
      let turns = 0;
      while ((await restarted.storage.indexSearchBacklog(1000)) > 0) {
        turns++;
        // Nothing is indexed while the merge runs: every write would add a segment to merge.
        if (remnantStores(file).length === 1) expect(queued()).toBe(1);
      }
      expect(turns).toBeGreaterThan(0);
      expect(queued()).toBe(0);
      expect(remnantStores(file)).toEqual([]);
      const hits = await restarted.service.searchMemories(restarted.caller, store.id, { q: 'meanwhile', mode: 'fts', pathPrefix: '/', limit: 10, page: null });
      expect(hits).toMatchObject({ data: [{ memory: { path: '/queued.md' } }] });
    });

    it('a prune leaves the search queue to the upkeep: a version the index still holds for a queued memory waits, then goes with its words', async () => {
      const core = await openCore({ readers });
      const { service, caller, file } = core;
      const word = indexWord();
      const kept = await service.createStore(caller, { name: 'kept', description: '', metadata: {}, retention: { maxAgeDays: null, keepLast: 1 } });
      const m = await service.createMemory(caller, kept.id, { path: '/k.md', content: `first ${word}` });
      await indexAll(core.storage);
      await service.updateMemory(caller, kept.id, m.id, { content: 'second words' });
      // Queued: the index still holds the first version's words, and only its text can take them out.
      expect(queuedForSearch(file)).toBe(1);

      expect(await service.pruneHistory()).toBe(0);
      expect(queuedForSearch(file)).toBe(1);
      await indexAll(core.storage);
      expect(await service.pruneHistory()).toBe(1);
      expect(found(file, word)).toBe(0);
      expect(await core.storage.getVersion(kept.id, m.versionId)).toBeNull();
    });

    it('a redaction re-indexes only the memories whose index entries hold its version, and leaves the rest of the queue to the upkeep', async () => {
      const core = await openCore({ readers });
      const { service, caller, file } = core;
      const word = indexWord();
      const store = await service.createStore(caller, { name: 'queued', description: '', metadata: {} });
      const m = await service.createMemory(caller, store.id, { path: '/creds.md', content: `token ${word}` });
      await indexAll(core.storage);
      await service.updateMemory(caller, store.id, m.id, { content: 'token rotated' });
      for (let i = 0; i < 5; i++) await service.createMemory(caller, store.id, { path: `/later${i}.md`, content: `later ${i}` });
      expect(queuedForSearch(file)).toBe(6);

      await service.redactVersion(caller, store.id, m.versionId);

      expect(queuedForSearch(file)).toBe(5);
      expect(found(file, word)).toBe(0);
      const hits = await service.searchMemories(caller, store.id, { q: 'rotated', mode: 'fts', pathPrefix: '/', limit: 10, page: null });
      expect(hits).toMatchObject({ data: [{ memory: { path: '/creds.md' } }] });
    });
  });

  it('a redaction while another connection holds a read transaction leaves no secret once that reader ends and the storage closes', async () => {
    const core = await openCore();
    const { service, caller, file } = core;
    const secret = uniqueSecret(5000);
    const store = await service.createStore(caller, { name: 'leaky', description: '', metadata: {} });
    const m = await service.createMemory(caller, store.id, { path: '/creds.md', content: secret });
    await service.updateMemory(caller, store.id, m.id, { content: 'rotated' });
    const reader = rawConnection(file);
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM versions').pluck().get();
    // The TRUNCATE checkpoint waits out the busy timeout for this reader, then gives up for now.
    await service.redactVersion(caller, store.id, m.versionId);
    reader.exec('COMMIT');
    reader.close();
    core.close();
    expect(found(file, secret)).toBe(0);
  });
});
