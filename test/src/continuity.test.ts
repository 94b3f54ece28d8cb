/**
 * Expiring memories and the search index in the core, with one injected clock for the service and
 * the storage: what the mount's reads see (getMemoryMetaByPath, listDirectory, hasMemoriesUnder),
 * path reuse after expiry, renewal, the purge's versions, and that every write path (mount saves,
 * moves, directory moves, store deletion) keeps the full-text index in step: writes queue memories
 * in search_backlog, and a search indexes the queue before it reads (migration 5).
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { sha256Hex } from '../../src/domain/content.js';
import { createService } from '../../src/service/service.js';
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/storage/sqlite/schema/migrations.js';
import { openSqliteStorage } from '../../src/storage/sqlite/open.js';
import type { Caller, SearchQuery } from '../../src/domain/types.js';
import { fakeClock, memoryQuery, readTree, sessionCaller, versionQuery } from '../helpers/core.js';
import { tmpDir } from '../helpers/tmp.js';

async function openTimedCore() {
  const clock = fakeClock('2026-03-01T00:00:00.000Z', 0);
  const file = join(tmpDir(), 'mnemo.db');
  const storage = openSqliteStorage(file, { clock });
  onTestFinished(() => storage.close());
  const service = createService({ storage, clock });
  const ws = await service.keys.defaultWorkspace();
  const { key } = await service.keys.createKey('test', 'admin', ws.id);
  const caller: Caller = { workspaceId: ws.id, actor: { type: 'api_actor', apiKeyId: key.id } };
  const store = await service.createStore(caller, { name: 's', description: '', metadata: {} });
  const later = (seconds: number) => clock.set(new Date(Date.parse('2026-03-01T00:00:00.000Z') + seconds * 1000).toISOString());
  const search = async (q: string, extra: Partial<SearchQuery> = {}) =>
    (await service.searchMemories(caller, store.id, { q, mode: 'fts', pathPrefix: '/', limit: 100, page: null, ...extra })).data.map((h) => h.memory.path);
  return { service, storage, caller, store, clock, later, search, file };
}

/** A second, plain connection to the same file, closed when the test ends. */
function rawDb(file: string): Database.Database {
  const db = new Database(file);
  onTestFinished(() => {
    db.close();
  });
  return db;
}

const backlog = (db: Database.Database) => db.prepare('SELECT seq FROM search_backlog ORDER BY seq').pluck().all() as number[];
const indexed = (db: Database.Database) => db.prepare('SELECT id FROM memories_fts_docsize ORDER BY id').pluck().all() as number[];
const seqOf = (db: Database.Database, memoryId: string) => db.prepare('SELECT seq FROM memories WHERE id = ?').pluck().get(memoryId) as number;

describe('expiring memories', () => {
  it('vanish from every read the mount uses once their time has come', async () => {
    const { service, storage, caller, store, later } = await openTimedCore();
    await service.createMemory(caller, store.id, { path: '/dir/tmp.md', content: 'x', expiry: { ttlSeconds: 60 } });
    await service.createMemory(caller, store.id, { path: '/keep.md', content: 'y' });
    expect((await storage.getMemoryMetaByPath(store.id, '/dir/tmp.md'))?.expiresAt).toBe('2026-03-01T00:01:00.000Z');
    later(61);
    expect(await storage.getMemoryMetaByPath(store.id, '/dir/tmp.md')).toBeNull();
    expect(await storage.getMemoryByPath(store.id, '/dir/tmp.md')).toBeNull();
    expect(await storage.hasMemoriesUnder(store.id, '/dir')).toBe(false);
    expect(await storage.listDirectory(store.id, '/')).toEqual({ files: [expect.objectContaining({ path: '/keep.md' })], dirs: [] });
    expect(await readTree(service, caller, store.id)).toEqual({ '/keep.md': 'y' });
    expect((await service.listMemories(caller, store.id, memoryQuery({ depth: 1 }))).data).toHaveLength(1);
  });

  it('free their path: a mount save there creates a new memory, after a deleted version dated at the expiry', async () => {
    const { service, caller, store, later } = await openTimedCore();
    const old = await service.createMemory(caller, store.id, { path: '/a/b.md', content: 'old', expiry: { ttlSeconds: 10 } });
    later(11);
    const mount = sessionCaller({ caller } as never, 'sesn_mount');
    const saved = (await service.saveMemoryAt(mount, store.id, { path: '/a', content: 'file where a dir was', memoryId: 'mem_new' })).memory;
    expect(saved.id).toBe('mem_new');
    const deleted = (await service.listVersions(caller, store.id, versionQuery({ memoryId: old.id, operation: 'deleted' }))).data;
    expect(deleted).toMatchObject([{ createdAt: '2026-03-01T00:00:10.000Z', createdBy: caller.actor, path: '/a/b.md' }]);
  });

  it('can be renewed or made permanent by an update before they expire, without a new version', async () => {
    const { service, caller, store, later } = await openTimedCore();
    const m = await service.createMemory(caller, store.id, { path: '/r.md', content: 'x', expiry: { ttlSeconds: 10 } });
    later(5);
    const renewed = await service.updateMemory(caller, store.id, m.id, { expiry: { ttlSeconds: 10 } });
    expect(renewed.expiresAt).toBe('2026-03-01T00:00:15.000Z');
    expect(renewed.versionId).toBe(m.versionId);
    later(12);
    expect((await service.getMemory(caller, store.id, m.id)).content).toBe('x');
    await service.updateMemory(caller, store.id, m.id, { expiry: null });
    later(10_000);
    expect((await service.getMemory(caller, store.id, m.id)).expiresAt).toBeNull();
  });

  it('refuses an expires_at that is not in the future', async () => {
    const { service, caller, store } = await openTimedCore();
    await expect(service.createMemory(caller, store.id, { path: '/p.md', content: 'x', expiry: { expiresAt: '2026-02-01T00:00:00.000Z' } })).rejects.toThrow(/expires_at: must be in the future/);
  });
});

