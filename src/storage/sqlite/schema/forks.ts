/**
 * @module Migration 14 (issue 15): forks. `forked_from` (JSON {storeId, asOf}) records where a
 * fork came from. `forking_since` is set while a fork is being built: the store's rows are written
 * in bounded batches, each its own transaction, so that a fork of 10,000 memories never holds the
 * writer long enough to stall a mount; no read of stores finds such a store (sqlite/stores.ts), and
 * publishing it is one UPDATE, so a fork is seen whole or not at all.
 */
export const MIGRATION_14 = `
ALTER TABLE stores ADD COLUMN forked_from TEXT;
ALTER TABLE stores ADD COLUMN forking_since TEXT;
`;
