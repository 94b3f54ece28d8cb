/**
 * @module PostgreSQL migration 15: a deleted store's purge (migration 14) in steps to its end, and
 * in an order two purges cannot deadlock on.
 *
 * - Every table with a store's rows goes in slices: migration 14 left the expirations, the recorded
 *   prunes and the path-number floors to the cascade of the store's row, and a store that retention
 *   has pruned for a year holds a prune row per version it ever pruned: the last step could then run
 *   past the adapter's 60 s statement limit (postgres/db.ts) and fail on every retry.
 * - A slice of versions locks the texts it may release in the order of their SHA-256 before it
 *   deletes (the release trigger, postgres/schema/v5.ts, locks each text as its version goes, in the
 *   slice's order). Two servers purging two stores that share texts took them in different orders,
 *   and PostgreSQL aborted one step as a deadlock; now the second waits for the first. The retention
 *   prune (postgres/retention.ts) locks its texts the same way.
 */
import { PURGE_SLICE } from './v14.js';

/** Rows of the small tables (expirations, heads, prunes, floors, references) a step deletes at most. */
export const PURGE_SMALL_SLICE = 5000;

/** Deletes one slice of `table`'s rows of store `sid` by its key, and ends the step if there were any. */
const slice = (table: string, key: string) => `
  DELETE FROM ${table} WHERE (${key}) IN (SELECT ${key} FROM ${table} WHERE store_id = sid LIMIT ${PURGE_SMALL_SLICE});
  GET DIAGNOSTICS n = ROW_COUNT;
  IF n > 0 THEN RETURN true; END IF;`;

export const PG_MIGRATION_15 = String.raw`
CREATE OR REPLACE FUNCTION mnemo_purge_deleted_store() RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  sid text;
  n bigint;
  seqs bigint[];
BEGIN
  SELECT id INTO sid FROM stores WHERE deleted_at IS NOT NULL ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  DELETE FROM memories WHERE seq IN (SELECT seq FROM memories WHERE store_id = sid LIMIT ${PURGE_SLICE.memories});
  GET DIAGNOSTICS n = ROW_COUNT;
  IF n > 0 THEN RETURN true; END IF;
  ${slice('checkpoint_heads', 'store_id, agent_id, session_id')}
  DELETE FROM checkpoints WHERE seq IN (SELECT seq FROM checkpoints WHERE store_id = sid LIMIT ${PURGE_SLICE.checkpoints});
  GET DIAGNOSTICS n = ROW_COUNT;
  IF n > 0 THEN RETURN true; END IF;
  seqs := ARRAY(SELECT seq FROM versions WHERE store_id = sid ORDER BY seq LIMIT ${PURGE_SLICE.versions});
  IF cardinality(seqs) > 0 THEN
    PERFORM 1 FROM contents WHERE sha256 IN (SELECT content_sha256 FROM versions WHERE seq = ANY(seqs)) ORDER BY sha256 FOR UPDATE;
    DELETE FROM versions WHERE seq = ANY(seqs);
    RETURN true;
  END IF;
  ${slice('checkpoint_version_refs', 'version_id, checkpoint_id')}
  ${slice('memory_expirations', 'store_id, memory_id')}
  ${slice('version_prunes', 'store_id, commit_seq')}
  ${slice('path_number_floors', 'store_id, path_hash')}
  DELETE FROM stores WHERE id = sid;
  RETURN true;
END $$;
`;
