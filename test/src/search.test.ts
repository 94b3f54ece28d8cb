/**
 * What one search may cost (issue 11) over a real SQLite file: the full-text plan starts from the
 * index, not from the store's rows; a common word is ranked in windows of FTS_WINDOW matches and
 * says so, and paging walks every window with no duplicates and no gaps; the substring scan stops
 * at its budget per request and says so; a search indexes a bounded backlog and refuses past it.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MnemoError } from '../../src/domain/errors.js';
import type { ImportedWrite } from '../../src/storage/sqlite/bulk.js';
import { FTS_WINDOW, SCAN_ROWS, SEARCH_DRAIN_BATCHES, SEARCH_SQL } from '../../src/storage/sqlite/search.js';
import { TURN_BATCH } from '../../src/storage/sqlite/search-index.js';
import type { SearchHit, SearchPage, SearchQuery } from '../../src/domain/types.js';
import { openCore, queuedForSearch, type Core } from '../helpers/core.js';

function plan(file: string, sql: string, params: unknown[]): string[] {
  const db = new Database(file, { readonly: true });
  try {
    db.function('mnemo_now', () => new Date().toISOString());
    return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail);
  } finally {
    db.close();
  }
}

/** Imports `n` memories into a new store in one go (indexed as they land): /p/00000.md … */
async function bulkStore(core: Core, n: number, content: (i: number) => string, name = 'bulk'): Promise<string> {
  const { service, storage, caller } = core;
  const storeId = (await service.createStore(caller, { name, description: '', metadata: {} })).id;
  const writes: ImportedWrite[] = [];
  for (let i = 0; i < n; i++) {
    writes.push({ memoryId: service.ids('memory'), operation: 'created', path: `/p/${String(i).padStart(5, '0')}.md`, content: content(i), versionId: service.ids('version'), now: service.clock(), actor: caller.actor });
  }
  storage.importWrites(storeId, writes);
  return storeId;
}

function query(q: string, extra: Partial<SearchQuery> = {}): SearchQuery {
  return { q, mode: 'fts', pathPrefix: '/', limit: 100, page: null, ...extra };
}

/** Every page of a search, in order. */
async function allPages(core: Core, storeId: string, q: SearchQuery): Promise<SearchPage[]> {
  const pages: SearchPage[] = [];
  let page: string | null = null;
  do {
    const p = await core.service.searchMemories(core.caller, storeId, { ...q, page });
    pages.push(p);
    page = p.nextPage;
    if (pages.length > 10_000) throw new Error('search never ends');
  } while (page);
  return pages;
}

const paths = (hits: SearchHit[]) => hits.map((h) => h.memory.path);

