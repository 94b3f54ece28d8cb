/**
 * @module Migration 20: a deleted store's idempotency receipts go with it.
 *
 * A receipt keeps the answer it replays, and an answer about a store's memories holds their text
 * (`?view=full`), so a store's deletion left that text served to a retry, and in the file, for the
 * receipt's 24 hours. Now a receipt naming a store is found only while the store is not deleted
 * (sqlite/receipts.ts: hidden in the delete's own commit, as the store is), and the purge of the
 * store's rows takes its receipts first, in slices found through this index (sqlite/store-purge.ts).
 * Receipts of stores deleted before this migration go here.
 */
export const MIGRATION_20 = `
CREATE INDEX idempotency_receipts_by_store ON idempotency_receipts (store_id) WHERE store_id IS NOT NULL;
DELETE FROM idempotency_receipts
WHERE store_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM stores s WHERE s.id = idempotency_receipts.store_id AND s.deleted_at IS NULL);
`;
