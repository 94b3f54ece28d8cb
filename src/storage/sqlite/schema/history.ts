/**
 * @module Migration 11 (issue 15): history by path, for a mount's `.history` and point-in-time mounts.
 *
 * Invariant 18: every version carries `path_seq`, its number among the versions whose path was its
 * path (1, 2, 3… oldest first), taken when it is appended (sqlite/commit-order.ts) and kept through
 * redaction, so a redacted version leaves a gap (`.history/<path>/v2` is gone, v3 stays v3).
 * Redaction erases the path, so a number is counted from the unredacted versions at that path: one
 * appended after the path's newest versions were all redacted can take a number again.
 * `versions_by_path` (store, path, path_seq) answers a path's versions and, walked by prefix, the
 * names of every path that ever held a memory below a directory, one indexed step per name.
 * `versions_by_memory_time` (store, memory, created_at) answers a memory's version at an instant.
 *
 * Existing versions are numbered in commit order per path; those redacted before this migration
 * have no path any more and take no number.
 */
export const MIGRATION_11 = `
ALTER TABLE versions ADD COLUMN path_seq INTEGER;

DROP TRIGGER versions_append_only_update;
UPDATE versions SET path_seq = n.n
  FROM (SELECT seq, row_number() OVER (PARTITION BY store_id, path ORDER BY commit_seq) AS n FROM versions WHERE path IS NOT NULL) AS n
  WHERE versions.seq = n.seq;
CREATE TRIGGER versions_append_only_update BEFORE UPDATE ON versions
WHEN NOT (
  OLD.redacted_at IS NULL AND NEW.redacted_at IS NOT NULL
  AND NEW.redacted_by_type IS NOT NULL AND NEW.redacted_by_id IS NOT NULL
  AND NEW.path IS NULL AND NEW.content IS NULL
  AND NEW.content_sha256 IS NULL AND NEW.content_size_bytes IS NULL
  AND NEW.seq = OLD.seq AND NEW.id = OLD.id AND NEW.store_id = OLD.store_id
  AND NEW.memory_id = OLD.memory_id AND NEW.operation = OLD.operation
  AND NEW.created_at = OLD.created_at
  AND NEW.actor_type = OLD.actor_type AND NEW.actor_id = OLD.actor_id
  AND NEW.commit_seq = OLD.commit_seq
  AND NEW.path_seq IS OLD.path_seq
)
BEGIN
  SELECT RAISE(ABORT, 'memory versions are append-only: only redaction may change a version');
END;

CREATE INDEX versions_by_path ON versions (store_id, path, path_seq) WHERE path IS NOT NULL;
CREATE INDEX versions_by_memory_time ON versions (store_id, memory_id, created_at, seq);
`;
