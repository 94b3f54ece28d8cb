/**
 * @module PostgreSQL migration 10: a memory write in two round trips, and search indexing off the
 * write path (issue 14, "Targets"). A save used to send about eight statements, each a round trip
 * (the store lock, the expiry probe, the row, the overlap probe, the text, the version, the row
 * again), and the memory row's tsvector and GIN entry took half its time.
 *
 * - `mnemo_probe` reads what a write decides on, after taking the store's row lock: each statement
 *   of a volatile plpgsql function takes a new snapshot (READ COMMITTED), so the rows it reads are
 *   the newest committed ones once the lock is held, as separate statements were. The rules stay
 *   in TypeScript (src/domain/): the adapter decides from the probe's row, then writes.
 * - `mnemo_append` is every row a versioned write changes: the text once (postgres/contents.ts's
 *   lock-without-write on a conflict), the store's next commit number with the cross-host notice
 *   (notify.ts), the version row (its path number above any floor), and the memory row inserted,
 *   updated or deleted.
 * - Search backlog: a memory row written by a write has `search` NULL, and the partial index
 *   `memories_unindexed` is the queue. The indexer (postgres/search-index.ts) fills the tsvector of
 *   a batch taken `FOR UPDATE SKIP LOCKED`, so any number of servers index at once; a search reads
 *   the indexed rows through the GIN index and computes the words of a still-queued row itself.
 */
export const PG_MIGRATION_10 = String.raw`
CREATE INDEX memories_unindexed ON memories (store_id) WHERE search IS NULL;

CREATE FUNCTION mnemo_probe(
  p_store text, p_now text, p_clock text, p_id text, p_path text,
  p_above text[], p_below text, p_below_end text
) RETURNS TABLE (
  store_found boolean, archived_at text, expired boolean,
  seq bigint, id text, store_id text, path text, content_sha256 text, content_size_bytes integer, version_id text, mode integer,
  created_at text, updated_at text, expires_at text, atime_us bigint, mtime_us bigint, ctime_us bigint, uid bigint, gid bigint,
  content text, hit_id text, hit_path text
) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  s record;
  m record;
  h record;
  self text := '';
BEGIN
  SELECT st.archived_at INTO s FROM stores st WHERE st.id = p_store FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    store_found := false;
    RETURN NEXT;
    RETURN;
  END IF;
  store_found := true;
  archived_at := s.archived_at;
  expired := EXISTS (SELECT 1 FROM memories e WHERE e.store_id = p_store AND e.expires_at IS NOT NULL AND e.expires_at <= p_now);
  IF p_id IS NOT NULL OR p_path IS NOT NULL THEN
    SELECT mm.seq, mm.id, mm.store_id, mm.path, mm.content_sha256, mm.content_size_bytes, mm.version_id, mm.mode, mm.created_at,
           mm.updated_at, mm.expires_at, mm.atime_us, mm.mtime_us, mm.ctime_us, mm.uid, mm.gid,
           (SELECT c.content FROM contents c WHERE c.sha256 = mm.content_sha256) AS content
      INTO m FROM memories mm
      WHERE mm.store_id = p_store AND (CASE WHEN p_id IS NOT NULL THEN mm.id = p_id ELSE mm.path = p_path END)
        AND (mm.expires_at IS NULL OR mm.expires_at > p_clock);
    IF FOUND THEN
      seq := m.seq; id := m.id; store_id := m.store_id; path := m.path; content_sha256 := m.content_sha256;
      content_size_bytes := m.content_size_bytes; version_id := m.version_id; mode := m.mode; created_at := m.created_at;
      updated_at := m.updated_at; expires_at := m.expires_at; atime_us := m.atime_us; mtime_us := m.mtime_us;
      ctime_us := m.ctime_us; uid := m.uid; gid := m.gid; content := m.content;
      self := m.id;
    END IF;
  END IF;
  -- The overlap probe (invariant 2) for the path a write would take: not for a save that found its memory there.
  IF p_above IS NOT NULL AND NOT (p_id IS NULL AND p_path IS NOT NULL AND self <> '') THEN
    SELECT x.id, x.path INTO h FROM (
      (SELECT o.id, o.path FROM memories o WHERE o.store_id = p_store AND o.path = ANY(p_above) AND o.id <> self LIMIT 1)
      UNION ALL
      (SELECT o.id, o.path FROM memories o WHERE o.store_id = p_store AND o.path > p_below AND o.path < p_below_end AND o.id <> self LIMIT 1)
    ) x LIMIT 1;
    IF FOUND THEN
      hit_id := h.id;
      hit_path := h.path;
    END IF;
  END IF;
  RETURN NEXT;
END $$;

CREATE FUNCTION mnemo_append(
  -- the version
  p_version text, p_store text, p_memory text, p_operation text, p_path text, p_content text, p_sha text, p_size integer,
  p_created_at text, p_actor_type text, p_actor_id text, p_path_hash text, p_channel text, p_notice text,
  -- the memory row: 'insert', 'update', 'delete' or 'none'
  p_row text, p_mode integer, p_updated_at text, p_expires_at text,
  p_atime bigint, p_mtime bigint, p_uid bigint, p_gid bigint
) RETURNS void LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  n bigint;
BEGIN
  IF p_content IS NOT NULL AND p_sha IS NOT NULL THEN
    INSERT INTO contents (sha256, content) VALUES (p_sha, p_content)
      ON CONFLICT (sha256) DO UPDATE SET sha256 = excluded.sha256 WHERE false;
  END IF;
  UPDATE stores SET commit_seq = commit_seq + 1 WHERE id = p_store RETURNING commit_seq INTO n;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'appendVersionRow: store % does not exist', p_store;
  END IF;
  IF p_notice IS NOT NULL THEN
    PERFORM pg_notify(p_channel, p_notice || n::text);
  END IF;
  INSERT INTO versions (id, store_id, memory_id, operation, path, content_sha256, content_size_bytes, created_at, actor_type, actor_id, commit_seq, path_seq)
  VALUES (p_version, p_store, p_memory, p_operation, p_path, p_sha, p_size, p_created_at, p_actor_type, p_actor_id, n,
          greatest((SELECT coalesce(max(v.path_seq), 0) FROM versions v WHERE v.store_id = p_store AND v.path = p_path),
                   coalesce((SELECT f.last FROM path_number_floors f WHERE f.store_id = p_store AND f.path_hash = p_path_hash), 0)) + 1);
  IF p_row = 'insert' THEN
    INSERT INTO memories (id, store_id, path, search, content_sha256, content_size_bytes, version_id, mode, created_at, updated_at, expires_at,
                          atime_us, mtime_us, uid, gid)
    VALUES (p_memory, p_store, p_path, NULL, p_sha, p_size, p_version, p_mode, p_created_at, p_created_at, p_expires_at,
            p_atime, p_mtime, p_uid, p_gid);
  ELSIF p_row = 'update' THEN
    UPDATE memories SET path = p_path, search = NULL, content_sha256 = p_sha, content_size_bytes = p_size, version_id = p_version,
                        updated_at = p_updated_at, mode = p_mode, atime_us = p_atime, mtime_us = p_mtime, ctime_us = NULL,
                        uid = p_uid, gid = p_gid, expires_at = p_expires_at
      WHERE id = p_memory;
  ELSIF p_row = 'delete' THEN
    DELETE FROM memories WHERE id = p_memory;
  END IF;
END $$;
`;
