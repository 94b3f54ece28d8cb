/**
 * @module PostgreSQL migration 19: a directory move appends each page of versions and moves each
 * page of rows with one statement apiece, instead of a loop of statements per memory.
 *
 * Why: `mnemo_append_moves` (migration 16) ran three statements per moved memory (naming its commit
 * number in `mnemo.commit_block`, inserting its version, updating its row), each with its own
 * executor start and end; a move cost ~95 µs a memory in the adapter alone, and a served `mv` of
 * 20,000 memories took 3.4x SQLite's (test/bench/README.md, stop 40). Set-based, the same move
 * costs ~64 µs a memory; what is left is the rows themselves (each version's eight index entries, each
 * moved row's new tuple and its index entries: its path changed, so no update is HOT).
 *
 * - The commit-order trigger still refuses any number but the store's current one, except numbers
 *   of the block the move is inserting just then, named in the transaction-local setting
 *   `mnemo.commit_block` as "<store id>:<first>:<last>". The move takes the whole block with one
 *   update of the store's row (under its lock), and inserts exactly one version per number of it
 *   (the numbers are unique per store: versions_by_commit), so a block still has no gaps.
 * - Versions go in in the page's order (ORDER BY the ordinality), so `seq` follows `commit_seq` in the
 *   store as it does for every other write. A page's paths are distinct, so each version's
 *   `path_seq`, read from the rows before the statement, is what the loop computed.
 */
import { PG_MIGRATION_16 } from './v16.js';

const COMMIT_ORDER = String.raw`
CREATE OR REPLACE FUNCTION versions_commit_order() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  block text[];
BEGIN
  IF NEW.commit_seq IS DISTINCT FROM (SELECT commit_seq FROM stores WHERE id = NEW.store_id) THEN
    block := string_to_array(current_setting('mnemo.commit_block', true), ':');
    -- Two steps: SQL does not promise to evaluate an OR from the left, and a cast of junk would fail otherwise.
    IF block IS NULL OR cardinality(block) <> 3 OR block[1] IS DISTINCT FROM NEW.store_id
       OR block[2] !~ '^[0-9]{1,18}$' OR block[3] !~ '^[0-9]{1,18}$' THEN
      block := NULL;
    ELSIF NEW.commit_seq < block[2]::bigint OR NEW.commit_seq > block[3]::bigint THEN
      block := NULL;
    END IF;
    IF block IS NULL THEN
      RAISE EXCEPTION 'a version takes its store''s next commit_seq (postgres/commit-order.ts)' USING ERRCODE = 'restrict_violation';
    END IF;
  END IF;
  RETURN NEW;
END $$;
`;

/** Migration 16's loop, one memory's number, version and row a turn. */
const LOOP = String.raw`  FOR i IN 1 .. k LOOP
    PERFORM set_config('mnemo.commit_block', p_store || ':' || (base + i)::text, true);`;
const LOOP_END = String.raw`  END LOOP;
`;

/** The page at once: the block's numbers named, its versions in the page's order, then its rows. */
const PAGE = String.raw`  PERFORM set_config('mnemo.commit_block', p_store || ':' || (base + 1)::text || ':' || (base + k)::text, true);
  INSERT INTO versions (id, store_id, memory_id, operation, path, content_sha256, content_size_bytes, created_at, actor_type, actor_id, commit_seq, path_seq)
  SELECT u.version_id, p_store, u.memory_id, 'modified', u.path, u.sha, u.size, p_created_at, p_actor_type, p_actor_id, base + u.i,
         greatest((SELECT coalesce(max(v.path_seq), 0) FROM versions v WHERE v.store_id = p_store AND v.path = u.path),
                  coalesce((SELECT f.last FROM path_number_floors f WHERE f.store_id = p_store AND f.path_hash = u.path_hash), 0)) + 1
  FROM unnest(p_versions, p_memories, p_paths, p_path_hashes, p_shas, p_sizes) WITH ORDINALITY AS u(version_id, memory_id, path, path_hash, sha, size, i)
  ORDER BY u.i;
  UPDATE memories SET path = u.path, search = NULL, version_id = u.version_id, updated_at = p_created_at, mode = u.mode,
                      atime_us = u.atime_us, mtime_us = u.mtime_us, ctime_us = NULL, uid = u.uid, gid = u.gid, expires_at = u.expires_at
  FROM unnest(p_versions, p_memories, p_paths, p_modes, p_atimes, p_mtimes, p_uids, p_gids, p_expires)
       AS u(version_id, memory_id, path, mode, atime_us, mtime_us, uid, gid, expires_at)
  WHERE memories.id = u.memory_id AND memories.store_id = p_store;
`;

/** Migration 16's `mnemo_append_moves` with its loop replaced by PAGE: the signature, the counter's update and the notice stay. */
function setBasedMoves(): string {
  const at = PG_MIGRATION_16.indexOf('CREATE OR REPLACE FUNCTION mnemo_append_moves(');
  const from = PG_MIGRATION_16.indexOf(LOOP);
  const to = PG_MIGRATION_16.indexOf(LOOP_END, from);
  if (at < 0 || from < at || to < 0) throw new Error("PostgreSQL migration 19: migration 16's mnemo_append_moves is not as expected");
  return PG_MIGRATION_16.slice(at, from) + PAGE + PG_MIGRATION_16.slice(to + LOOP_END.length);
}

export const PG_MIGRATION_19 = COMMIT_ORDER + '\n' + setBasedMoves();
