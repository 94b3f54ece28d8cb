/**
 * @module SQLite search over current memories: FTS5 (bm25 ranked) and a plain case-insensitive
 * substring scan. Both read only live rows, so deleted and expired memories never match; redacted
 * text is only ever in old versions. Full-text search first indexes every queued write
 * (sqlite-search-index.ts), so it never sees the index lag behind.
 */
import { subtreeEnd } from '../paths.js';
import type { Page, SearchHit, SearchQuery } from '../types.js';
import { cursorNumber, decodeCursor, encodeCursor } from './cursor.js';
import { phraseExcerpt, wordExcerpt } from './excerpt.js';
import type { ContinuityStorage } from './port-continuity.js';
import { toMemoryMeta, type MemoryRow } from './rows.js';
import type { SearchIndex } from './sqlite-search-index.js';
import type { Db } from './tx.js';

const LIVE_M = '(m.expires_at IS NULL OR m.expires_at > mnemo_now())';
const META_M =
  'm.seq, m.id, m.store_id, m.path, m.content_sha256, m.content_size_bytes, m.version_id, m.mode, m.created_at, m.updated_at, m.expires_at';

export function createSearchStatements(db: Db, index: SearchIndex): Pick<ContinuityStorage, 'searchMemories' | 'indexSearchBacklog'> {
  db.function('mnemo_ifind', { deterministic: true }, (hay: unknown, needle: unknown) =>
    String(hay).toLowerCase().includes(String(needle)) ? 1 : 0,
  );
  const q = {
    // Path terms weigh more than body terms: a file named for the topic is usually the answer.
    fts: db.prepare(
      `SELECT ${META_M}, m.content, bm25(memories_fts, 4.0, 1.0) AS score
       FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid
       WHERE memories_fts MATCH ? AND m.store_id = ? AND m.path > ? AND m.path < ? AND ${LIVE_M}
       ORDER BY score, m.path LIMIT ? OFFSET ?`,
    ),
    substring: db.prepare(
      `SELECT ${META_M}, m.content FROM memories m
       WHERE m.store_id = ? AND m.path > ? AND m.path < ? AND ${LIVE_M}
         AND (mnemo_ifind(m.content, ?) OR mnemo_ifind(m.path, ?))
       ORDER BY m.path LIMIT ? OFFSET ?`,
    ),
  };

  return {
    indexSearchBacklog: index.indexSearchBacklog,
    searchMemories(storeId: string, sq: SearchQuery): Page<SearchHit> {
      const c = decodeCursor(sq.page);
      const offset = c ? cursorNumber(c, 'o') : 0;
      const end = subtreeEnd(sq.pathPrefix);
      let hits: SearchHit[];
      if (sq.mode === 'fts') {
        // The substring scan reads the rows themselves; only the index can lag behind a write.
        index.drain();
        const rows = q.fts.all(ftsQuery(sq.q), storeId, sq.pathPrefix, end, sq.limit + 1, offset) as (MemoryRow & { content: string; score: number })[];
        hits = rows.map((r) => ({ memory: toMemoryMeta(r), snippet: wordExcerpt(r.content, sq.q), score: r.score }));
      } else {
        const needle = sq.q.toLowerCase();
        const rows = q.substring.all(storeId, sq.pathPrefix, end, needle, needle, sq.limit + 1, offset) as (MemoryRow & { content: string })[];
        hits = rows.map((r) => ({ memory: toMemoryMeta(r), snippet: phraseExcerpt(r.content, sq.q), score: 0 }));
      }
      const more = hits.length > sq.limit;
      return { data: hits.slice(0, sq.limit), nextPage: more ? encodeCursor({ o: offset + sq.limit }) : null };
    },
  };
}

/** Each whitespace-separated word becomes a quoted FTS5 string, so user text is never query syntax. */
export function ftsQuery(text: string): string {
  return text
    .split(/\s+/u)
    .filter((w) => w !== '')
    .map((w) => `"${w.replace(/"/g, '""')}"`)
    .join(' ');
}
