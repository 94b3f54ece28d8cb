/**
 * @module SQLite search over current memories: FTS5 (bm25 ranked) and a plain case-insensitive
 * substring scan. Both read only live rows, so deleted and expired memories never match; redacted
 * text is only ever in old versions. Full-text search first indexes every queued write
 * (sqlite/search-index.ts), so it never sees the index lag behind; past SEARCH_DRAIN_BATCHES of
 * them it refuses (503 overloaded) rather than block everything else while it catches up.
 *
 * What one request may cost is bounded, whatever the store holds (issue 11):
 * - Full-text: the index is the outer loop (the memories row is a primary-key lookup per match), and
 *   matches are ranked in windows: the next FTS_WINDOW matches of this store and prefix in index
 *   (memory creation) order, or as many as the index's next FTS_WINDOW_RAW matches of the query
 *   hold (the index is shared by all stores), whichever ends first. A page walks window after
 *   window; a request ranks at most FTS_WINDOWS_PER_REQUEST. bm25 uses the index's global
 *   statistics, so scores compare across windows; only the set ranked together is windowed. Only a
 *   page's own hits have their content read (for the snippet).
 * - Substring: rows are scanned in path order, at most SCAN_ROWS rows or SCAN_CHARS characters of
 *   content per request; the cursor continues after the last row scanned.
 */
import { MnemoError } from '../../domain/errors.js';
import { subtreeEnd } from '../../domain/paths.js';
import type { SearchHit, SearchPage, SearchQuery } from '../../domain/types.js';
import { cursorNumber, cursorString, decodeSearchCursor, encodeCursor } from '../cursor.js';
import { phraseExcerpt, wordExcerpt } from '../excerpt.js';
import type { MaintenanceStorage } from '../port.js';
import type { Synchronous, SyncReads } from './reads.js';
import { toMemoryMeta, type MemoryRow } from '../common/rows.js';
import { textOf } from './contents.js';
import { TURN_BATCH, type SearchIndex } from './search-index.js';
import type { Db } from './tx.js';

/**
 * Matches of a store ranked together (a window). Ranking a full window of small memories takes ~3 ms on the bench
 * host (bm25 per entry, a primary-key join, a sort), and 1,000 is ten times the largest page, so the
 * first page of a common word is still the best of a thousand candidates.
 */
export const FTS_WINDOW = 1000;
/** Index matches one window may walk: bounds the primary-key lookups when other stores hold most matches. */
export const FTS_WINDOW_RAW = 10_000;
/** Windows one request may rank while it fills a page (a page that ends one window starts the next). */
export const FTS_WINDOWS_PER_REQUEST = 2;
/** Substring scan budget per request: rows, and characters of content (a few MB of text is a few ms). */
export const SCAN_ROWS = 2000;
export const SCAN_CHARS = 2_000_000;
/**
 * Batches a search may index before it runs (sqlite/search-index.ts: one short turn each, so the
 * mounts are served between them); past them, 503. About 0.6 s of indexing at most on the 2-core
 * host: 40,000 queued memories, 19,000 new ones of 4 KiB, or 1,200 changed ones.
 */
export const SEARCH_DRAIN_BATCHES = 200;

const LIVE_M = '(m.expires_at IS NULL OR m.expires_at > mnemo_now())';
const META_M =
  'm.seq, m.id, m.store_id, m.path, m.content_sha256, m.content_size_bytes, m.version_id, m.mode, m.created_at, m.updated_at, m.expires_at';
/** The top of the rowid range of the last window (no window ends after it). */
const NO_END = Number.MAX_SAFE_INTEGER;
/**
 * Rowid bounds go to FTS5 as integers: better-sqlite3 binds a JS number as a REAL, and FTS5 then
 * walked the whole doclist past an upper bound (12 ms instead of 0.07 ms for 100,000 matches).
 */
const int = (n: number): bigint => BigInt(n);

type HitRow = MemoryRow & { content: string; score: number; live: 0 | 1 };

/** The statements, exported so that a test can read their query plans. */
export const SEARCH_SQL = {
  // The index's FTS_WINDOW_RAW-th match after the cursor, and whether another follows: a doclist walk.
  rawEnd: `SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? AND rowid > ? ORDER BY rowid LIMIT 2 OFFSET ${FTS_WINDOW_RAW - 1}`,
  // The window's last match of this store and prefix among those, and whether another follows.
  // Only metadata is read: the memory's text is never touched here.
  windowEnd: `SELECT c.rowid FROM (
      SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? AND rowid > ? ORDER BY rowid LIMIT ${FTS_WINDOW_RAW}
    ) AS c CROSS JOIN memories m ON m.seq = c.rowid
    WHERE m.store_id = ? AND m.path > ? AND m.path < ?
    ORDER BY c.rowid LIMIT 2 OFFSET ${FTS_WINDOW - 1}`,
  // One page of a window by score. CROSS JOIN keeps the index outer: joined the other way, SQLite
  // ran the MATCH once per memory row of the store (~2 s for 10,000 memories). Path terms weigh
  // more than body terms: a file named for the topic is usually the answer. Liveness is checked on
  // the page's rows only (expires_at sits after content in the row): an expired memory the purge
  // has not yet removed takes a place in the ranking and leaves its page one hit short.
  ranked: `SELECT ${META_M}, ${textOf('m')} AS content, r.score, ${LIVE_M} AS live FROM (
      SELECT f.rowid AS seq, bm25(memories_fts, 4.0, 1.0) AS score, k.path AS path
      FROM memories_fts AS f CROSS JOIN memories k ON k.seq = f.rowid
      WHERE memories_fts MATCH ? AND f.rowid > ? AND f.rowid <= ? AND k.store_id = ? AND k.path > ? AND k.path < ?
      ORDER BY score, k.path LIMIT +? OFFSET +?
    ) AS r CROSS JOIN memories m ON m.seq = r.seq
    ORDER BY r.score, r.path`,
  // Path order on the (store_id, path) index; the caller stops reading at its budget.
  // The text by its sha (schema/memory-text.ts): only rows the budget reaches read theirs.
  scan: `SELECT ${META_M}, ${textOf('m')} AS content FROM memories m
    WHERE m.store_id = ? AND m.path > ? AND m.path < ? AND ${LIVE_M}
    ORDER BY m.path`,
};

