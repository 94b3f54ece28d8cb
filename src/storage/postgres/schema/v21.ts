/**
 * @module PostgreSQL migration 21, SQLite's 20: a deleted store's idempotency receipts go with it.
 *
 * A receipt keeps the answer it replays, and an answer about a store's memories holds their text
 * (`?view=full`), so a store's deletion left that text served to a retry, and in the database, for
 * the receipt's 24 hours. Now a receipt naming a store is found only while the store is not deleted
 * (postgres/receipts.ts: hidden in the delete's own commit, as the store is), and the purge's steps
 * (migration 15's function, otherwise unchanged) take the store's receipts first, in slices found
 * through this index. Receipts of stores deleted before this migration go here.
 */
import { PG_MIGRATION_15 } from './v15.js';

/** Receipts a purge step deletes at most: a receipt may hold a memory's text, as many as the memories a step takes. */
export const PURGE_RECEIPTS = 500;

/** Migration 15's purge, its first slice the deleted store's receipts. */
export function purgeTakingReceiptsFirst(): string {
  const found = `IF NOT FOUND THEN
    RETURN false;
  END IF;
`;
  if (PG_MIGRATION_15.split(found).length !== 2) throw new Error("PostgreSQL migration 21: migration 15's purge is not as expected");
  return PG_MIGRATION_15.replace(found, `${found}  DELETE FROM idempotency_receipts WHERE (workspace_id, api_key_id, route, idem_key) IN
    (SELECT workspace_id, api_key_id, route, idem_key FROM idempotency_receipts WHERE store_id = sid LIMIT ${PURGE_RECEIPTS});
  GET DIAGNOSTICS n = ROW_COUNT;
  IF n > 0 THEN RETURN true; END IF;
`);
}

export const PG_MIGRATION_21 = String.raw`
CREATE INDEX idempotency_receipts_by_store ON idempotency_receipts (store_id) WHERE store_id IS NOT NULL;
DELETE FROM idempotency_receipts r
WHERE r.store_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM stores s WHERE s.id = r.store_id AND s.deleted_at IS NULL);
${purgeTakingReceiptsFirst()}
`;
