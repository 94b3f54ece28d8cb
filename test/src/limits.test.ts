/**
 * Store limits in the core (issue 11, item 5): the usage counter the database keeps follows every
 * write path (service, mount-style saves, moves, expiry, bulk import, store deletion), a migrated
 * database starts with the right counts, `mnemo check` reports a counter that drifted, and the
 * service refuses growth past a limit with `limit_exceeded`.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
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
