/**
 * @module PostgreSQL migration 11: a memory write's admission in its probe (issue 14, "Targets"). The
 * service's rules for an API write (the store is the caller's, the key may write, the store has
 * room: src/service/operations.ts) used to read the store row and its usage on two round trips of
 * their own before the write began. `mnemo_write_probe` is migration 10's `mnemo_probe` plus those
 * two reads, made after the store's row lock like the rest, so they cost no round trip and are
 * exact (no other write of the store can commit between them and the write).
 *
 * - `p_workspace` NULL: no admission (a mount's save, a move): `visible` is then whether the store
 *   exists, as before, and the store's columns and usage are not read.
 * - `visible`: the store exists, belongs to `p_workspace` and is no fork being built, as getStore
 *   finds it; `st_*` are then its columns. `u_*` is its usage (0 without a usage row yet). The
 *   adapter decides nothing from either: it shows them to the service's admission.
 *
 * `mnemo_probe` stays for servers still on migration 10's code during an upgrade.
 */
export const PG_MIGRATION_11 = String.raw`
CREATE FUNCTION mnemo_write_probe(
  p_workspace text, p_store text, p_now text, p_clock text, p_id text, p_path text,
  p_above text[], p_below text, p_below_end text
) RETURNS TABLE (
  store_found boolean, archived_at text, expired boolean, visible boolean,
  st_seq bigint, st_name text, st_description text, st_metadata text, st_created_at text, st_updated_at text,
  st_retention text, st_forked_from text, u_memories bigint, u_bytes bigint,
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
  SELECT st.* INTO s FROM stores st WHERE st.id = p_store FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    store_found := false;
    visible := false;
    RETURN NEXT;
    RETURN;
  END IF;
  store_found := true;
  archived_at := s.archived_at;
  IF p_workspace IS NULL THEN
    visible := true;
  ELSE
    visible := s.workspace_id = p_workspace AND s.forking_since IS NULL;
    IF visible THEN
      st_seq := s.seq; st_name := s.name; st_description := s.description; st_metadata := s.metadata;
      st_created_at := s.created_at; st_updated_at := s.updated_at; st_retention := s.retention; st_forked_from := s.forked_from;
    END IF;
    SELECT u.memories, u.bytes INTO u_memories, u_bytes FROM store_usage u WHERE u.store_id = p_store;
    u_memories := coalesce(u_memories, 0);
    u_bytes := coalesce(u_bytes, 0);
  END IF;
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
`;
