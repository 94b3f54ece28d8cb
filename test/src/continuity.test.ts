/**
 * Expiring memories and the search index in the core, with one injected clock for the service and
 * the storage: what the mount's reads see (getMemoryMetaByPath, listDirectory, hasMemoriesUnder),
 * path reuse after expiry, renewal, the purge's versions, and that every write path (mount saves,
 * moves, directory moves, store deletion) keeps the full-text index in step.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createService } from '../../src/service.js';
import { openSqliteStorage } from '../../src/storage/sqlite.js';
import type { Caller, SearchQuery } from '../../src/types.js';
import { fakeClock, memoryQuery, readTree, sessionCaller, versionQuery } from '../helpers/core.js';
import { tmpDir } from '../helpers/tmp.js';

function openTimedCore() {
  const clock = fakeClock('2026-03-01T00:00:00.000Z', 0);
  const file = join(tmpDir(), 'mnemo.db');
  const storage = openSqliteStorage(file, { clock });
  onTestFinished(() => storage.close());
  const service = createService({ storage, clock });
  const ws = service.keys.defaultWorkspace();
  const { key } = service.keys.createKey('test', 'admin', ws.id);
  const caller: Caller = { workspaceId: ws.id, actor: { type: 'api_actor', apiKeyId: key.id } };
  const store = service.createStore(caller, { name: 's', description: '', metadata: {} });
  const later = (seconds: number) => clock.set(new Date(Date.parse('2026-03-01T00:00:00.000Z') + seconds * 1000).toISOString());
  const search = (q: string, extra: Partial<SearchQuery> = {}) =>
    service.searchMemories(caller, store.id, { q, mode: 'fts', pathPrefix: '/', limit: 100, page: null, ...extra }).data.map((h) => h.memory.path);
  return { service, storage, caller, store, clock, later, search, file };
}

describe('expiring memories', () => {
  it('vanish from every read the mount uses once their time has come', () => {
    const { service, storage, caller, store, later } = openTimedCore();
    service.createMemory(caller, store.id, { path: '/dir/tmp.md', content: 'x', expiry: { ttlSeconds: 60 } });
    service.createMemory(caller, store.id, { path: '/keep.md', content: 'y' });
    expect(storage.getMemoryMetaByPath(store.id, '/dir/tmp.md')?.expiresAt).toBe('2026-03-01T00:01:00.000Z');
    later(61);
    expect(storage.getMemoryMetaByPath(store.id, '/dir/tmp.md')).toBeNull();
    expect(storage.getMemoryByPath(store.id, '/dir/tmp.md')).toBeNull();
    expect(storage.hasMemoriesUnder(store.id, '/dir')).toBe(false);
    expect(storage.listDirectory(store.id, '/')).toEqual({ files: [expect.objectContaining({ path: '/keep.md' })], dirs: [] });
    expect(readTree(service, caller, store.id)).toEqual({ '/keep.md': 'y' });
    expect(service.listMemories(caller, store.id, memoryQuery({ depth: 1 })).data).toHaveLength(1);
  });

  it('free their path: a mount save there creates a new memory, after a deleted version dated at the expiry', () => {
    const { service, caller, store, later } = openTimedCore();
    const old = service.createMemory(caller, store.id, { path: '/a/b.md', content: 'old', expiry: { ttlSeconds: 10 } });
    later(11);
    const mount = sessionCaller({ caller } as never, 'sesn_mount');
    const saved = service.saveMemoryAt(mount, store.id, { path: '/a', content: 'file where a dir was', memoryId: 'mem_new' }).memory;
    expect(saved.id).toBe('mem_new');
    const deleted = service.listVersions(caller, store.id, versionQuery({ memoryId: old.id, operation: 'deleted' })).data;
    expect(deleted).toMatchObject([{ createdAt: '2026-03-01T00:00:10.000Z', createdBy: caller.actor, path: '/a/b.md' }]);
  });

  it('can be renewed or made permanent by an update before they expire, without a new version', () => {
    const { service, caller, store, later } = openTimedCore();
    const m = service.createMemory(caller, store.id, { path: '/r.md', content: 'x', expiry: { ttlSeconds: 10 } });
    later(5);
    const renewed = service.updateMemory(caller, store.id, m.id, { expiry: { ttlSeconds: 10 } });
    expect(renewed.expiresAt).toBe('2026-03-01T00:00:15.000Z');
    expect(renewed.versionId).toBe(m.versionId);
    later(12);
    expect(service.getMemory(caller, store.id, m.id).content).toBe('x');
    service.updateMemory(caller, store.id, m.id, { expiry: null });
    later(10_000);
    expect(service.getMemory(caller, store.id, m.id).expiresAt).toBeNull();
  });

  it('refuses an expires_at that is not in the future', () => {
    const { service, caller, store } = openTimedCore();
    expect(() => service.createMemory(caller, store.id, { path: '/p.md', content: 'x', expiry: { expiresAt: '2026-02-01T00:00:00.000Z' } })).toThrow(
      /expires_at: must be in the future/,
    );
  });
});

describe('the search index', () => {
  it('follows mount saves, moves, directory moves and deletes', () => {
    const { service, caller, store, search } = openTimedCore();
    const mount = sessionCaller({ caller } as never, 'sesn_m');
    service.saveMemoryAt(mount, store.id, { path: '/d/one.md', content: 'heron', memoryId: 'mem_one' });
    expect(search('heron')).toEqual(['/d/one.md']);
    service.saveMemoryAt(mount, store.id, { path: '/d/one.md', content: 'egret', memoryId: 'mem_unused' });
    expect(search('heron')).toEqual([]);
    service.moveMemory(mount, store.id, 'mem_one', '/d/two.md');
    expect(search('egret')).toEqual(['/d/two.md']);
    service.moveTree(mount, store.id, '/d', '/e');
    expect(search('egret')).toEqual(['/e/two.md']);
    service.deleteMemory(mount, store.id, 'mem_one');
    expect(search('egret')).toEqual([]);
  });

  it('forgets every memory of a deleted store', () => {
    const { service, storage, caller, store } = openTimedCore();
    service.createMemory(caller, store.id, { path: '/x.md', content: 'cormorant' });
    service.deleteStore(caller, store.id);
    const other = service.createStore(caller, { name: 'o', description: '', metadata: {} });
    expect(storage.searchMemories(store.id, { q: 'cormorant', mode: 'fts', pathPrefix: '/', limit: 10, page: null }).data).toEqual([]);
    expect(storage.searchMemories(other.id, { q: 'cormorant', mode: 'fts', pathPrefix: '/', limit: 10, page: null }).data).toEqual([]);
    expect(storage.integrityCheck()).toEqual([]);
  });

  it('stays consistent with the memories table (FTS5 integrity-check)', () => {
    const { service, storage, caller, store, later, file } = openTimedCore();
    for (let i = 0; i < 20; i++) service.createMemory(caller, store.id, { path: `/m/${i}.md`, content: `word${i} shared`, expiry: i % 2 ? { ttlSeconds: 5 } : null });
    later(6);
    service.createMemory(caller, store.id, { path: '/trigger.md', content: 'purges the expired ones' });
    expect(storage.searchMemories(store.id, { q: 'shared', mode: 'fts', pathPrefix: '/', limit: 100, page: null }).data).toHaveLength(10);
    // FTS5's own check, comparing the index with the memories table it indexes (rank 1).
    const db = new Database(file);
    onTestFinished(() => {
      db.close();
    });
    expect(() => db.exec(`INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)`)).not.toThrow();
  });
});

describe('the expiry sweep', () => {
  it('deletes expired memories of every store without waiting for a write, once', () => {
    const { service, storage, caller, store, later } = openTimedCore();
    const other = service.createStore(caller, { name: 'o', description: '', metadata: {} });
    const a = service.createMemory(caller, store.id, { path: '/a.md', content: 'a', expiry: { ttlSeconds: 5 } });
    service.createMemory(caller, other.id, { path: '/b.md', content: 'b', expiry: { ttlSeconds: 5 } });
    service.createMemory(caller, other.id, { path: '/c.md', content: 'c', expiry: { ttlSeconds: 500 } });
    expect(service.purgeExpiredMemories()).toBe(0);
    later(6);
    expect(service.purgeExpiredMemories()).toBe(2);
    expect(service.purgeExpiredMemories()).toBe(0);
    expect(service.listVersions(caller, store.id, versionQuery({ memoryId: a.id })).data.map((v) => v.operation)).toEqual(['deleted', 'created']);
    expect(readTree(service, caller, other.id)).toEqual({ '/c.md': 'c' });
    expect(storage.integrityCheck()).toEqual([]);
  });
});

describe('mnemo check on the continuity tables', () => {
  it('finds nothing wrong after checkpoints and searches, and reports a stale index and a wrong latest pointer', () => {
    const { service, storage, caller, store, file } = openTimedCore();
    const m = service.createMemory(caller, store.id, { path: '/n.md', content: 'indexed words' });
    const ckpt = service.checkpoints;
    const one = ckpt.create(caller, store.id, ckpt.parse({ agent_id: 'a', session_id: 's', goal: 'g' }));
    ckpt.create(caller, store.id, ckpt.parse({ agent_id: 'a', session_id: 's', goal: 'g2' }));
    expect(storage.domainCheck()).toEqual([]);

    const db = new Database(file);
    onTestFinished(() => {
      db.close();
    });
    const seq = (db.prepare('SELECT seq FROM memories WHERE id = ?').get(m.id) as { seq: number }).seq;
    db.prepare(`INSERT INTO memories_fts (memories_fts, rowid, path, content) VALUES ('delete', ?, '/n.md', 'indexed words')`).run(seq);
    db.prepare('UPDATE checkpoint_heads SET checkpoint_id = ?, revision = 1').run(one.id);
    const problems = storage.domainCheck();
    expect(problems).toEqual([
      expect.stringMatching(/^search index: /),
      expect.stringContaining('names revision 1, but the newest checkpoint is revision 2'),
    ]);
  });
});
