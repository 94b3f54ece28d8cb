/**
 * @module PostgreSQL search over current memories: full text on the stored tsvector (GIN,
 * ts_rank_cd) and case-insensitive substring on trigram indexes (pg_trgm, needles of 3 characters or more). Same request and
 * response shapes as SQLite's (sqlite/search.ts): snippets from the same excerpt functions, the
 * prefix filter, cursors. What differs: the ranking (ts_rank_cd with path words weighing 4x body
 * words, against bm25 there; `score` is minus the rank, so lower is better on both), words are
 * ANDed but not phrase-matched, and full-text candidates are never windowed (the GIN index finds a
 * store's matches; a page is ranked over all of them), so `candidatesCapped` is always false.
 * Writes leave their rows' words to the backlog (postgres/search-index.ts); a search reads rows
 * still queued by computing their words itself, so a memory is found from its write's commit on.
 */
import { MnemoError } from '../../domain/errors.js';
import { subtreeEnd } from '../../domain/paths.js';
import type { SearchPage, SearchQuery } from '../../domain/types.js';
import { cursorNumber, cursorString, decodeSearchCursor, encodeCursor } from '../cursor.js';
import { phraseExcerpt, wordExcerpt } from '../excerpt.js';
import { versionContent } from './contents.js';
import { all, type Q } from './db.js';
import type { MemoryContext } from './memories.js';
import { indexStoreBacklog } from './search-index.js';
import { toMemoryMeta, type MemoryRow } from './rows.js';

const META_M =
  'm.seq, m.id, m.store_id, m.path, m.content_sha256, m.content_size_bytes, m.version_id, m.mode, m.created_at, m.updated_at, m.expires_at, m.atime_us, m.mtime_us, m.ctime_us, m.uid, m.gid';

/** How many of its store's queued rows a full-text search indexes before it reads (SQLite's search indexes 4 batches of 1,000). */
const SEARCH_INDEXES_FIRST = 4000;

/** Path words (weight A) count 4x body words (B), as SQLite's bm25 weights 4.0 and 1.0. Order: D, C, B, A. */
const WEIGHTS = '{0.1, 0.2, 0.25, 1.0}';

