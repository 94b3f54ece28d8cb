/**
 * @module PostgreSQL migration 27, SQLite's 27 (sqlite/schema/fork-abandonments.ts): why a fork's
 * build was deleted while it ran, a redaction or the sweep of forks a crash cut short, one row per
 * deleted build, written in the deletion's transaction. No foreign key: the row outlives the
 * store's, which the purge of deleted stores may remove before the build's next batch looks.
 */
export const PG_MIGRATION_27 = String.raw`
CREATE TABLE fork_abandonments (
  store_id      text PRIMARY KEY,
  cause         text NOT NULL CHECK (cause IN ('redaction', 'sweep')),
  abandoned_at  text NOT NULL
);
`;
