/**
 * Migration 9 (issue 15): a file from before it gets each store's versions numbered in their
 * insertion order, and writes after it continue the count; the database refuses a version that
 * does not take its store's next number.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { newId } from '../../src/service/ids.js';
import { openSqliteStorage } from '../../src/storage/sqlite/open.js';
import { openCore } from '../helpers/core.js';
import { UNDO_MIGRATION_9 } from '../helpers/schema-undo.js';
import { versionOf } from './storage/feed.suite.js';

describe('migration 9', () => {
  it('numbers existing versions per store in insertion order, and new writes continue from there', async () => {
    const core = await openCore();
    const a = await core.service.createStore(core.caller, { name: 'a', description: '', metadata: {} });
    const b = await core.service.createStore(core.caller, { name: 'b', description: '', metadata: {} });
    const m = await core.service.createMemory(core.caller, a.id, { path: '/x', content: '1' });
    await core.service.createMemory(core.caller, b.id, { path: '/y', content: '1' });
    await core.service.updateMemory(core.caller, a.id, m.id, { content: '2' });
    await core.service.createMemory(core.caller, a.id, { path: '/z', content: '1' });
    await core.close();
    const raw = new Database(core.file);
    raw.exec(UNDO_MIGRATION_9);
    raw.pragma('user_version = 8');
    const order = raw.prepare('SELECT id FROM versions WHERE store_id = ? ORDER BY seq').pluck().all(a.id);
    raw.close();

    const storage = openSqliteStorage(core.file);
    try {
      const before = await storage.listChanges(a.id, { after: 0, limit: 100 });
      expect(before.map((c) => [c.seq, versionOf(c).id])).toEqual(order.map((id, i) => [i + 1, id]));
      expect((await storage.listChanges(b.id, { after: 0, limit: 100 })).map((c) => c.seq)).toEqual([1]);
      await storage.createMemory({ actor: core.caller.actor, now: new Date().toISOString(), versionId: newId('version'), storeId: a.id, memoryId: newId('memory'), path: '/new', content: 'n' });
      expect((await storage.listChanges(a.id, { after: 3, limit: 100 })).map((c) => [c.seq, versionOf(c).path])).toEqual([[4, '/new']]);
      expect(await storage.domainCheck()).toEqual([]);
    } finally {
      await storage.close();
    }
  });

  it('the database refuses a version that does not take its store\'s next number, and a change of a version\'s number', async () => {
    const core = await openCore();
    const s = await core.service.createStore(core.caller, { name: 's', description: '', metadata: {} });
    const m = await core.service.createMemory(core.caller, s.id, { path: '/x', content: '1' });
    await core.close();
    const raw = new Database(core.file);
    try {
      const insert = (seq: number) =>
        raw.prepare(
          `INSERT INTO versions (id, store_id, memory_id, operation, path, content_sha256, content_size_bytes, created_at, actor_type, actor_id, commit_seq)
           VALUES (?, ?, ?, 'modified', '/x', 'sha', 1, '2026-01-01T00:00:00.000Z', 'api_actor', 'k', ?)`,
        ).run(newId('version'), s.id, m.id, seq);
      expect(() => insert(2)).toThrow(/next commit_seq/);
      expect(() => raw.prepare('UPDATE versions SET commit_seq = 7 WHERE id = ?').run(m.versionId)).toThrow(/append-only/);
    } finally {
      raw.close();
    }
  });
});
