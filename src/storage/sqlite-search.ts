/**
 * @module SQLite search over current memories: FTS5 (bm25 ranked) and a plain case-insensitive
 * substring scan. Both read only live rows, so deleted and expired memories never match; redacted
 * text is only ever in old versions. Full-text search first indexes every queued write
 * (sqlite-search-index.ts), so it never sees the index lag behind.
 *
 * What one request may cost is bounded, whatever the store holds (issue 11):
 * - Full-text: the index is the outer loop (the memories row is a primary-key lookup per match), and
 *   matches are ranked in windows of FTS_WINDOW consecutive index entries (in rowid, i.e. memory
 *   creation, order). A page walks window after window; a request ranks at most
 *   FTS_WINDOWS_PER_REQUEST windows. bm25 scores use the index's global statistics, so scores are
 *   comparable across windows; only the set ranked together is windowed.
 * - Substring: rows are scanned in path order, at most SCAN_ROWS rows or SCAN_CHARS characters of
 *   content per request; the cursor continues after the last row scanned.
 */
import { MnemoError } from '../errors.js';
import { subtreeEnd } from '../paths.js';
import type { SearchHit, SearchPage, SearchQuery } from '../types.js';
import { cursorNumber, cursorString, decodeCursor, encodeCursor } from './cursor.js';
import { phraseExcerpt, wordExcerpt } from './excerpt.js';
import type { ContinuityStorage } from './port-continuity.js';
import { toMemoryMeta, type MemoryRow } from './rows.js';
import { BATCH, type SearchIndex } from './sqlite-search-index.js';
import type { Db } from './tx.js';

/**
 * Index entries ranked together. Ranking a full window of small memories takes ~3 ms on the bench
 * host (bm25 per entry, a primary-key join, a sort), and 1,000 is ten times the largest page, so the
 * first page of a common word is still the best of a thousand candidates.
 */
export const FTS_WINDOW = 1000;
/** Windows one request may rank while it fills a page (a store holding few of a word's matches). */
export const FTS_WINDOWS_PER_REQUEST = 4;
/** Substring scan budget per request: rows, and characters of content (a few MB of text is a few ms). */
export const SCAN_ROWS = 2000;
export const SCAN_CHARS = 2_000_000;
/** Queued memories a search may index before it runs (sqlite-search-index.ts batches); past it, 503. */
export const SEARCH_DRAIN_BATCHES = 4;

const LIVE_M = '(m.expires_at IS NULL OR m.expires_at > mnemo_now())';
const META_M =
  'm.seq, m.id, m.store_id, m.path, m.content_sha256, m.content_size_bytes, m.version_id, m.mode, m.created_at, m.updated_at, m.expires_at';
/** The top of the rowid range of the last window (no window ends after it). */
const NO_END = Number.MAX_SAFE_INTEGER;

type HitRow = MemoryRow & { content: string; score: number };

