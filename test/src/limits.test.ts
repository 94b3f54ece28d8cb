/**
 * Store limits in the core (issue 11, item 5): the usage counter the database keeps follows every
 * write path (service, mount-style saves, moves, expiry, bulk import, store deletion), a migrated
 * database starts with the right counts, `mnemo check` reports a counter that drifted, and the
 * service refuses growth past a limit with `limit_exceeded`. Near a limit, the SQLite admission reads
 * the memory a write replaces as its row alone (by id or by path), never its text.
 */
import Database, { type Statement } from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { Caller } from '../../src/domain/types.js';
import { createService } from '../../src/service/service.js';
import { openSqliteStorage } from '../../src/storage/sqlite/open.js';
import { codeOf, fakeClock, openCore } from '../helpers/core.js';
import { UNDO_MIGRATION_9 } from '../helpers/schema-undo.js';
import { tmpDir } from '../helpers/tmp.js';
import { parseCheckpointCreate } from '../../src/validate/index.js';

function truth(file: string, storeId: string): { memories: number; bytes: number } {
  const db = new Database(file, { readonly: true });
  try {
    const r = db.prepare('SELECT count(*) AS n, coalesce(sum(content_size_bytes), 0) AS b FROM memories WHERE store_id = ?').get(storeId) as { n: number; b: number };
    return { memories: r.n, bytes: r.b };
  } finally {
    db.close();
  }
}

/**
 * The SQL that `write` runs on this thread's SQLite connections, each statement's text with its
 * white space folded: every prepared statement of better-sqlite3 shares one prototype, watched only
 * while `write` runs.
 */