/** ASCII separators, as mnemo_words splits (postgres/schema/v1.ts); NUL too, which PostgreSQL text cannot carry. */
const SEPARATORS = /[\s\0!-/:-@[-`{-~]+/gu;

/** The shortest needle that has a trigram: a shorter one cannot use a trigram index. */
const TRIGRAM = 3;

/**
 * Substring matches found through the trigram indexes (postgres/schema/v12.ts): texts the upkeep
 * marked ready from `contents_content_trgm`, texts still queued read one by one (few: the upkeep's
 * backlog), paths from `memories_path_trgm`, each joined to the store's memories in the range. One
 * `OR` across the two tables (SUBSTRING_BY_SCAN) can only be a join filter, which reads every text of the
 * store: 37 ms against 2.7 for a rare needle over 3,000 memories, the same for a common one.
 */
export const SUBSTRING_BY_TRIGRAMS = `WITH hit AS (
    SELECT m.seq FROM contents c JOIN memories m ON m.content_sha256 = c.sha256
    WHERE c.trigrams_ready AND c.content ILIKE $5 AND m.store_id = $1 AND m.path > $2 AND m.path < $3
    UNION
    SELECT m.seq FROM contents c JOIN memories m ON m.content_sha256 = c.sha256
    WHERE NOT c.trigrams_ready AND c.content ILIKE $5 AND m.store_id = $1 AND m.path > $2 AND m.path < $3
    UNION
    SELECT m.seq FROM memories m WHERE m.path ILIKE $5 AND m.store_id = $1 AND m.path > $2 AND m.path < $3
  )
  SELECT ${META_M}, c.content FROM hit JOIN memories m ON m.seq = hit.seq JOIN contents c ON c.sha256 = m.content_sha256
  WHERE m.expires_at IS NULL OR m.expires_at > $4
  ORDER BY m.path LIMIT $6`;

/** A needle of one or two characters: the store's memories in path order, each text matched as read. */
const SUBSTRING_BY_SCAN = `SELECT ${META_M}, c.content FROM memories m JOIN contents c ON c.sha256 = m.content_sha256
  WHERE m.store_id = $1 AND m.path > $2 AND m.path < $3 AND (m.expires_at IS NULL OR m.expires_at > $4)
    AND (c.content ILIKE $5 OR m.path ILIKE $5)
  ORDER BY m.path LIMIT $6`;

export function searchOps(ctx: MemoryContext) {
  async function fts(q: Q, storeId: string, sq: SearchQuery): Promise<SearchPage> {
    const c = decodeSearchCursor(sq.page, 'fts');
    const skip = c ? cursorNumber(c, 'o') : 0;
    if (skip < 0) throw new MnemoError('invalid_request', 'page: not a cursor this server issued', { field: 'page' });
    const words = sq.q.replace(SEPARATORS, ' ').trim();
    // Nothing but separators: no word can match.
    if (words === '') return { data: [], nextPage: null, candidatesCapped: false };
    await indexStoreBacklog(q, storeId, SEARCH_INDEXES_FIRST);
    // Indexed rows through the GIN index; rows still in the backlog (search-index.ts) by their words computed here.
    const rows = await all<MemoryRow & { content: string; score: number }>(
      q,
      `WITH hits AS (
         SELECT m.seq, m.search FROM memories m
         WHERE m.store_id = $1 AND m.search @@ plainto_tsquery('simple', mnemo_words($2))
         UNION ALL
         SELECT m.seq, w.search FROM memories m JOIN contents c ON c.sha256 = m.content_sha256,
                LATERAL (SELECT mnemo_search(m.path, c.content) AS search) w
         WHERE m.store_id = $1 AND m.search IS NULL AND w.search @@ plainto_tsquery('simple', mnemo_words($2))
       )
       SELECT ${META_M}, ${versionContent('m')} AS content, -ts_rank_cd('${WEIGHTS}', h.search, plainto_tsquery('simple', mnemo_words($2))) AS score
       FROM hits h JOIN memories m ON m.seq = h.seq
       WHERE m.path > $3 AND m.path < $4 AND (m.expires_at IS NULL OR m.expires_at > $5)
       ORDER BY score, m.path LIMIT $6 OFFSET $7`,
      [storeId, words, sq.pathPrefix, subtreeEnd(sq.pathPrefix), ctx.clock(), sq.limit + 1, skip],
    );
    const page = rows.slice(0, sq.limit);
    return {
      data: page.map((r) => ({ memory: toMemoryMeta(r), ...wordExcerpt(r.content, sq.q), score: r.score })),
      nextPage: rows.length > sq.limit ? encodeCursor({ o: skip + sq.limit }) : null,
      candidatesCapped: false,
    };
  }

  async function substring(q: Q, storeId: string, sq: SearchQuery): Promise<SearchPage> {
    const c = decodeSearchCursor(sq.page, 'substring');
    const resume = c ? cursorString(c, 'p') : '';
    const from = resume > sq.pathPrefix ? resume : sq.pathPrefix;
    // A needle with NUL matches nothing PostgreSQL can hold.
    if (sq.q.includes('\0')) return { data: [], nextPage: null, candidatesCapped: false };
    const pattern = '%' + sq.q.replace(/[\\%_]/g, (ch) => '\\' + ch) + '%';
    const rows = await all<MemoryRow & { content: string }>(
      q,
      [...sq.q].length >= TRIGRAM ? SUBSTRING_BY_TRIGRAMS : SUBSTRING_BY_SCAN,
      [storeId, from, subtreeEnd(sq.pathPrefix), ctx.clock(), pattern, sq.limit + 1],
    );
    const page = rows.slice(0, sq.limit);
    return {
      data: page.map((r) => ({ memory: toMemoryMeta(r), ...phraseExcerpt(r.content, sq.q), score: 0 })),
      nextPage: rows.length > sq.limit ? encodeCursor({ p: page[page.length - 1]!.path }) : null,
      candidatesCapped: false,
    };
  }

  return {
    searchMemories(q: Q, storeId: string, sq: SearchQuery): Promise<SearchPage> {
      return sq.mode === 'fts' ? fts(q, storeId, sq) : substring(q, storeId, sq);
    },
  };
}
