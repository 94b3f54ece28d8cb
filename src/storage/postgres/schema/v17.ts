/**
 * @module PostgreSQL migration 17: an API create in one statement that holds nothing back.
 *
 * Why: a write reads what it decides on under the store's lock (`mnemo_write_probe`), the service's
 * rules run on that in TypeScript, and then it appends (`mnemo_append`): two round trips, and in an
 * API group of N creates N + 1, each a socket write that wakes a backend. A create decides on
 * little: the store must be the caller's and writable, nothing expired may wait in the store, no
 * memory may be at its path, an ancestor or below it, and the store must have room. All but the
 * last are the probe's facts; the room is the service's rule, which hands the usage at or below
 * which its answer is yes (`Admission.clearBelow`). So `mnemo_create_guarded` probes, and when every
 * fact is as the create needs appends at once; otherwise it refuses with SQLSTATE MNG01 and
 * appends nothing. A refusal aborts the transaction, which the adapter then runs again on the
 * probe-then-append path, where the rules give the write its answer (postgres/db.ts,
 * `inTransaction`). The guard only ever says yes where the rules would: it decides nothing they do not.
 */
export const PG_MIGRATION_17 = String.raw`
CREATE FUNCTION mnemo_create_guarded(
  -- the probe (mnemo_write_probe's, for a path's overlap) and the usage the service admits at or below
  p_workspace text, p_clock text, p_above text[], p_below text, p_below_end text, p_max_memories bigint, p_max_bytes bigint,
  -- the version and the memory row, as mnemo_append takes them
  p_version text, p_store text, p_memory text, p_path text, p_content text, p_sha text, p_size integer,
  p_created_at text, p_actor_type text, p_actor_id text, p_path_hash text, p_channel text, p_notice text,
  p_mode integer, p_expires_at text, p_atime bigint, p_mtime bigint, p_uid bigint, p_gid bigint
) RETURNS void LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  r record;
BEGIN
  SELECT * INTO r FROM mnemo_write_probe(p_workspace, p_store, p_created_at, p_clock, NULL, NULL, p_above, p_below, p_below_end);
  IF NOT (r.store_found AND r.visible AND r.archived_at IS NULL AND NOT r.expired AND r.hit_id IS NULL
          AND r.u_memories <= p_max_memories AND r.u_bytes <= p_max_bytes) THEN
    RAISE EXCEPTION 'mnemo: a guarded create found its store other than it needs; it runs again probe first' USING ERRCODE = 'MNG01';
  END IF;
  PERFORM mnemo_append(p_version, p_store, p_memory, 'created', p_path, p_content, p_sha, p_size, p_created_at, p_actor_type, p_actor_id,
                       p_path_hash, p_channel, p_notice, 'insert', p_mode, p_created_at, p_expires_at, p_atime, p_mtime, p_uid, p_gid);
END $$;
`;
