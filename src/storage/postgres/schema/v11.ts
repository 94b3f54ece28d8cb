/**
 * @module PostgreSQL migration 11: a memory write's admission in its probe (issue 14, "Targets"). The
 * service's rules for an API write (the store is the caller's, the key may write, the store has
 * room: src/service/operations.ts) used to read the store row and its usage on two round trips of
 * their own before the write began. `mnemo_write_probe` is migration 10's `mnemo_probe` plus those
 * two reads, made after the store's row lock like the rest, so they cost no round trip and are
 * exact (no other write of the store can commit between them and the write).
 *
 * - `p_workspace` NULL: no admission (a write the service checks before it: a directory move,
 *   attributes): `visible` is then whether the store exists, as before, and the store's columns and
 *   usage are not read. A mount's save and move pass one as API writes do (no change here: a save's
 *   target is the memory the probe finds at its path).
 * - `visible`: the store exists, belongs to `p_workspace` and is no fork being built, as getStore
 *   finds it; `st_*` are then its columns. `u_*` is its usage (0 without a usage row yet). The
 *   adapter decides nothing from either: it shows them to the service's admission.
 *
 * Its reads are also written so that every plan the function caches uses the (store_id, path) btree,
 * whatever the table's statistics: `mnemo_probe`'s `path = ANY(ancestors)` and its CASE between id
 * and path got generic plans, made before the table's first ANALYZE (a new database, the bench's),
 * that read the trigram index and the store's whole (store_id) range: 2 ms a create at 3,000
 * memories and growing with the store, where these take 0.3 ms (test/bench/README.md).
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
  a text;
  got boolean := false;
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
  -- By id or by path, each its own statement: one statement with a CASE between them could not use
  -- an index once the function's plan is generic, and would read every memory of the store. The
  -- path as a range of one, as the overlap probe below says why.
  IF p_id IS NOT NULL THEN
    SELECT mm.seq, mm.id, mm.store_id, mm.path, mm.content_sha256, mm.content_size_bytes, mm.version_id, mm.mode, mm.created_at,
           mm.updated_at, mm.expires_at, mm.atime_us, mm.mtime_us, mm.ctime_us, mm.uid, mm.gid,
           (SELECT c.content FROM contents c WHERE c.sha256 = mm.content_sha256) AS content
      INTO m FROM memories mm
      WHERE mm.store_id = p_store AND mm.id = p_id AND (mm.expires_at IS NULL OR mm.expires_at > p_clock);
    got := FOUND;
  ELSIF p_path IS NOT NULL THEN
    SELECT mm.seq, mm.id, mm.store_id, mm.path, mm.content_sha256, mm.content_size_bytes, mm.version_id, mm.mode, mm.created_at,
           mm.updated_at, mm.expires_at, mm.atime_us, mm.mtime_us, mm.ctime_us, mm.uid, mm.gid,
           (SELECT c.content FROM contents c WHERE c.sha256 = mm.content_sha256) AS content
      INTO m FROM memories mm
      WHERE mm.store_id = p_store AND mm.path >= p_path AND mm.path <= p_path AND (mm.expires_at IS NULL OR mm.expires_at > p_clock);
    got := FOUND;
  END IF;
  IF got THEN
    seq := m.seq; id := m.id; store_id := m.store_id; path := m.path; content_sha256 := m.content_sha256;
    content_size_bytes := m.content_size_bytes; version_id := m.version_id; mode := m.mode; created_at := m.created_at;
    updated_at := m.updated_at; expires_at := m.expires_at; atime_us := m.atime_us; mtime_us := m.mtime_us;
    ctime_us := m.ctime_us; uid := m.uid; gid := m.gid; content := m.content;
    self := m.id;
  END IF;
  -- The overlap probe (invariant 2) for the path a write would take: not for a save that found its memory there.
  -- The path and each ancestor as a range of one (path >= a AND path <= a), which only the
  -- (store_id, path) btree serves: with "= ANY(array)" a generic plan made before the table's first
  -- ANALYZE took the trigram index and the store's whole (store_id) range instead (2 ms and growing
  -- with the store, against 0.3 ms).
  IF p_above IS NOT NULL AND NOT (p_id IS NULL AND p_path IS NOT NULL AND self <> '') THEN
    FOREACH a IN ARRAY p_above LOOP
      SELECT o.id, o.path INTO h FROM memories o WHERE o.store_id = p_store AND o.path >= a AND o.path <= a AND o.id <> self;
      IF FOUND THEN
        hit_id := h.id;
        hit_path := h.path;
        RETURN NEXT;
        RETURN;
      END IF;
    END LOOP;
    SELECT o.id, o.path INTO h FROM memories o WHERE o.store_id = p_store AND o.path > p_below AND o.path < p_below_end AND o.id <> self LIMIT 1;
    IF FOUND THEN
      hit_id := h.id;
      hit_path := h.path;
    END IF;
  END IF;
  RETURN NEXT;
END $$;
`;
