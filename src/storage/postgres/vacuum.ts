/**
 * @module Vacuuming what a burst of writes leaves behind, once it ends, instead of waiting for
 * autovacuum. Every write updates its store's row and its usage row (the commit number, the
 * counts), and the search upkeep rewrites each memory row and each text row it indexes; until
 * autovacuum's next pass (its launcher visits a database once a minute) those dead row versions sit
 * in the tables and their indexes, and what reads them pays: a directory move of 20,000 memories
 * right after they were imported and indexed took 3.2–4.1 s, and 1.26 s after a `VACUUM (ANALYZE)`
 * of the database (test/bench/README.md, stop 48; 1.82 s after one of `stores` alone, a 3 ms
 * vacuum of its 1,119 dead versions of two rows).
 *
 * The upkeep calls it between its turns (service/search-upkeep.ts via main.ts, after the search
 * backlog and the deleted stores' purge are done): at most every TIDY_EVERY_MS it reads the
 * tables' dead-row counts (pg_stat_user_tables) and vacuums, with ANALYZE, those holding at least
 * MIN_DEAD dead rows and at least a tenth as many as live ones. `SKIP_LOCKED`: a table another
 * server (or autovacuum) is vacuuming is skipped. It runs in PostgreSQL, on a pooled connection,
 * beside writers (a plain VACUUM blocks no reads or writes).
 */
import type pg from 'pg';

/** The tables every write or every indexing rewrites rows of. */
const TABLES = ['stores', 'store_usage', 'memories', 'contents', 'versions'];
const MIN_DEAD = 1000;
export const TIDY_EVERY_MS = 10_000;

/** The tidy step: returns the tables it vacuumed (none: nothing was due, or it is too soon). */
export function createTidy(pool: pg.Pool, now: () => number = Date.now): () => Promise<string[]> {
  let last = -Infinity;
  return async () => {
    if (now() - last < TIDY_EVERY_MS) return [];
    last = now();
    const due = await pool.query<{ relname: string }>(
      `SELECT relname FROM pg_stat_user_tables
       WHERE schemaname = current_schema() AND relname = ANY($1)
         AND ((n_dead_tup >= $2 AND n_dead_tup * 10 >= n_live_tup) OR (n_ins_since_vacuum >= $2 AND n_ins_since_vacuum * 10 >= n_live_tup))
       ORDER BY relname`,
      [TABLES, MIN_DEAD],
    );
    const tables = due.rows.map((r) => r.relname);
    // The simple protocol: VACUUM runs outside any transaction block, and never as a prepared statement.
    if (tables.length > 0) await pool.query(`VACUUM (ANALYZE, SKIP_LOCKED) ${tables.join(', ')}`);
    return tables;
  };
}
