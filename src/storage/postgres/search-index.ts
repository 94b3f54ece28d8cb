/**
 * @module The full-text backlog on PostgreSQL (postgres/schema/v10.ts): a memory write leaves its
 * row's tsvector NULL (the partial index `memories_unindexed` is the queue) and this fills it in
 * batches, off the write path, as SQLite's backlog does. Any number of servers run it at once: each
 * takes its batch `FOR UPDATE SKIP LOCKED`, so none waits for another or for a writer, and a row a
 * writer changes again is queued again by that write. Until its turn a row is still found: search
 * computes a queued row's words itself (postgres/search.ts). New texts wait the same way for the
 * substring search's trigram index (postgres/schema/v12.ts); substring search reads every text.
 */
import { first, run, type Q } from './db.js';

/**
 * Indexes up to `max` queued rows in one statement (its own transaction), marks up to `max` queued
 * texts ready for the trigram index (postgres/schema/v12.ts), and returns how many of both still
 * wait. The text is joined, not read by a subquery: a row whose text this statement cannot
 * see yet (committed after it began) is left queued rather than indexed without its words.
 *
 * The words are computed first, with no row locked (`words`, materialized, and counted whole by an
 * init plan before `batch` reads a row: a materialized CTE is still computed lazily, as its reader
 * asks, and a plan that joined row by row would lock each row as its words came: a trial of this
 * upkeep over a queue table of its own got that plan, and a directory move beside it waited 4x as
 * long), and only then are the rows locked (skipping any a writer holds) and written, if each still
 * has the version whose text was read: a writer waits for a batch's short update, not for its words. Locked while the words
 * were computed, a batch of 500 texts of 4 KiB held its rows ~250 ms, and a directory move that
 * met batch after batch took 4–9x its time alone (test/bench/README.md, stop 47).
 */
/** A deleted store's memories are not indexed: the upkeep's purge steps take them (postgres/schema/v14.ts). */
const LIVE_STORE = 'store_id NOT IN (SELECT id FROM stores WHERE deleted_at IS NOT NULL)';

/**
 * The CTEs `words` (up to `limit` queued rows matching `queued`, with their words, nothing locked),
 * `batch` (those rows still queued, locked, skipping locked ones) and `done` (the rows written, one
 * per row whose version is still the one read).
 */
function wordsOf(queued: string, limit: string): string {
  return `words AS MATERIALIZED (SELECT m.seq, m.version_id, mnemo_search(m.path, c.content) AS search
                                 FROM (SELECT seq, version_id, path, content_sha256 FROM memories WHERE ${queued} LIMIT ${limit}) m
                                 JOIN contents c ON c.sha256 = m.content_sha256),
          batch AS (SELECT m.seq FROM memories m JOIN words w ON m.seq = w.seq
                    WHERE m.search IS NULL AND (SELECT count(*) FROM words) >= 0 FOR UPDATE OF m SKIP LOCKED),
          done AS (UPDATE memories m SET search = w.search FROM batch, words w
                   WHERE m.seq = batch.seq AND w.seq = batch.seq AND m.version_id = w.version_id AND m.search IS NULL
                   RETURNING 1)`;
}

export async function indexBacklog(pool: Q, max: number): Promise<number> {
  // The counts read the statement's snapshot, from before its own updates: what waits is each queue less what it did.
  const r = await first<{ done: number; queued: number; marked: number; texts: number }>(
    pool,
    `WITH ${wordsOf(`search IS NULL AND ${LIVE_STORE}`, '$1')},
          texts AS (SELECT sha256 FROM contents WHERE NOT trigrams_ready LIMIT $1 FOR UPDATE SKIP LOCKED),
          marked AS (UPDATE contents c SET trigrams_ready = true FROM texts WHERE c.sha256 = texts.sha256 RETURNING 1)
     SELECT (SELECT count(*) FROM done)::int AS done, (SELECT count(*) FROM memories WHERE search IS NULL AND ${LIVE_STORE})::int AS queued,
            (SELECT count(*) FROM marked)::int AS marked, (SELECT count(*) FROM contents WHERE NOT trigrams_ready)::int AS texts`,
    [max],
  );
  if (!r) return 0;
  return Math.max(0, r.queued - r.done) + Math.max(0, r.texts - r.marked);
}

/** What indexBacklog would still find: queued rows and texts not yet marked for the trigram index (both partial indexes). */
export async function backlogSize(pool: Q): Promise<number> {
  const r = await first<{ n: number }>(
    pool,
    `SELECT ((SELECT count(*) FROM memories WHERE search IS NULL AND ${LIVE_STORE}) + (SELECT count(*) FROM contents WHERE NOT trigrams_ready))::int AS n`,
    [],
  );
  return r?.n ?? 0;
}

/**
 * Indexes up to `max` of one store's queued rows (a full-text search's first step, as SQLite's
 * search indexes its queue first): the pages of a search right after a burst then read the GIN
 * index instead of each computing the words of the whole burst. Rows another server or a writer
 * holds are skipped; the search computes their words itself.
 */
export async function indexStoreBacklog(q: Q, storeId: string, max: number): Promise<void> {
  await run(
    q,
    `WITH ${wordsOf('store_id = $1 AND search IS NULL', '$2')}
     SELECT count(*) FROM done`,
    [storeId, max],
  );
}