describe('the search index', () => {
  it('follows mount saves, moves, directory moves and deletes', async () => {
    const { service, caller, store, search } = await openTimedCore();
    const mount = sessionCaller({ caller } as never, 'sesn_m');
    await service.saveMemoryAt(mount, store.id, { path: '/d/one.md', content: 'heron', memoryId: 'mem_one' });
    expect(await search('heron')).toEqual(['/d/one.md']);
    await service.saveMemoryAt(mount, store.id, { path: '/d/one.md', content: 'egret', memoryId: 'mem_unused' });
    expect(await search('heron')).toEqual([]);
    await service.moveMemory(mount, store.id, 'mem_one', '/d/two.md');
    expect(await search('egret')).toEqual(['/d/two.md']);
    await service.moveTree(mount, store.id, '/d', '/e');
    expect(await search('egret')).toEqual(['/e/two.md']);
    await service.deleteMemory(mount, store.id, 'mem_one');
    expect(await search('egret')).toEqual([]);
  });

  it('forgets every memory of a deleted store, taking them out of the index before their versions go', async () => {
    const { service, storage, caller, store, file } = await openTimedCore();
    const db = rawDb(file);
    const x = await service.createMemory(caller, store.id, { path: '/x.md', content: 'cormorant' });
    await service.createMemory(caller, store.id, { path: '/y.md', content: 'shag' });
    expect(await service.indexSearchBacklog(500)).toBe(0);
    // Queued with the old text still in the index: the delete re-indexes it first.
    await service.updateMemory(caller, store.id, x.id, { content: 'cormorant again' });
    await service.deleteStore(caller, store.id);
    // Its rows go in the upkeep's short steps (sqlite/store-purge.ts); the index first.
    while (await service.purgeDeletedStores());
    expect(indexed(db)).toEqual([]);
    expect(await storage.domainCheck()).toEqual([]);
    const other = await service.createStore(caller, { name: 'o', description: '', metadata: {} });
    expect((await storage.searchMemories(store.id, { q: 'cormorant', mode: 'fts', pathPrefix: '/', limit: 10, page: null })).data).toEqual([]);
    expect((await storage.searchMemories(other.id, { q: 'cormorant', mode: 'fts', pathPrefix: '/', limit: 10, page: null })).data).toEqual([]);
    expect(await storage.integrityCheck()).toEqual([]);
  });

  it('stays consistent with the memories table (FTS5 integrity-check, then every memory indexed)', async () => {
    const { service, storage, caller, store, later, file } = await openTimedCore();
    for (let i = 0; i < 20; i++) await service.createMemory(caller, store.id, { path: `/m/${i}.md`, content: `word${i} shared`, expiry: i % 2 ? { ttlSeconds: 5 } : null });
    later(6);
    await service.createMemory(caller, store.id, { path: '/trigger.md', content: 'purges the expired ones' });
    expect((await storage.searchMemories(store.id, { q: 'shared', mode: 'fts', pathPrefix: '/', limit: 100, page: null })).data).toHaveLength(10);
    const db = rawDb(file);
    expect(() => db.exec(`INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 0)`)).not.toThrow();
    expect(backlog(db)).toEqual([]);
    expect(indexed(db)).toEqual(db.prepare('SELECT seq FROM memories ORDER BY seq').pluck().all());
    expect(await storage.domainCheck()).toEqual([]);
  });

  it('finds a memory in a search right after its write, indexing the queue first', async () => {
    const { service, caller, store, search, file } = await openTimedCore();
    const db = rawDb(file);
    const m = await service.createMemory(caller, store.id, { path: '/fresh.md', content: 'a kingfisher dives' });
    expect(backlog(db)).toEqual([seqOf(db, m.id)]);
    expect(await search('kingfisher')).toEqual(['/fresh.md']);
    expect(backlog(db)).toEqual([]);
  });

  it('queues one backlog row per written memory, which indexSearchBacklog empties', async () => {
    const { service, caller, store, file } = await openTimedCore();
    const db = rawDb(file);
    const m = await service.createMemory(caller, store.id, { path: '/q.md', content: 'one' });
    await service.updateMemory(caller, store.id, m.id, { content: 'two' });
    await service.moveMemory(caller, store.id, m.id, '/r.md');
    expect(backlog(db)).toEqual([seqOf(db, m.id)]);
    expect(indexed(db)).toEqual([]);
    expect(await service.indexSearchBacklog(500)).toBe(0);
    expect(backlog(db)).toEqual([]);
    expect(indexed(db)).toEqual([seqOf(db, m.id)]);
    expect(await service.indexSearchBacklog(500)).toBe(0);
  });

  it('indexes the backlog in batches of at most max, oldest first, and says how many wait', async () => {
    const { service, caller, store, search, file } = await openTimedCore();
    const db = rawDb(file);
    for (let i = 0; i < 5; i++) await service.createMemory(caller, store.id, { path: `/b/${i}.md`, content: `batch${i}` });
    const seqs = backlog(db);
    expect(await service.indexSearchBacklog(2)).toBe(3);
    expect(indexed(db)).toEqual(seqs.slice(0, 2));
    expect(await service.indexSearchBacklog(2)).toBe(1);
    expect(await search('batch4')).toEqual(['/b/4.md']);
    expect(indexed(db)).toEqual(seqs);
  });

  it('ends a batch early once about 400 KB of text is tokenized, so one batch never blocks for long', async () => {
    const { service, caller, store, search } = await openTimedCore();
    for (let i = 0; i < 25; i++) await service.createMemory(caller, store.id, { path: `/big/${i}.md`, content: `big${i} `.padEnd(100_000, 'x') });
    expect(await service.indexSearchBacklog(500)).toBe(21);
    expect(await search('big24')).toEqual(['/big/24.md']);
  });

  it('no longer matches a deleted memory, and drops its words from the index at the next catch-up', async () => {
    const { service, caller, store, search, file } = await openTimedCore();
    const db = rawDb(file);
    const m = await service.createMemory(caller, store.id, { path: '/gone.md', content: 'ptarmigan plumage' });
    expect(await search('ptarmigan')).toEqual(['/gone.md']);
    const seq = seqOf(db, m.id);
    expect(indexed(db)).toEqual([seq]);
    await service.deleteMemory(caller, store.id, m.id);
    expect(backlog(db)).toEqual([seq]);
    expect(await search('ptarmigan')).toEqual([]);
    expect(await search('plumage', { mode: 'substring' })).toEqual([]);
    expect(indexed(db)).toEqual([]);
    expect(db.prepare(`SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'ptarmigan'`).pluck().get()).toBe(0);
  });

  it('indexes a bulk import inside the import, leaving nothing queued', async () => {
    const { service, storage, caller, store, search, file } = await openTimedCore();
    const db = rawDb(file);
    const m = await service.createMemory(caller, store.id, { path: '/old.md', content: 'auk' });
    const stamp = () => ({ actor: caller.actor, now: service.clock(), versionId: service.ids('version') });
    storage.importWrites(store.id, [
      { ...stamp(), memoryId: 'mem_imp', operation: 'created', path: '/imp.md', content: 'guillemot' },
      { ...stamp(), memoryId: 'mem_imp', operation: 'modified', path: '/imp.md', content: 'guillemot eggs' },
      { ...stamp(), memoryId: m.id, operation: 'modified', path: '/old.md', content: 'puffin' },
    ]);
    expect(backlog(db)).toEqual([]);
    expect(await search('guillemot')).toEqual(['/imp.md']);
    expect(await search('auk')).toEqual([]);
    expect(await search('puffin')).toEqual(['/old.md']);
    expect(await storage.domainCheck()).toEqual([]);
  });

  it('builds its snippet from the content, marking the first query word it holds, case and accents aside', async () => {
    const { service, caller, store } = await openTimedCore();
    const long = `${'lorem ipsum '.repeat(30)}Meet at the École Normale on Tuesday. ${'dolor sit '.repeat(30)}`;
    await service.createMemory(caller, store.id, { path: '/school.md', content: long });
    await service.createMemory(caller, store.id, { path: '/topics/walrus.md', content: 'nothing about it in here' });
    const [hit] = (await service.searchMemories(caller, store.id, { q: 'tuesday ECOLE', mode: 'fts', pathPrefix: '/', limit: 10, page: null })).data;
    expect(hit!.snippet).toMatch(/^….*\*\*École\*\* Normale on Tuesday.*…$/u);
    expect(hit!.snippet.length).toBeLessThan(180);
    const [byPath] = (await service.searchMemories(caller, store.id, { q: 'walrus', mode: 'fts', pathPrefix: '/', limit: 10, page: null })).data;
    expect(byPath).toMatchObject({ memory: { path: '/topics/walrus.md' }, snippet: 'nothing about it in here' });
  });
});