describe('full-text search cost', () => {
  it('starts from the index and looks each match up by key, never scanning the store', async () => {
    const core = await openCore();
    const storeId = await bulkStore(core, 50, (i) => `note ${i}`);
    const params = { rawEnd: ['"note"', 0n], windowEnd: ['"note"', 0n, storeId, '/', '0'], ranked: ['"note"', 0n, 99n, storeId, '/', '0', 10, 0] };
    for (const [name, args] of Object.entries(params)) {
      const details = plan(core.file, SEARCH_SQL[name as keyof typeof params], args);
      // The virtual table is the outer loop; memories (as m or k) is reached by its integer primary key only.
      const rows = details.filter((d) => / [mk]\b/.test(d));
      const index = details.findIndex((d) => d.includes('VIRTUAL TABLE'));
      expect(index, name).toBeGreaterThanOrEqual(0);
      if (rows.length > 0) expect(index, name).toBeLessThan(details.indexOf(rows[0]!));
      expect(rows.every((d) => /^SEARCH [mk] USING INTEGER PRIMARY KEY \(rowid=\?\)$/.test(d)), `${name}: ${details.join('; ')}`).toBe(true);
    }
  });

  it('ranks a common word in windows, says so, and pages through every match once', async () => {
    const core = await openCore();
    const n = FTS_WINDOW * 2 + 345;
    // Term frequency varies, so the ranking within a window is not creation order.
    const storeId = await bulkStore(core, n, (i) => `${'common '.repeat((i * 7) % 5 + 1)}filler text number ${i}`);
    const other = await bulkStore(core, 300, () => 'common in another store', 'other');

    const first = await core.service.searchMemories(core.caller, storeId, query('common'));
    expect(first.candidatesCapped).toBe(true);
    expect(first.data).toHaveLength(100);
    // The first page is the best of the first window (the first FTS_WINDOW memories created), by score.
    expect(first.data.every((h) => Number(h.memory.path.slice(3, 8)) < FTS_WINDOW)).toBe(true);
    const scores = first.data.map((h) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => a - b));
    expect(new Set(first.data.map((h) => (Number(h.memory.path.slice(3, 8)) * 7) % 5)).size).toBe(1);

    const pages = await allPages(core, storeId, query('common'));
    const seen = pages.flatMap((p) => paths(p.data));
    expect(seen).toHaveLength(n);
    expect(new Set(seen).size).toBe(n);
    expect(pages.every((p) => p.candidatesCapped)).toBe(true);
    // Windows come in creation order: every hit of window k precedes every hit of window k + 1.
    const windowOf = seen.map((p) => Math.floor(Number(p.slice(3, 8)) / FTS_WINDOW));
    expect(windowOf).toEqual([...windowOf].sort((a, b) => a - b));

    // A store with fewer matches than a window is ranked whole and not capped.
    const small = await allPages(core, other, query('common'));
    expect(small.map((p) => p.candidatesCapped)).toEqual(small.map(() => false));
    expect(small.flatMap((p) => p.data)).toHaveLength(300);
  });

  it('pages a path prefix past the cap with no gaps or duplicates, also with tiny pages', async () => {
    const core = await openCore();
    const storeId = await bulkStore(core, FTS_WINDOW + 10, (i) => `word ${i % 3 === 0 ? 'rare' : 'plain'}`);
    const q = query('word', { pathPrefix: '/p/', limit: 7 });
    const seen = (await allPages(core, storeId, q)).flatMap((p) => paths(p.data));
    expect(new Set(seen).size).toBe(FTS_WINDOW + 10);
    expect(seen).toHaveLength(FTS_WINDOW + 10);
    const rare = (await allPages(core, storeId, query('rare', { limit: 1 }))).flatMap((p) => paths(p.data));
    expect(rare.sort()).toEqual(Array.from({ length: FTS_WINDOW + 10 }, (_, i) => i).filter((i) => i % 3 === 0).map((i) => `/p/${String(i).padStart(5, '0')}.md`));
  });

  it('indexes its backlog in short turns: at most TURN_BATCH memories, and about 400 KB of text, each', async () => {
    // Each batch of its own blocks the event loop that serves every mount while it runs.
    const core = await openCore();
    const store = await core.service.createStore(core.caller, { name: 'turns', description: '', metadata: {} });
    // A store with a retention takes a re-indexed text out with secure-delete (search-index.ts).
    const kept = await core.service.createStore(core.caller, { name: 'kept', description: '', metadata: {}, retention: { maxAgeDays: null, keepLast: 50 } });
    for (const s of [store, kept]) {
      for (let i = 0; i < 10; i++) await core.service.createMemory(core.caller, s.id, { path: `/big${i}.md`, content: `big ${i} `.repeat(20_000).slice(0, 100_000) });
    }
    expect(await core.storage.indexSearchBacklog(10_000)).toBe(16);
    expect(await core.storage.indexSearchBacklog(10_000)).toBe(12);
    for (let left = 12; left > 0; ) left = await core.storage.indexSearchBacklog(10_000);
    const bigOnes = async (storeId: string) => (await core.service.listMemories(core.caller, storeId, { pathPrefix: '/', depth: 0, limit: 3, page: null, view: 'basic' })).data;
    // Taken out plainly, a text costs about what putting it in does: three changed big memories are one turn.
    for (const item of await bigOnes(store.id)) if (item.type === 'memory') await core.service.updateMemory(core.caller, store.id, item.memory.id, { content: 'small now' });
    expect(await core.storage.indexSearchBacklog(10_000)).toBe(0);
    // With secure-delete it costs many times that: a changed big memory is a turn of its own.
    for (const item of await bigOnes(kept.id)) if (item.type === 'memory') await core.service.updateMemory(core.caller, kept.id, item.memory.id, { content: 'small now' });
    expect(await core.storage.indexSearchBacklog(10_000)).toBe(2);
    expect(await core.storage.indexSearchBacklog(10_000)).toBe(1);
    expect(await core.storage.indexSearchBacklog(10_000)).toBe(0);
    const db = new Database(core.file);
    const queue = db.prepare('INSERT INTO search_backlog (seq, indexed_version) VALUES (?, NULL)');
    db.transaction(() => {
      for (let i = 0; i < TURN_BATCH + 50; i++) queue.run(1_000_000 + i);
    })();
    db.close();
    expect(await core.storage.indexSearchBacklog(10_000)).toBe(50);
    expect(await core.storage.indexSearchBacklog(10_000)).toBe(0);
    // Derived data: its batches owe no WAL sync, so nothing waits for one and the gauge stays at 0.
    expect(core.storage.unsyncedCommits()).toBe(0);
    // Indexed for real, in those turns.
    expect((await core.service.searchMemories(core.caller, store.id, query('big 7'))).data.map((r) => r.memory.path)).toContain('/big7.md');
  });

  it('indexes a bounded backlog before searching and refuses, overloaded, past it', async () => {
    const core = await openCore();
    const storeId = await bulkStore(core, 3, (i) => `heron ${i}`);
    // Queued removals of memories that no longer exist: the cheapest backlog to fake, costed the same per batch.
    const db = new Database(core.file);
    const queue = db.prepare('INSERT INTO search_backlog (seq, indexed_version) VALUES (?, NULL)');
    db.transaction(() => {
      for (let i = 0; i < SEARCH_DRAIN_BATCHES * TURN_BATCH + 500; i++) queue.run(1_000_000 + i);
    })();
    db.close();
    let refused: unknown;
    try {
      await core.service.searchMemories(core.caller, storeId, query('heron'));
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(MnemoError);
    expect((refused as MnemoError).code).toBe('overloaded');
    expect(queuedForSearch(core.file)).toBe(500);
    // The substring scan reads rows, not the index: it answers at once.
    expect((await core.service.searchMemories(core.caller, storeId, query('heron', { mode: 'substring' }))).data).toHaveLength(3);
    // The refused search did its share: the next one indexes the rest and answers.
    expect((await core.service.searchMemories(core.caller, storeId, query('heron'))).data).toHaveLength(3);
    expect(queuedForSearch(core.file)).toBe(0);
  });
});

