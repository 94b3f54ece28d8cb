/**
 * @module PostgreSQL migration 16: a directory move takes its commit numbers a page at a time.
 *
 * Why: every version takes its store's next number by updating the store's row (invariant 14,
 * postgres/commit-order.ts), and a row updated again and again in one transaction keeps every
 * version of itself until the commit: each update, the commit-order trigger's read and the
 * foreign-key checks of the next version walk past all of them (the counter's update alone took
 * 0.11 ms for the first memories of a 4,000-memory move and 0.40 ms for the last). A move of 5,000
 * memories took 9.2–9.4 s and one of 20,000 50 s, during which a write to the store waited past the
 * 60 s statement limit; 100,000 would have held the store for many minutes.
 *
 * - `mnemo_append_moves` appends a page of moved memories' versions (their text stays where it is:
 *   each names it by sha) and their rows' new paths, after taking all the page's numbers with one
 *   update of the store's row, and sends one notice for the page's last number.
 * - The commit-order trigger still refuses any number but the store's current one, except the
 *   number `mnemo_append_moves` is inserting just then: it names it in a transaction-local
 *   setting (`mnemo.commit_block`, "<store id>:<number>"), numbers above the previous counter
 *   taken in order, so a block has no gaps and commits whole under the store's row lock.
 */
export const PG_MIGRATION_16 = String.raw`
CREATE OR REPLACE FUNCTION versions_commit_order() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.commit_seq IS DISTINCT FROM (SELECT commit_seq FROM stores WHERE id = NEW.store_id)
     AND current_setting('mnemo.commit_block', true) IS DISTINCT FROM NEW.store_id || ':' || NEW.commit_seq::text THEN
    RAISE EXCEPTION 'a version takes its store''s next commit_seq (postgres/commit-order.ts)' USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION mnemo_append_moves(
  p_store text, p_created_at text, p_actor_type text, p_actor_id text, p_channel text, p_notice text,
  p_versions text[], p_memories text[], p_paths text[], p_path_hashes text[], p_shas text[], p_sizes integer[],
  p_modes integer[], p_expires text[], p_atimes bigint[], p_mtimes bigint[], p_uids bigint[], p_gids bigint[]
) RETURNS void LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  k integer := cardinality(p_versions);
  base bigint;
BEGIN
  IF k = 0 THEN
    RETURN;
  END IF;
  UPDATE stores SET commit_seq = commit_seq + k WHERE id = p_store RETURNING commit_seq - k INTO base;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'mnemo_append_moves: store % does not exist', p_store;
  END IF;
  IF p_notice IS NOT NULL THEN
    PERFORM pg_notify(p_channel, p_notice || (base + k)::text);
  END IF;
  FOR i IN 1 .. k LOOP
    PERFORM set_config('mnemo.commit_block', p_store || ':' || (base + i)::text, true);
    INSERT INTO versions (id, store_id, memory_id, operation, path, content_sha256, content_size_bytes, created_at, actor_type, actor_id, commit_seq, path_seq)
    VALUES (p_versions[i], p_store, p_memories[i], 'modified', p_paths[i], p_shas[i], p_sizes[i], p_created_at, p_actor_type, p_actor_id, base + i,
            greatest((SELECT coalesce(max(v.path_seq), 0) FROM versions v WHERE v.store_id = p_store AND v.path = p_paths[i]),
                     coalesce((SELECT f.last FROM path_number_floors f WHERE f.store_id = p_store AND f.path_hash = p_path_hashes[i]), 0)) + 1);
    UPDATE memories SET path = p_paths[i], search = NULL, version_id = p_versions[i], updated_at = p_created_at, mode = p_modes[i],
                        atime_us = p_atimes[i], mtime_us = p_mtimes[i], ctime_us = NULL, uid = p_uids[i], gid = p_gids[i], expires_at = p_expires[i]
      WHERE id = p_memories[i] AND store_id = p_store;
  END LOOP;
  PERFORM set_config('mnemo.commit_block', '', true);
END $$;
`;
