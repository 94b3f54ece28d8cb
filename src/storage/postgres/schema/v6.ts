/**
 * @module PostgreSQL migration 6: forks, as SQLite's migration 14 (sqlite/schema/forks.ts):
 * `forked_from` records where a fork came from, `forking_since` hides a fork while its batches are
 * written; publishing it is one UPDATE.
 */
export const PG_MIGRATION_6 = String.raw`
ALTER TABLE stores ADD COLUMN forked_from text;
ALTER TABLE stores ADD COLUMN forking_since text;
`;
