/**
 * @module SQLite search over current memories: FTS5 (bm25 ranked, snippets) and a plain
 * case-insensitive substring scan. Both read only live rows, so deleted and expired memories never
 * match, and redaction (which only touches old versions) never reaches the index.
 */
import { subtreeEnd } from '../paths.js';
import type { Page, SearchHit, SearchQuery } from '../types.js';
import { cursorNumber, decodeCursor, encodeCursor } from './cursor.js';
import type { ContinuityStorage } from './port-continuity.js';
import { toMemoryMeta, type MemoryRow } from './rows.js';
import type { Db } from './tx.js';

const LIVE_M = '(m.expires_at IS NULL OR m.expires_at > mnemo_now())';
const META_M =
  'm.seq, m.id, m.store_id, m.path, m.content_sha256, m.content_size_bytes, m.version_id, m.mode, m.created_at, m.updated_at, m.expires_at';
const SNIPPET_CHARS = 160;

export function createSearchStatements(db: Db): Pick<ContinuityStorage, 'searchMemories'> {
  db.function('mnemo_ifind', { deterministic: true }, (hay: unknown, needle: unknown) =>
    String(hay).toLowerCase().includes(String(needle)) ? 1 : 0,
  );
  const q = {
    // Path terms weigh more than body terms: a file named for the topic is usually the answer.
    fts: db.prepare(
      `SELECT ${META_M}, snippet(memories_fts, -1, '**', '**', '…', 16) AS snippet, bm25(memories_fts, 4.0, 1.0) AS score
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
    searchMemories(storeId: string, sq: SearchQuery): Page<SearchHit> {
      const c = decodeCursor(sq.page);
      const offset = c ? cursorNumber(c, 'o') : 0;
      const end = subtreeEnd(sq.pathPrefix);
      let hits: SearchHit[];
      if (sq.mode === 'fts') {
        const rows = q.fts.all(ftsQuery(sq.q), storeId, sq.pathPrefix, end, sq.limit + 1, offset) as (MemoryRow & { snippet: string; score: number })[];
        hits = rows.map((r) => ({ memory: toMemoryMeta(r), snippet: r.snippet, score: r.score }));
      } else {
        const needle = sq.q.toLowerCase();
        const rows = q.substring.all(storeId, sq.pathPrefix, end, needle, needle, sq.limit + 1, offset) as (MemoryRow & { content: string })[];
        hits = rows.map((r) => ({ memory: toMemoryMeta(r), snippet: excerpt(r.content, sq.q), score: 0 }));
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

/** About SNIPPET_CHARS characters around the first match, the match wrapped in **. */
function excerpt(content: string, phrase: string): string {
  const at = content.toLowerCase().indexOf(phrase.toLowerCase());
  if (at < 0) return content.slice(0, SNIPPET_CHARS); // matched on the path
  const from = Math.max(0, at - Math.floor((SNIPPET_CHARS - phrase.length) / 2));
  const to = Math.min(content.length, from + SNIPPET_CHARS);
  const hit = content.slice(at, at + phrase.length);
  return (
    (from > 0 ? '…' : '') + content.slice(from, at) + `**${hit}**` + content.slice(at + phrase.length, Math.max(to, at + phrase.length)) +
    (to < content.length ? '…' : '')
  );
}
