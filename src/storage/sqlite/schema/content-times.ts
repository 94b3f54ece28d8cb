/**
 * @module Migration 21: a version carries the times a point-in-time mount shows for it.
 *
 * Invariant 20: every version carries `content_at`, the `created_at` of the newest version of its
 * memory up to it that changed the content (its own for a create or a content change, its
 * predecessor's for a rename that kept the content), and `memory_created_at`, its memory's first
 * version's `created_at`. They are what the live mount shows (src/domain/memory-attrs.ts): a rename
 * keeps the mtime and the atime stays at the creation, so an `as_of` mount reads a file's mtime and
 * atime from the one version it finds (sqlite/history.ts), with no walk back over a chain of
 * renames. Each is taken when the version is appended (sqlite/commit-order.ts: one seek of its
 * memory's previous version) and kept through redaction and pruning.
 *
 * Existing versions take them from their memory's versions in time order; a redacted one, whose
 * text is gone, counts as a change of content, and so does the version after it.
 */
import { VERSIONS_APPEND_ONLY_UPDATE_13 } from './contents.js';

/** Migration 13's append-only trigger with the two columns kept through redaction. */
export const VERSIONS_APPEND_ONLY_UPDATE_21 = VERSIONS_APPEND_ONLY_UPDATE_13.replace(
  'AND NEW.path_seq IS OLD.path_seq',
  'AND NEW.path_seq IS OLD.path_seq\n  AND NEW.content_at IS OLD.content_at AND NEW.memory_created_at IS OLD.memory_created_at',
);

export const MIGRATION_22 = `
DROP TRIGGER versions_append_only_update;
ALTER TABLE versions ADD COLUMN content_at TEXT;
ALTER TABLE versions ADD COLUMN memory_created_at TEXT;
UPDATE versions SET content_at = t.content_at, memory_created_at = t.born
  FROM (SELECT seq, born, max(CASE WHEN changed THEN created_at END) OVER (PARTITION BY store_id, memory_id ORDER BY created_at, seq ROWS UNBOUNDED PRECEDING) AS content_at
        FROM (SELECT seq, store_id, memory_id, created_at,
                     min(created_at) OVER (PARTITION BY store_id, memory_id) AS born,
                     (operation <> 'modified' OR content_sha256 IS NULL
                      OR content_sha256 IS NOT lag(content_sha256) OVER (PARTITION BY store_id, memory_id ORDER BY created_at, seq)) AS changed
              FROM versions)) AS t
  WHERE versions.seq = t.seq;
${VERSIONS_APPEND_ONLY_UPDATE_21}
`;