async function statementsOf(write: () => Promise<unknown>): Promise<string[]> {
  const db = new Database(':memory:');
  const proto = Object.getPrototypeOf(db.prepare('SELECT 1')) as Statement;
  db.close();
  const ran: string[] = [];
  const spies = (['get', 'all', 'run', 'iterate'] as const).map((name) => {
    const real = proto[name] as (...args: unknown[]) => unknown;
    return vi.spyOn(proto, name).mockImplementation(function (this: Statement, ...args: unknown[]) {
      ran.push(this.source.replace(/\s+/g, ' ').trim());
      return real.apply(this, args);
    } as never);
  });
  try {
    await write();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return ran;
}

/** How often `ran` read one memory's row by `key` (id or path), with its text and without. */
function rowReads(ran: string[], key: 'id' | 'path'): { withText: number; alone: number } {
  const row = new RegExp(`^SELECT .* FROM memories (INDEXED BY \\w+ )?WHERE store_id = \\? AND ${key} = \\? `);
  const reads = ran.filter((s) => row.test(s));
  const withText = reads.filter((s) => s.includes('FROM contents')).length;
  return { withText, alone: reads.length - withText };
}

describe('store usage', () => {
  it('follows creates, updates, saves by path, moves, deletes, expiry and bulk imports', async () => {
    const clock = fakeClock();
    const core = await openCore({ clock });
    const { service, storage, caller } = core;
    const store = await service.createStore(caller, { name: 'u', description: '', metadata: {} });
    const check = async () => expect(await storage.storeUsage(store.id)).toEqual(truth(core.file, store.id));
    expect(await storage.storeUsage(store.id)).toEqual({ memories: 0, bytes: 0 });
    const a = await service.createMemory(caller, store.id, { path: '/a.md', content: 'hello' });
    await check();
    await service.updateMemory(caller, store.id, a.id, { content: 'héllo, longer' });
    await check();
    await service.saveMemoryAt(caller, store.id, { path: '/b/c.md', content: 'x'.repeat(300), memoryId: service.ids('memory') });
    await service.saveMemoryAt(caller, store.id, { path: '/b/c.md', content: 'y', memoryId: service.ids('memory') });
    await check();
    const d = await service.createMemory(caller, store.id, { path: '/d.md', content: 'dd' });
    await service.moveMemory(caller, store.id, d.id, '/a.md'); // replaces /a.md
    await service.moveTree(caller, store.id, '/b', '/e');
    await check();
    await service.createMemory(caller, store.id, { path: '/ttl.md', content: 'short-lived', expiry: { ttlSeconds: 1 } });
    await check();
    clock.set('2026-01-02T00:00:00.000Z');
    await service.purgeExpiredMemories();
    await check();
    storage.importWrites(store.id, [
      { memoryId: service.ids('memory'), versionId: service.ids('version'), operation: 'created', path: '/bulk.md', content: 'bulk', actor: caller.actor, now: clock() },
    ]);
    await check();
    await service.deleteMemory(caller, store.id, d.id);
    await check();
    expect((await storage.storeUsage(store.id)).memories).toBe(2);
    await service.deleteStore(caller, store.id);
    while (await service.purgeDeletedStores());
    expect(await storage.storeUsage(store.id)).toEqual({ memories: 0, bytes: 0 });
    expect(await storage.domainCheck()).toEqual([]);
  });

  it('is filled in for memories written before the migration that adds it, and mnemo check reports a drifted counter', async () => {
    const core = await openCore();
    const store = await core.service.createStore(core.caller, { name: 'old', description: '', metadata: {} });
    for (let i = 0; i < 5; i++) await core.service.createMemory(core.caller, store.id, { path: `/m${i}.md`, content: 'x'.repeat(i + 1) });
    core.close();
    // Back to schema 5, as a database from before the limits was (migrations 7, 8 and 9 undone too).
    const db = new Database(core.file);
    db.exec(UNDO_MIGRATION_9);
    db.exec(`DROP INDEX memories_meta_by_path;
             ALTER TABLE memories DROP COLUMN atime_us; ALTER TABLE memories DROP COLUMN mtime_us; ALTER TABLE memories DROP COLUMN ctime_us;
             ALTER TABLE memories DROP COLUMN uid; ALTER TABLE memories DROP COLUMN gid;
             CREATE INDEX memories_meta_by_path ON memories
               (store_id, path, id, version_id, content_sha256, content_size_bytes, mode, created_at, updated_at, expires_at);
             DROP INDEX api_keys_one_seeded; ALTER TABLE api_keys DROP COLUMN seeded; ALTER TABLE sessions DROP COLUMN local_pid;
             DROP TRIGGER store_usage_insert; DROP TRIGGER store_usage_delete; DROP TRIGGER store_usage_resize;
             DROP TABLE store_usage; DROP INDEX sessions_active_by_workspace; PRAGMA user_version = 5;`);
    db.close();
    const storage = openSqliteStorage(core.file);
    try {
      expect(await storage.storeUsage(store.id)).toEqual({ memories: 5, bytes: 15 });
      expect(await storage.domainCheck()).toEqual([]);
    } finally {
      await storage.close();
    }
    const tamper = new Database(core.file);
    tamper.prepare('UPDATE store_usage SET bytes = 1 WHERE store_id = ?').run(store.id);
    tamper.close();
    const again = openSqliteStorage(core.file);
    try {
      expect(await again.domainCheck()).toEqual([expect.stringContaining(`store ${store.id}: usage counter says 5 memories / 1 bytes, the store holds 5 / 15`)]);
    } finally {
      await again.close();
    }
  });
});

describe('the service enforces store limits', () => {
  it('refuses a new memory or more bytes past a limit with limit_exceeded and writes nothing', async () => {
    const core = await openCore();
    const service = createService({ storage: core.storage, limits: { maxMemories: 2, maxBytes: 10 } });
    const store = await service.createStore(core.caller, { name: 'l', description: '', metadata: {} });
    const a = await service.createMemory(core.caller, store.id, { path: '/a.md', content: '12345' });
    await service.createMemory(core.caller, store.id, { path: '/b.md', content: '1' });
    expect(await codeOf(() => service.createMemory(core.caller, store.id, { path: '/c.md', content: '' }))).toBe('limit_exceeded');
    expect(await codeOf(() => service.saveMemoryAt(core.caller, store.id, { path: '/c.md', content: '', memoryId: service.ids('memory') }))).toBe('limit_exceeded');
    // A save by path over an existing memory is an update: counted by its change in size.
    await service.saveMemoryAt(core.caller, store.id, { path: '/a.md', content: '123456789', memoryId: service.ids('memory') });
    expect(await codeOf(() => service.updateMemory(core.caller, store.id, a.id, { content: '1234567890' }))).toBe('limit_exceeded');
    expect((await service.getMemory(core.caller, store.id, a.id)).content).toBe('123456789');
    expect(await core.storage.storeUsage(store.id)).toEqual({ memories: 2, bytes: 10 });
    // Bad content is refused for what it is, before any limit.
    expect(await codeOf(() => service.createMemory(core.caller, store.id, { path: '/x.md', content: 'x'.repeat(200_000) }))).toBe('content_too_large');
  });

  it('near the byte limit, an update by id or a save by path has its admission read the memory\'s row alone, never its text: the write reads the text once, as it does far from any limit', async () => {
    const core = await openCore();
    const limited = createService({ storage: core.storage, limits: { maxBytes: 10_000 } });
    const store = await limited.createStore(core.caller, { name: 'near', description: '', metadata: {} });
    const a = await limited.createMemory(core.caller, store.id, { path: '/a.md', content: 'a'.repeat(6000) });
    await limited.createMemory(core.caller, store.id, { path: '/b.md', content: 'b'.repeat(3000) });

    // Far from any limit (the default service): no admission read at all.
    const farById = await statementsOf(() => core.service.updateMemory(core.caller, store.id, a.id, { content: 'c'.repeat(6000) }));
    expect(rowReads(farById, 'id')).toEqual({ withText: 1, alone: 0 });
    // 6,000 bytes onto 9,000 of 10,000 are near the limit: the admission reads what the update replaces.
    const nearById = await statementsOf(() => limited.updateMemory(core.caller, store.id, a.id, { content: 'd'.repeat(6000) }));
    expect(rowReads(nearById, 'id')).toEqual({ withText: 1, alone: 1 });

    const farByPath = await statementsOf(() => core.service.saveMemoryAt(core.caller, store.id, { path: '/a.md', content: 'e'.repeat(6000), memoryId: core.service.ids('memory') }));
    const nearByPath = await statementsOf(() => limited.saveMemoryAt(core.caller, store.id, { path: '/a.md', content: 'f'.repeat(6000), memoryId: limited.ids('memory') }));
    expect(rowReads(farByPath, 'path')).toEqual({ withText: 1, alone: 0 });
    expect(rowReads(nearByPath, 'path')).toEqual({ withText: 1, alone: 1 });
    // The save's own write reads the row by id too, with its text, near the limit or not.
    expect(rowReads(nearByPath, 'id')).toEqual(rowReads(farByPath, 'id'));
    expect((await limited.getMemory(core.caller, store.id, a.id)).content).toBe('f'.repeat(6000));
  });

  it('near the byte limit, an update by id or a save by path that fits to the byte is taken, and one a byte over is refused with limit_exceeded', async () => {
    const core = await openCore();
    const limited = createService({ storage: core.storage, limits: { maxBytes: 10_000 } });
    const store = await limited.createStore(core.caller, { name: 'edge', description: '', metadata: {} });
    const a = await limited.createMemory(core.caller, store.id, { path: '/a.md', content: 'a'.repeat(6000) });
    await limited.createMemory(core.caller, store.id, { path: '/b.md', content: 'b'.repeat(3000) });

    // 10,001 bytes: refused, and nothing written.
    expect(await codeOf(() => limited.updateMemory(core.caller, store.id, a.id, { content: 'x'.repeat(7001) }))).toBe('limit_exceeded');
    expect(await codeOf(() => limited.saveMemoryAt(core.caller, store.id, { path: '/a.md', content: 'x'.repeat(7001), memoryId: limited.ids('memory') }))).toBe('limit_exceeded');
    expect((await limited.getMemory(core.caller, store.id, a.id)).content).toBe('a'.repeat(6000));
    expect(await core.storage.storeUsage(store.id)).toEqual({ memories: 2, bytes: 9000 });

    // 10,000 bytes exactly: taken, by id and then by path.
    await limited.updateMemory(core.caller, store.id, a.id, { content: 'c'.repeat(7000) });
    expect(await core.storage.storeUsage(store.id)).toEqual({ memories: 2, bytes: 10_000 });
    await limited.saveMemoryAt(core.caller, store.id, { path: '/a.md', content: 'd'.repeat(7000), memoryId: limited.ids('memory') });
    expect((await limited.getMemory(core.caller, store.id, a.id)).content).toBe('d'.repeat(7000));
    expect(await core.storage.storeUsage(store.id)).toEqual({ memories: 2, bytes: 10_000 });
    // At the limit, a byte more is refused either way.
    expect(await codeOf(() => limited.updateMemory(core.caller, store.id, a.id, { content: 'x'.repeat(7001) }))).toBe('limit_exceeded');
    expect(await codeOf(() => limited.saveMemoryAt(core.caller, store.id, { path: '/a.md', content: 'x'.repeat(7001), memoryId: limited.ids('memory') }))).toBe('limit_exceeded');
    expect((await limited.getMemory(core.caller, store.id, a.id)).content).toBe('d'.repeat(7000));
  });

  it('a store at its byte limit whose memories expired takes a checkpoint save that fits without them', async () => {
    // One clock for the service and the adapter (what its readers hide expired memories by): it moves only when set.
    const clock = fakeClock('2026-01-01T00:00:00.000Z', 0);
    const storage = openSqliteStorage(join(tmpDir(), 'mnemo.db'), { clock });
    onTestFinished(() => storage.close());
    const service = createService({ storage, clock, limits: { maxBytes: 1000 } });
    onTestFinished(() => service.durability.stop());
    const ws = await service.keys.defaultWorkspace();
    const { key } = await service.keys.createKey('test', 'admin', ws.id);
    const caller: Caller = { workspaceId: ws.id, actor: { type: 'api_actor', apiKeyId: key.id } };
    const store = await service.createStore(caller, { name: 'full', description: '', metadata: {} });
    await service.createMemory(caller, store.id, { path: '/a.md', content: 'a'.repeat(500), expiry: { ttlSeconds: 60 } });
    await service.createMemory(caller, store.id, { path: '/b.md', content: 'b'.repeat(500), expiry: { ttlSeconds: 60 } });
    const checkpoint = parseCheckpointCreate({ agent_id: 'agent', session_id: 's1', goal: 'ship it', summary: 's'.repeat(600) });
    // At the limit while the memories live.
    expect(await codeOf(() => service.checkpoints.create(caller, store.id, checkpoint))).toBe('limit_exceeded');
    clock.set('2026-01-01T00:01:00.000Z');
    // Expired, not yet deleted by a write or the sweep: the counter still holds them; the save is checked without them.
    expect(await storage.storeUsage(store.id)).toEqual({ memories: 2, bytes: 1000 });
    const saved = await service.checkpoints.create(caller, store.id, checkpoint);
    expect(saved.sizeBytes).toBeGreaterThan(600);
    expect((await service.checkpoints.latest(caller, store.id, 'agent', 's1')).id).toBe(saved.id);
    // The checkpoint's bytes count: one that would not fit beside it is refused.
    const more = parseCheckpointCreate({ agent_id: 'agent', session_id: 's2', goal: 'ship it', summary: 's'.repeat(600) });
    expect(await codeOf(() => service.checkpoints.create(caller, store.id, more))).toBe('limit_exceeded');
  });
});