describe('the expiry sweep', () => {
  it('deletes expired memories of every store without waiting for a write, once', async () => {
    const { service, storage, caller, store, later } = await openTimedCore();
    const other = await service.createStore(caller, { name: 'o', description: '', metadata: {} });
    const a = await service.createMemory(caller, store.id, { path: '/a.md', content: 'a', expiry: { ttlSeconds: 5 } });
    await service.createMemory(caller, other.id, { path: '/b.md', content: 'b', expiry: { ttlSeconds: 5 } });
    await service.createMemory(caller, other.id, { path: '/c.md', content: 'c', expiry: { ttlSeconds: 500 } });
    expect(await service.purgeExpiredMemories()).toBe(0);
    later(6);
    expect(await service.purgeExpiredMemories()).toBe(2);
    expect(await service.purgeExpiredMemories()).toBe(0);
    expect((await service.listVersions(caller, store.id, versionQuery({ memoryId: a.id }))).data.map((v) => v.operation)).toEqual(['deleted', 'created']);
    expect(await readTree(service, caller, other.id)).toEqual({ '/c.md': 'c' });
    expect(await storage.integrityCheck()).toEqual([]);
  });

  it('deletes a mass expiry in bounded transactions, every memory of every store counted once', async () => {
    const { service, storage, caller, store, later } = await openTimedCore();
    const other = await service.createStore(caller, { name: 'o', description: '', metadata: {} });
    for (let i = 0; i < 700; i++) await service.createMemory(caller, i % 2 ? store.id : other.id, { path: `/m${i}.md`, content: 'x', expiry: { ttlSeconds: 5 } });
    later(6);
    // A transaction takes at most `max`: the storage's sweep stops there and says how many it took.
    expect(await storage.purgeExpiredMemories(service.clock(), 300)).toBe(300);
    expect(await service.purgeExpiredMemories()).toBe(400);
    expect(await readTree(service, caller, store.id)).toEqual({});
    expect(await readTree(service, caller, other.id)).toEqual({});
    expect(await storage.domainCheck()).toEqual([]);
  });
});

