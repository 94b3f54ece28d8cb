/**
 * @module Migration 18: a store is deleted in two parts. The request hides it at once (`deleted_at`
 * set: no read of stores finds it, no write lands in it, its name is free) and the server's upkeep
 * removes its rows afterwards in short steps (sqlite/store-purge.ts), each its own transaction.
 *
 * Why: deleting a store of 20,000 memories of 4 KiB in one transaction held the serving thread for
 * 12 s, 11.3 s of it taking the texts out of the full-text index (secure-delete rewrites the index
 * pages, ~15x the cost of indexing), and every mount and request waited. In steps, a memory's row
 * goes first and its delete queues it in `search_backlog` (invariant 11), which the indexer takes
 * out in its own short turns; versions go only after, since the queue reads their text.
 *
 * Versions stay append-only: the delete trigger lets only a hidden-for-deletion store's versions
 * go, as it let the cascade of a store's row.
 */
export const MIGRATION_18 = `
ALTER TABLE stores ADD COLUMN deleted_at TEXT;
CREATE INDEX stores_deleted ON stores (seq) WHERE deleted_at IS NOT NULL;

DROP TRIGGER versions_append_only_delete;
CREATE TRIGGER versions_append_only_delete BEFORE DELETE ON versions
WHEN EXISTS (SELECT 1 FROM stores WHERE id = OLD.store_id AND deleted_at IS NULL)
  AND NOT EXISTS (SELECT 1 FROM version_prunes WHERE version_id = OLD.id)
BEGIN
  SELECT RAISE(ABORT, 'memory versions are append-only: only deleting the store, or a recorded prune, removes them');
END;
`;
