/**
 * @module Migration 25: the database itself gives every version its content time and its memory's
 * creation (invariant 20, sqlite/schema/content-times.ts), as PostgreSQL's `versions_content_times`
 * (postgres/schema/v23.ts) does.
 *
 * Migration 22 left them to this code's append (sqlite/commit-order.ts), so a version appended by
 * an older mnemo still running on the file across an upgrade (`mnemo mount`, `mnemo mcp`) got
 * neither, and an `as_of` mount dated it 1970. SQLite's BEFORE INSERT cannot set NEW's columns, so
 * an AFTER INSERT trigger fills them from the memory's previous version, and only when the insert
 * left one NULL: this code's own appends always set both, and pay only the WHEN test. The
 * append-only trigger therefore lets an update fill a missing time once and change nothing else.
 * Rows such a writer appended before this migration are filled here, as migration 22 filled the
 * versions it found.
 */

/** Migration 21's append-only trigger, with a second thing an update may do: fill a missing time. */
export const VERSIONS_APPEND_ONLY_UPDATE_25 = `
CREATE TRIGGER versions_append_only_update BEFORE UPDATE ON versions
WHEN NOT (
  NEW.seq = OLD.seq AND NEW.id = OLD.id AND NEW.store_id = OLD.store_id
  AND NEW.memory_id = OLD.memory_id AND NEW.operation = OLD.operation
  AND NEW.created_at = OLD.created_at
  AND NEW.actor_type = OLD.actor_type AND NEW.actor_id = OLD.actor_id
  AND NEW.commit_seq = OLD.commit_seq
  AND NEW.path_seq IS OLD.path_seq
  AND ((
    OLD.redacted_at IS NULL AND NEW.redacted_at IS NOT NULL
    AND NEW.redacted_by_type IS NOT NULL AND NEW.redacted_by_id IS NOT NULL
    AND NEW.path IS NULL
    AND NEW.content_sha256 IS NULL AND NEW.content_size_bytes IS NULL
    AND NEW.content_at IS OLD.content_at AND NEW.memory_created_at IS OLD.memory_created_at
  ) OR (
    NEW.path IS OLD.path AND NEW.content_sha256 IS OLD.content_sha256 AND NEW.content_size_bytes IS OLD.content_size_bytes
    AND NEW.redacted_at IS OLD.redacted_at AND NEW.redacted_by_type IS OLD.redacted_by_type AND NEW.redacted_by_id IS OLD.redacted_by_id
    AND (OLD.content_at IS NULL OR OLD.memory_created_at IS NULL)
    AND NEW.content_at IS NOT NULL AND NEW.memory_created_at IS NOT NULL
    AND (OLD.content_at IS NULL OR NEW.content_at IS OLD.content_at)
    AND (OLD.memory_created_at IS NULL OR NEW.memory_created_at IS OLD.memory_created_at)
  ))
)
BEGIN
  SELECT RAISE(ABORT, 'memory versions are append-only: only redaction may change a version');
END;
`;

/** The memory's version just before NEW (versions_by_memory_time order), as a scalar subquery of `column`. */
const previous = (column: string) => `(SELECT ${column} FROM versions
      WHERE store_id = NEW.store_id AND memory_id = NEW.memory_id
        AND (created_at < NEW.created_at OR (created_at = NEW.created_at AND seq < NEW.seq))
      ORDER BY created_at DESC, seq DESC LIMIT 1)`;

export const MIGRATION_25 = `
DROP TRIGGER versions_append_only_update;
${VERSIONS_APPEND_ONLY_UPDATE_25}
UPDATE versions SET content_at = coalesce(versions.content_at, t.content_at), memory_created_at = coalesce(versions.memory_created_at, t.born)
  FROM (SELECT seq, born, max(CASE WHEN changed THEN created_at END) OVER (PARTITION BY store_id, memory_id ORDER BY created_at, seq ROWS UNBOUNDED PRECEDING) AS content_at
        FROM (SELECT seq, store_id, memory_id, created_at,
                     coalesce(min(memory_created_at) OVER (PARTITION BY store_id, memory_id), min(created_at) OVER (PARTITION BY store_id, memory_id)) AS born,
                     (operation <> 'modified' OR content_sha256 IS NULL
                      OR content_sha256 IS NOT lag(content_sha256) OVER (PARTITION BY store_id, memory_id ORDER BY created_at, seq)) AS changed
              FROM versions
              WHERE (store_id, memory_id) IN (SELECT store_id, memory_id FROM versions WHERE content_at IS NULL OR memory_created_at IS NULL))) AS t
  WHERE versions.seq = t.seq AND (versions.content_at IS NULL OR versions.memory_created_at IS NULL);

CREATE TRIGGER versions_content_times AFTER INSERT ON versions
WHEN NEW.content_at IS NULL OR NEW.memory_created_at IS NULL
BEGIN
  UPDATE versions SET
    content_at = coalesce(NEW.content_at,
      CASE WHEN NEW.operation = 'modified' AND ${previous('content_sha256')} IS NEW.content_sha256
           THEN coalesce(${previous('content_at')}, NEW.created_at) ELSE NEW.created_at END),
    memory_created_at = coalesce(NEW.memory_created_at, ${previous('memory_created_at')}, NEW.created_at)
  WHERE seq = NEW.seq;
END;
`;