export function createSearchStatements(db: Db, index: SearchIndex): Pick<SyncReads, 'searchMemories' | 'searchBacklog'> & Pick<Synchronous<MaintenanceStorage>, 'indexSearchBacklog'> {
  const q = {
    backlog: db.prepare('SELECT count(*) FROM search_backlog').pluck(),
    rawEnd: db.prepare(SEARCH_SQL.rawEnd).pluck(),
    windowEnd: db.prepare(SEARCH_SQL.windowEnd).pluck(),
    ranked: db.prepare(SEARCH_SQL.ranked),
    scan: db.prepare(SEARCH_SQL.scan),
  };

  // The caller has indexed the backlog first (open.ts, drainSearchBacklog): this only reads.
  function fts(storeId: string, sq: SearchQuery): SearchPage {
    const c = decodeSearchCursor(sq.page, 'fts');
    let after = c ? cursorNumber(c, 'a') : 0;
    let skip = c ? cursorNumber(c, 'o') : 0;
    if (after < 0 || skip < 0) throw new MnemoError('invalid_request', 'page: not a cursor this server issued', { field: 'page' });
    const match = ftsQuery(sq.q);
    // Nothing but separators (punctuation, NUL): no word can match, and MATCH '' is a syntax error.
    if (match === '') return { data: [], nextPage: null, candidatesCapped: false };
    const end = subtreeEnd(sq.pathPrefix);
    const hits: SearchHit[] = [];
    let capped = after > 0;
    for (let w = 1; ; w++) {
      const own = q.windowEnd.all(match, int(after), storeId, sq.pathPrefix, end) as number[];
      // Only a short window needs to know where the raw walk ended (a full one ends at its own last match).
      const raw = own.length > 1 ? [] : (q.rawEnd.all(match, int(after)) as number[]);
      // A full window ends at its last own match; a short one at the end of the raw walk (or the index).
      const hi = own[0] ?? raw[0] ?? NO_END;
      const more = own.length > 1 || raw.length > 1;
      capped ||= more;
      const need = sq.limit - hits.length;
      const rows = q.ranked.all(match, int(after), int(hi), storeId, sq.pathPrefix, end, need + 1, skip) as HitRow[];
      for (const r of rows.slice(0, need)) if (r.live) hits.push({ memory: toMemoryMeta(r), ...wordExcerpt(r.content, sq.q), score: r.score });
      if (rows.length > need) return { data: hits, nextPage: encodeCursor({ a: after, o: skip + need }), candidatesCapped: capped };
      if (!more) return { data: hits, nextPage: null, candidatesCapped: capped };
      after = hi;
      skip = 0;
      if (hits.length === sq.limit || w >= FTS_WINDOWS_PER_REQUEST) return { data: hits, nextPage: encodeCursor({ a: after, o: 0 }), candidatesCapped: true };
    }
  }

  function substring(storeId: string, sq: SearchQuery): SearchPage {
    const c = decodeSearchCursor(sq.page, 'substring');
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
    const data = rows.map((r) => ({ memory: toMemoryMeta(r), ...phraseExcerpt(r.content, sq.q), score: 0 }));
    return { data, nextPage: next === null ? null : encodeCursor({ p: next }), candidatesCapped: capped };
  }

  return {
    indexSearchBacklog: index.indexSearchBacklog,
    searchBacklog: () => q.backlog.get() as number,
    searchMemories(storeId: string, sq: SearchQuery): SearchPage {
      // The substring scan reads the rows themselves; only the index can lag behind a write.
      return sq.mode === 'fts' ? fts(storeId, sq) : substring(storeId, sq);
    },
  };
}

/**
 * Indexes what writes queued before a full-text search reads, but at most SEARCH_DRAIN_BATCHES
 * batches, one per turn of the event loop: the upkeep keeps the queue far below that
 * (service/search-upkeep.ts), so a longer one means indexing is behind, and a search that waited
 * for all of it would stall every mount and request behind it (503 overloaded instead).
 */
export async function drainSearchBacklog(indexBatch: (max: number) => number | Promise<number>): Promise<void> {
  let left = 1;
  for (let i = 0; i < SEARCH_DRAIN_BATCHES && left > 0; i++) {
    if (i > 0) await new Promise((resolve) => setImmediate(resolve));
    left = await indexBatch(TURN_BATCH);
  }
  if (left > 0) throw overloaded(left);
}

function overloaded(left: number): MnemoError {
  return new MnemoError('overloaded', `full-text search is catching up with ${left} queued writes; retry shortly`);
}

/**
 * Each word becomes a quoted FTS5 string, so user text is never query syntax. NUL also separates
 * words: FTS5 reads the query as a C string, so a NUL inside a quoted string ended it (a 500).
 * So does ASCII punctuation, as PostgreSQL's mnemo_words splits: a quoted "crossing-zebra" was a
 * phrase (the two words adjacent, in that order), so it missed "zebra-crossing", which the words
 * in any order find.
 */
export function ftsQuery(text: string): string {
  return text
    .split(/[\s\0!-/:-@[-`{-~]+/u)
    .filter((w) => w !== '')
    .map((w) => `"${w.replace(/"/g, '""')}"`)
    .join(' ');
}
