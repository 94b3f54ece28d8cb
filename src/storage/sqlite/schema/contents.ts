/**
 * @module Migration 13 (issue 15): content stored once. A version row names its text by
 * `content_sha256`; the text itself is one row of `contents`, shared by every version in the
 * database that holds the same bytes (in one store, across stores, across forks). A 1,000-version
 * store of one text keeps one copy, and a fork copies no version text at all.
 *
 * Per database, not per store: a fork shares its source's rows with no copy and no second key, and
 * identical notes in two stores (templates, instructions) cost one row. Workspaces never learn about
 * each other through it: the redaction response counts only the caller's workspace
 * (sqlite/versions.ts), and nothing else reads across stores.
 *
 * Invariant 19: every version with a `content_sha256` has its `contents` row, and every `contents`
 * row is held by at least one version. The triggers below release a row in the statement that drops
 * its last holder (a redaction, a prune, a store's cascade), so nothing outlives the operation that
 * orphaned it; redaction's secure_delete and WAL checkpoint then erase the freed bytes. Since
 * migration 17 (memory-text.ts) a memory row names its text by sha too: that text always equals its
 * head version's, which cannot be redacted, so the versions hold every live memory's text alive and
 * memory rows need no trigger of their own. Content rows never change (a trigger).
 *
 * Moved in this migration's one transaction: migrations run before the server serves anything, so
 * no mount or request waits on it, and a file is either all old or all new (no half-moved state to
 * reason about on a crash).
 */
/** The append-only trigger as migration 13 leaves it (migration 22 adds its columns). */
export const VERSIONS_APPEND_ONLY_UPDATE_13 = `CREATE TRIGGER versions_append_only_update BEFORE UPDATE ON versions
WHEN NOT (
  OLD.redacted_at IS NULL AND NEW.redacted_at IS NOT NULL
  AND NEW.redacted_by_type IS NOT NULL AND NEW.redacted_by_id IS NOT NULL
  AND NEW.path IS NULL
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
END;`;

export const MIGRATION_13 = `
CREATE TABLE contents (
  seq      INTEGER PRIMARY KEY,
  sha256   TEXT NOT NULL UNIQUE,
  content  TEXT NOT NULL
);
INSERT OR IGNORE INTO contents (sha256, content)
  SELECT content_sha256, content FROM versions WHERE content IS NOT NULL ORDER BY seq;

DROP TRIGGER versions_append_only_update;
ALTER TABLE versions DROP COLUMN content;
${VERSIONS_APPEND_ONLY_UPDATE_13}

CREATE INDEX versions_by_content ON versions (content_sha256) WHERE content_sha256 IS NOT NULL;

CREATE TRIGGER contents_immutable BEFORE UPDATE ON contents
BEGIN
  SELECT RAISE(ABORT, 'content rows never change: a new text is a new row');
END;
CREATE TRIGGER contents_release_on_redaction AFTER UPDATE OF content_sha256 ON versions
WHEN OLD.content_sha256 IS NOT NULL AND NEW.content_sha256 IS NULL
  AND NOT EXISTS (SELECT 1 FROM versions WHERE content_sha256 = OLD.content_sha256)
BEGIN
  DELETE FROM contents WHERE sha256 = OLD.content_sha256;
END;
CREATE TRIGGER contents_release_on_delete AFTER DELETE ON versions
WHEN OLD.content_sha256 IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM versions WHERE content_sha256 = OLD.content_sha256)
BEGIN
  DELETE FROM contents WHERE sha256 = OLD.content_sha256;
END;
`;