export function createSearchStatements(db: Db, index: SearchIndex): Pick<ContinuityStorage, 'searchMemories' | 'indexSearchBacklog'> {
  const q = {
    // The window's last entry and whether another follows: a walk of the term's doclist, no bm25.
    windowEnd: db
      .prepare(`SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? AND rowid > ? ORDER BY rowid LIMIT 2 OFFSET ${FTS_WINDOW - 1}`)
      .pluck(),
    // CROSS JOIN keeps the index outer: joined the other way, SQLite ran the MATCH once per memory
    // row of the store (~2 s for 10,000 memories). Path terms weigh more than body terms: a file
    // named for the topic is usually the answer.
    ranked: db.prepare(
      `SELECT ${META_M}, m.content, f.score FROM (
         SELECT rowid, bm25(memories_fts, 4.0, 1.0) AS score FROM memories_fts
         WHERE memories_fts MATCH ? AND rowid > ? AND rowid <= ?
       ) AS f CROSS JOIN memories m ON m.seq = f.rowid
       WHERE m.store_id = ? AND m.path > ? AND m.path < ? AND ${LIVE_M}
       ORDER BY f.score, m.path LIMIT ? OFFSET ?`,
    ),
    scan: db.prepare(
      `SELECT ${META_M}, m.content FROM memories m
       WHERE m.store_id = ? AND m.path > ? AND m.path < ? AND ${LIVE_M}
       ORDER BY m.path`,
    ),
  };

  function fts(storeId: string, sq: SearchQuery): SearchPage {
    drainBounded();
    const c = decodeCursor(sq.page);
    let after = c ? cursorNumber(c, 'a') : 0;
    let skip = c ? cursorNumber(c, 'o') : 0;
    const match = ftsQuery(sq.q);
    // Nothing but separators (punctuation, NUL): no word can match, and MATCH '' is a syntax error.
    if (match === '') return { data: [], nextPage: null, candidatesCapped: false };
    const end = subtreeEnd(sq.pathPrefix);
    const hits: SearchHit[] = [];
    let capped = after > 0;
    for (let w = 1; ; w++) {
      const ends = q.windowEnd.all(match, after) as number[];
      const hi = ends[0] ?? NO_END;
      const more = ends.length > 1;
      capped ||= more;
      const need = sq.limit - hits.length;
      const rows = q.ranked.all(match, after, hi, storeId, sq.pathPrefix, end, need + 1, skip) as HitRow[];
      for (const r of rows.slice(0, need)) hits.push({ memory: toMemoryMeta(r), snippet: wordExcerpt(r.content, sq.q), score: r.score });
      if (rows.length > need) return { data: hits, nextPage: encodeCursor({ a: after, o: skip + need }), candidatesCapped: capped };
      if (!more) return { data: hits, nextPage: null, candidatesCapped: capped };
      after = hi;
      skip = 0;
      if (hits.length === sq.limit || w >= FTS_WINDOWS_PER_REQUEST) return { data: hits, nextPage: encodeCursor({ a: after, o: 0 }), candidatesCapped: true };
    }
  }

  function substring(storeId: string, sq: SearchQuery): SearchPage {
    const c = decodeCursor(sq.page);
    const resume = c ? cursorString(c, 'p') : '';
    const from = resume > sq.pathPrefix ? resume : sq.pathPrefix;
    const needle = sq.q.toLowerCase();
    const rows: (MemoryRow & { content: string })[] = [];
    let rowsRead = 0;
    let chars = 0;
    let next: string | null = null;
    let capped = false;
    for (const r of q.scan.iterate(storeId, from, subtreeEnd(sq.pathPrefix)) as Iterable<MemoryRow & { content: string }>) {
      if (r.content.toLowerCase().includes(needle) || r.path.toLowerCase().includes(needle)) {
        // A match past a full page: the next page starts at it (after the last one returned).
        if (rows.length === sq.limit) {
          next = rows[rows.length - 1]!.path;
          break;
        }
        rows.push(r);
      }
      rowsRead += 1;
      chars += r.content.length;
      if (rowsRead >= SCAN_ROWS || chars >= SCAN_CHARS) {
        // Budget spent: rows after the last hit up to here did not match, so go on after this one.
        next = r.path;
        capped = true;
        break;
      }
    }
    const data = rows.map((r) => ({ memory: toMemoryMeta(r), snippet: phraseExcerpt(r.content, sq.q), score: 0 }));
    return { data, nextPage: next === null ? null : encodeCursor({ p: next }), candidatesCapped: capped };
  }

  /**
   * Indexes what writes queued, but at most SEARCH_DRAIN_BATCHES batches: the upkeep keeps the queue
   * far below that (search-upkeep.ts), so a longer one means indexing is behind, and a search that
   * waited for all of it would stall every mount and request behind it.
   */
  function drainBounded(): void {
    let left = 1;
    for (let i = 0; i < SEARCH_DRAIN_BATCHES && left > 0; i++) left = index.indexSearchBacklog(BATCH);
    if (left > 0) {
      throw new MnemoError('overloaded', `full-text search is catching up with ${left} queued writes; retry shortly`);
    }
  }

  return {
    indexSearchBacklog: index.indexSearchBacklog,
    searchMemories(storeId: string, sq: SearchQuery): SearchPage {
      // The substring scan reads the rows themselves; only the index can lag behind a write.
      return sq.mode === 'fts' ? fts(storeId, sq) : substring(storeId, sq);
    },
  };
}

/**
 * Each word becomes a quoted FTS5 string, so user text is never query syntax. NUL also separates
 * words: FTS5 reads the query as a C string, so a NUL inside a quoted string ended it (a 500).
 */
export function ftsQuery(text: string): string {
  return text
    .split(/[\s\0]+/u)
    .filter((w) => w !== '')
    .map((w) => `"${w.replace(/"/g, '""')}"`)
    .join(' ');
}
