/**
 * @module Migration 9 (issue 15): commit order per store, for the change feed.
 *
 * Invariant 15: every version carries `commit_seq`, its place in its store's commit order: 1, 2, 3…
 * with no gaps and no repeats per store (UNIQUE (store_id, commit_seq)). `stores.commit_seq` is the
 * last one handed out. A write transaction takes the next number by bumping the store row
 * (sqlite/commit-order.ts, the one place versions are appended), so the number is taken under the
 * store's row lock and belongs to the transaction: a rollback gives it back, and no later commit
 * can hold a smaller one. On SQLite the single writer makes that commit order anyway; PostgreSQL
 * takes the same row lock (UPDATE … RETURNING) and gets the same order across hosts, which a
 * sequence (numbered at insert, not at commit) would not. A trigger refuses any other number.
 *
 * Existing versions are numbered in insertion (rowid) order, which was their commit order. The
 * append-only trigger is rebuilt so that redaction still cannot move a version's place.
 *
 * Invariant 16 (retention): `stores.retention` (JSON `{maxAgeDays, keepLast}`, NULL: keep every
 * version) lets the upkeep prune old versions (sqlite/retention.ts). A prune deletes the version row
 * and records a tombstone in `version_prunes`, which takes the store's next commit number, so the
 * change feed shows the prune at its place; invariant 8 becomes "a version row is deleted only with
 * its store, or by a prune that left its tombstone" (the delete trigger checks for it). Never pruned:
 * a live memory's head, a version a checkpoint names (`checkpoint_version_refs`, kept by triggers on
 * checkpoints), a version an idempotency receipt names (until the receipt expires).
 */
/** Migration 9's delete trigger (a version goes with its store, or by a recorded prune); tests that undo later migrations put it back. */
export const VERSIONS_APPEND_ONLY_DELETE_9 = `CREATE TRIGGER versions_append_only_delete BEFORE DELETE ON versions
WHEN EXISTS (SELECT 1 FROM stores WHERE id = OLD.store_id)
  AND NOT EXISTS (SELECT 1 FROM version_prunes WHERE version_id = OLD.id)
BEGIN
  SELECT RAISE(ABORT, 'memory versions are append-only: only deleting the store, or a recorded prune, removes them');
END;`;

export const MIGRATION_9 = `
ALTER TABLE stores ADD COLUMN commit_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE versions ADD COLUMN commit_seq INTEGER NOT NULL DEFAULT 0;

DROP TRIGGER versions_append_only_update;
UPDATE versions SET commit_seq = n.n
  FROM (SELECT seq, row_number() OVER (PARTITION BY store_id ORDER BY seq) AS n FROM versions) AS n
  WHERE versions.seq = n.seq;
UPDATE stores SET commit_seq = coalesce((SELECT max(commit_seq) FROM versions WHERE store_id = stores.id), 0);
CREATE UNIQUE INDEX versions_by_commit ON versions (store_id, commit_seq);

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
)
BEGIN
  SELECT RAISE(ABORT, 'memory versions are append-only: only redaction may change a version');
END;

ALTER TABLE stores ADD COLUMN retention TEXT;

CREATE TABLE version_prunes (
  store_id    TEXT NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  commit_seq  INTEGER NOT NULL,
  version_id  TEXT NOT NULL UNIQUE,
  memory_id   TEXT NOT NULL,
  pruned_at   TEXT NOT NULL,
  PRIMARY KEY (store_id, commit_seq)
) WITHOUT ROWID;

DROP TRIGGER versions_append_only_delete;
${VERSIONS_APPEND_ONLY_DELETE_9}

CREATE TABLE checkpoint_version_refs (
  store_id       TEXT NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  version_id     TEXT NOT NULL,
  checkpoint_id  TEXT NOT NULL,
  PRIMARY KEY (version_id, checkpoint_id)
) WITHOUT ROWID;
INSERT OR IGNORE INTO checkpoint_version_refs (store_id, version_id, checkpoint_id)
  SELECT c.store_id, json_extract(r.value, '$.versionId'), c.id FROM checkpoints c, json_each(c.bundle, '$.references') r
  WHERE json_extract(r.value, '$.versionId') IS NOT NULL;
CREATE TRIGGER checkpoint_version_refs_insert AFTER INSERT ON checkpoints BEGIN
  INSERT OR IGNORE INTO checkpoint_version_refs (store_id, version_id, checkpoint_id)
    SELECT NEW.store_id, json_extract(r.value, '$.versionId'), NEW.id FROM json_each(NEW.bundle, '$.references') r
    WHERE json_extract(r.value, '$.versionId') IS NOT NULL;
END;
CREATE TRIGGER checkpoint_version_refs_delete AFTER DELETE ON checkpoints BEGIN
  DELETE FROM checkpoint_version_refs WHERE checkpoint_id = OLD.id;
END;
CREATE INDEX checkpoint_version_refs_by_checkpoint ON checkpoint_version_refs (checkpoint_id);
CREATE INDEX idempotency_receipts_by_version ON idempotency_receipts (version_id) WHERE version_id IS NOT NULL;

CREATE TRIGGER versions_commit_order BEFORE INSERT ON versions
WHEN NEW.commit_seq IS NOT (SELECT commit_seq FROM stores WHERE id = NEW.store_id)
BEGIN
  SELECT RAISE(ABORT, 'a version takes its store''s next commit_seq (sqlite/commit-order.ts)');
END;
`;