describe('search cursors', () => {
  it('refuses a cursor of the other mode and a forged negative one', async () => {
    const core = await openCore();
    const storeId = await bulkStore(core, 30, (i) => `puffin ${i}`);
    const search = (q: SearchQuery) => () => core.service.searchMemories(core.caller, storeId, q);
    const fts = (await core.service.searchMemories(core.caller, storeId, query('puffin', { limit: 10 }))).nextPage!;
    const sub = (await core.service.searchMemories(core.caller, storeId, query('puffin', { mode: 'substring', limit: 10 }))).nextPage!;
    const forged = 'page_' + Buffer.from(JSON.stringify({ a: 0, o: -5 })).toString('base64url');
    for (const bad of [search(query('puffin', { mode: 'substring', page: fts })), search(query('puffin', { page: sub })), search(query('puffin', { page: forged }))]) {
      await expect(bad()).rejects.toThrow(expect.objectContaining({ code: 'invalid_request' }));
    }
  });
});

describe('substring search cost', () => {
  it('scans at most SCAN_ROWS rows per request, says so, and pages on in path order', async () => {
    const core = await openCore();
    const n = SCAN_ROWS * 2 + 123;
    const storeId = await bulkStore(core, n, (i) => (i % 50 === 7 ? `has the Needle ${i}` : `plain ${i}`));
    const q = query('needle', { mode: 'substring', limit: 100 });
    const first = await core.service.searchMemories(core.caller, storeId, q);
    // Fewer than a page of hits, yet more to come: the budget ended this request.
    expect(first.candidatesCapped).toBe(true);
    expect(first.data.length).toBeLessThan(100);
    expect(first.nextPage).not.toBeNull();
    const pages = await allPages(core, storeId, q);
    const seen = pages.flatMap((p) => paths(p.data));
    const expected = Array.from({ length: n }, (_, i) => i).filter((i) => i % 50 === 7).map((i) => `/p/${String(i).padStart(5, '0')}.md`);
    expect(seen).toEqual(expected);
    expect(pages.at(-1)!.candidatesCapped).toBe(false);
  });

  it('fills a page within the budget without saying it was capped', async () => {
    const core = await openCore();
    const storeId = await bulkStore(core, 30, (i) => `needle ${i}`);
    const pages = await allPages(core, storeId, query('NEEDLE', { mode: 'substring', limit: 10 }));
    expect(pages.map((p) => [p.data.length, p.candidatesCapped])).toEqual([[10, false], [10, false], [10, false]]);
  });
});
