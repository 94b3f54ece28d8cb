/**
 * @module PostgreSQL migration 14, SQLite's 18: a store is deleted in two parts. The request hides
 * it at once (`deleted_at` set: no read of stores finds it, no write lands in it) and the servers'
 * upkeep removes its rows afterwards in short steps (`mnemo_purge_deleted_store`, one transaction
 * each, called by postgres/store-purge.ts).
 *
 * Why: the request's one cascading DELETE took 5.0 s for a store of 10,000 memories and 100,000
 * versions and 58.5 s for 100,000 and 1,000,000 (the 2-core host), against a 60 s statement limit
 * (postgres/db.ts): past it the request failed as `unavailable` and rolled back, so such a store
 * could never be deleted; until then it held the store's row, and every other server's write to the
 * store (a mount's close() among them) waited for it.
 *
 * - Versions stay append-only: the delete trigger lets only a hidden-for-deletion store's versions
 *   go (and recorded prunes), as it let the cascade of a store's row.
 * - `mnemo_write_probe` (migration 11) finds no deleted store, so no write lands in one: a writer
 *   that waited for the delete's row lock re-reads the row and finds it gone.
 * - A step takes the oldest deleted store no other server is purging (`SKIP LOCKED`): memories
 *   first (their usage rows follow), then checkpoint heads and checkpoints (their version
 *   references follow), then versions (their texts are released), in slices; the store's row goes
 *   last, with what little is left (usage, expirations, prunes, path floors) by cascade.
 */
import { PG_MIGRATION_11 } from './v11.js';

/** Rows a step deletes from one table at most: about 50–150 ms of PostgreSQL's time each on the 2-core host. */
export const PURGE_SLICE = { memories: 500, checkpoints: 200, versions: 2000 } as const;

/** Migration 11's probe, unchanged but for the store it locks: never a deleted one. */
export function probeFindingNoDeletedStore(): string {
  const start = PG_MIGRATION_11.indexOf('CREATE FUNCTION mnemo_write_probe(');
  const probe = PG_MIGRATION_11.slice(start).replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION');
  const lock = 'SELECT st.* INTO s FROM stores st WHERE st.id = p_store FOR NO KEY UPDATE;';
  if (start < 0 || !probe.includes(lock)) throw new Error('PostgreSQL migration 14: migration 11\'s probe is not as expected');
  return probe.replace(lock, 'SELECT st.* INTO s FROM stores st WHERE st.id = p_store AND st.deleted_at IS NULL FOR NO KEY UPDATE;');
}

export const PG_MIGRATION_14 = String.raw`
ALTER TABLE stores ADD COLUMN deleted_at text;
CREATE INDEX stores_deleted ON stores (seq) WHERE deleted_at IS NOT NULL;

CREATE OR REPLACE FUNCTION versions_append_only_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM stores WHERE id = OLD.store_id AND deleted_at IS NULL)
     AND NOT EXISTS (SELECT 1 FROM version_prunes WHERE version_id = OLD.id) THEN
    RAISE EXCEPTION 'memory versions are append-only: only deleting the store, or a recorded prune, removes them' USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN OLD;
END $$;

${probeFindingNoDeletedStore()}

CREATE FUNCTION mnemo_purge_deleted_store() RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  sid text;
  n bigint;
BEGIN
  SELECT id INTO sid FROM stores WHERE deleted_at IS NOT NULL ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  DELETE FROM memories WHERE seq IN (SELECT seq FROM memories WHERE store_id = sid LIMIT ${PURGE_SLICE.memories});
  GET DIAGNOSTICS n = ROW_COUNT;
  IF n > 0 THEN RETURN true; END IF;
  DELETE FROM checkpoint_heads WHERE store_id = sid;
  DELETE FROM checkpoints WHERE seq IN (SELECT seq FROM checkpoints WHERE store_id = sid LIMIT ${PURGE_SLICE.checkpoints});
  GET DIAGNOSTICS n = ROW_COUNT;
  IF n > 0 THEN RETURN true; END IF;
  DELETE FROM versions WHERE seq IN (SELECT seq FROM versions WHERE store_id = sid ORDER BY seq LIMIT ${PURGE_SLICE.versions});
  GET DIAGNOSTICS n = ROW_COUNT;
  IF n > 0 THEN RETURN true; END IF;
  DELETE FROM stores WHERE id = sid;
  RETURN true;
END $$;
`;