describe('mnemo check on the continuity tables', () => {
  it('finds nothing wrong after checkpoints and searches, and reports a stale index and a wrong latest pointer', async () => {
    const { service, storage, caller, store, file, search } = await openTimedCore();
    const m = await service.createMemory(caller, store.id, { path: '/n.md', content: 'indexed words' });
    const ckpt = service.checkpoints;
    const one = await ckpt.create(caller, store.id, ckpt.parse({ agent_id: 'a', session_id: 's', goal: 'g' }));
    await ckpt.create(caller, store.id, ckpt.parse({ agent_id: 'a', session_id: 's', goal: 'g2' }));
    // Queued and not yet indexed is healthy too.
    expect(await storage.domainCheck()).toEqual([]);
    expect(await search('indexed')).toEqual(['/n.md']);
    expect(await storage.domainCheck()).toEqual([]);

    const db = rawDb(file);
    db.prepare(`INSERT INTO memories_fts (memories_fts, rowid, path, content) VALUES ('delete', ?, '/n.md', 'indexed words')`).run(seqOf(db, m.id));
    db.prepare('UPDATE checkpoint_heads SET checkpoint_id = ?, revision = 1').run(one.id);
    const problems = await storage.domainCheck();
    expect(problems).toEqual([
      expect.stringMatching(/^search index: 1 problem\(s\); re-index every memory with /),
      `memory ${m.id} (/n.md) in ${store.id}: missing from the search index and not queued for it`,
      expect.stringContaining('names revision 1, but the newest checkpoint is revision 2'),
    ]);
  });

  it('reports an index entry whose memory is gone, and the repair it names brings the index back', async () => {
    const { service, storage, caller, store, file, search } = await openTimedCore();
    await service.createMemory(caller, store.id, { path: '/kept.md', content: 'osprey' });
    const gone = await service.createMemory(caller, store.id, { path: '/gone.md', content: 'osprey nest' });
    expect(await search('osprey')).toHaveLength(2);
    const db = rawDb(file);
    const seq = seqOf(db, gone.id);
    // Behind the triggers' back: the row goes and its queue entry with it.
    db.prepare('DELETE FROM memories WHERE id = ?').run(gone.id);
    db.prepare('DELETE FROM search_backlog').run();
    const problems = await storage.domainCheck();
    expect(problems).toEqual([expect.stringMatching(/^search index: 1 problem/), `search index: entry ${seq} belongs to no memory and is not queued for removal`]);

    const repair = problems[0]!.slice(problems[0]!.indexOf('with ') + 'with '.length);
    db.exec(repair);
    expect(await search('osprey')).toEqual(['/kept.md']);
    expect(await storage.domainCheck()).toEqual([]);
  });
});

