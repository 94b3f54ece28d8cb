/**
 * @module PostgreSQL migration 4: history by path, as SQLite's migration 11 (sqlite/schema/history.ts),
 * with the same invariant: every version carries `path_seq`, its number among the versions whose
 * path was its path (1, 2, 3… oldest first), taken when it is appended (postgres/commit-order.ts,
 * under the store's row lock) and kept through redaction, so a redacted version leaves a gap.
 * `versions_by_path` answers a path's versions and, walked by prefix, the names of every path that
 * ever held a memory below a directory (paths are COLLATE "C": byte order, as SQLite's).
 * `versions_by_memory_time` answers a memory's version at an instant.
 *
 * Existing versions are numbered in commit order per path; those redacted before this migration
 * have no path any more and take no number.
 */
export const PG_MIGRATION_4 = String.raw`
ALTER TABLE versions ADD COLUMN path_seq bigint;

ALTER TABLE versions DISABLE TRIGGER versions_append_only_update;
UPDATE versions SET path_seq = n.n
  FROM (SELECT seq, row_number() OVER (PARTITION BY store_id, path ORDER BY commit_seq) AS n FROM versions WHERE path IS NOT NULL) AS n
  WHERE versions.seq = n.seq;
ALTER TABLE versions ENABLE TRIGGER versions_append_only_update;

CREATE OR REPLACE FUNCTION versions_append_only_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT (
    OLD.redacted_at IS NULL AND NEW.redacted_at IS NOT NULL
    AND NEW.redacted_by_type IS NOT NULL AND NEW.redacted_by_id IS NOT NULL
    AND NEW.path IS NULL AND NEW.content IS NULL
    AND NEW.content_sha256 IS NULL AND NEW.content_size_bytes IS NULL
    AND NEW.seq = OLD.seq AND NEW.id = OLD.id AND NEW.store_id = OLD.store_id
    AND NEW.memory_id = OLD.memory_id AND NEW.operation = OLD.operation
    AND NEW.created_at = OLD.created_at
    AND NEW.actor_type = OLD.actor_type AND NEW.actor_id = OLD.actor_id
    AND NEW.commit_seq = OLD.commit_seq
    AND NEW.path_seq IS NOT DISTINCT FROM OLD.path_seq
  ) THEN
    RAISE EXCEPTION 'memory versions are append-only: only redaction may change a version' USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN NEW;
END $$;

CREATE INDEX versions_by_path ON versions (store_id, path, path_seq) WHERE path IS NOT NULL;
CREATE INDEX versions_by_memory_time ON versions (store_id, memory_id, created_at, seq);
`;