describe('migration 5', () => {
  it('upgrades a version 4 file: the same hits and scores, a healthy index and an empty backlog', async () => {
    const file = join(tmpDir(), 'mnemo.db');
    const v4 = new Database(file);
    for (const m of MIGRATIONS.filter((m) => m.version <= 4)) v4.exec(m.sql);
    v4.pragma('user_version = 4');
    const at = '2026-01-01T00:00:00.000Z';
    v4.prepare(`INSERT INTO workspaces (id, name, is_default, created_at) VALUES ('wrkspc_1', 'w', 1, ?)`).run(at);
    v4.prepare(`INSERT INTO stores (id, workspace_id, name, description, metadata, created_at, updated_at) VALUES ('memstore_1', 'wrkspc_1', 's', '', '{}', ?, ?)`).run(at, at);
    const tree: Record<string, string> = {
      '/notes/heron.md': 'the grey heron waits; a heron again',
      '/heron/nest.md': 'sticks',
      '/misc.md': 'a heron, once, among many other words about nothing at all',
      '/other.md': 'no birds here',
    };
    const insert = v4.prepare(
      `INSERT INTO memories (id, store_id, path, content, content_sha256, content_size_bytes, version_id, created_at, updated_at)
       VALUES (?, 'memstore_1', ?, ?, ?, 0, ?, ?, ?)`,
    );
    Object.entries(tree).forEach(([path, content], i) => insert.run(`mem_${i}`, path, content, sha256Hex(content), `memver_${i}`, at, at));
    v4.prepare(`UPDATE memories SET content = ?, content_sha256 = ? WHERE id = 'mem_0'`).run('the grey heron waits', sha256Hex('the grey heron waits'));
    v4.prepare(`DELETE FROM memories WHERE id = 'mem_3'`).run();
    const before = v4
      .prepare(
        `SELECT m.path, bm25(memories_fts, 4.0, 1.0) AS score FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid
         WHERE memories_fts MATCH '"heron"' ORDER BY score, m.path`,
      )
      .all();
    v4.close();
    expect(before).toHaveLength(3);

    const storage = openSqliteStorage(file);
    onTestFinished(() => storage.close());
    expect(storage.readPragma('user_version')).toBe(SCHEMA_VERSION);
    const after = (await storage.searchMemories('memstore_1', { q: 'heron', mode: 'fts', pathPrefix: '/', limit: 10, page: null })).data;
    expect(after.map((h) => ({ path: h.memory.path, score: h.score }))).toEqual(before);
    expect(after.find((h) => h.memory.path === '/notes/heron.md')?.snippet).toBe('the grey **heron** waits');
    const db = rawDb(file);
    expect(backlog(db)).toEqual([]);
    expect(db.prepare(`SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'memories_fts%'`).all()).toEqual([]);
    expect((await storage.searchMemories('memstore_1', { q: 'birds', mode: 'fts', pathPrefix: '/', limit: 10, page: null })).data).toEqual([]);
  });
});
