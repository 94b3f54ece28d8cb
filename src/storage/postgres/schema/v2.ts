/**
 * @module PostgreSQL migration 2: what SQLite's migrations 9 (sqlite/schema/feed.ts) and 10
 * (sqlite/schema/audit.ts) added, with the same invariants.
 * - Invariant 14 (commit order): `stores.commit_seq` is the last number handed out; every version
 *   takes the next one in its own transaction (postgres/commit-order.ts: UPDATE … RETURNING under
 *   the store's row lock, so across hosts a smaller number never commits after a larger one). A
 *   trigger refuses any other number; (store_id, commit_seq) is unique.
 * - Invariant 15 (retention): `stores.retention` (JSON text), `version_prunes` tombstones (a prune
 *   takes a commit number too), the delete trigger letting a recorded prune through, and
 *   `checkpoint_version_refs`, kept by a trigger on checkpoints from the bundle's references.
 * - Invariant 16: `admin_actions`, append-only (updates, deletes and TRUNCATE refused).
 */
/** Migration 2's delete trigger function (a recorded prune may go): one constant, which the tests' undo of migration 14 reuses. */
export const PG_VERSIONS_APPEND_ONLY_DELETE_2 = String.raw`CREATE OR REPLACE FUNCTION versions_append_only_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM stores WHERE id = OLD.store_id)
     AND NOT EXISTS (SELECT 1 FROM version_prunes WHERE version_id = OLD.id) THEN
    RAISE EXCEPTION 'memory versions are append-only: only deleting the store, or a recorded prune, removes them' USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN OLD;
END $$;`;

/** Migration 2's commit-order trigger function: one constant, which the tests' undo of migration 16 reuses. */
export const PG_VERSIONS_COMMIT_ORDER_2 = String.raw`CREATE OR REPLACE FUNCTION versions_commit_order() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.commit_seq IS DISTINCT FROM (SELECT commit_seq FROM stores WHERE id = NEW.store_id) THEN
    RAISE EXCEPTION 'a version takes its store''s next commit_seq (postgres/commit-order.ts)' USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN NEW;
END $$;`;

export const PG_MIGRATION_2 = String.raw`
ALTER TABLE stores ADD COLUMN commit_seq bigint NOT NULL DEFAULT 0;
ALTER TABLE stores ADD COLUMN retention text;
ALTER TABLE versions ADD COLUMN commit_seq bigint NOT NULL DEFAULT 0;

-- Existing versions in insertion order, which was their commit order (writes to a store are serialized by its row lock).
ALTER TABLE versions DISABLE TRIGGER versions_append_only_update;
UPDATE versions SET commit_seq = n.n
  FROM (SELECT seq, row_number() OVER (PARTITION BY store_id ORDER BY seq) AS n FROM versions) AS n
  WHERE versions.seq = n.seq;
ALTER TABLE versions ENABLE TRIGGER versions_append_only_update;
UPDATE stores SET commit_seq = coalesce((SELECT max(commit_seq) FROM versions WHERE store_id = stores.id), 0);
CREATE UNIQUE INDEX versions_by_commit ON versions (store_id, commit_seq);

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
  ) THEN
    RAISE EXCEPTION 'memory versions are append-only: only redaction may change a version' USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN NEW;
END $$;

${PG_VERSIONS_COMMIT_ORDER_2}
CREATE TRIGGER versions_commit_order BEFORE INSERT ON versions
  FOR EACH ROW EXECUTE FUNCTION versions_commit_order();

CREATE TABLE version_prunes (
  store_id    text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  commit_seq  bigint NOT NULL,
  version_id  text NOT NULL UNIQUE,
  memory_id   text NOT NULL,
  pruned_at   text NOT NULL,
  PRIMARY KEY (store_id, commit_seq)
);

${PG_VERSIONS_APPEND_ONLY_DELETE_2}

CREATE TABLE checkpoint_version_refs (
  store_id       text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  version_id     text NOT NULL,
  checkpoint_id  text NOT NULL,
  PRIMARY KEY (version_id, checkpoint_id)
);
CREATE INDEX checkpoint_version_refs_by_checkpoint ON checkpoint_version_refs (checkpoint_id);
INSERT INTO checkpoint_version_refs (store_id, version_id, checkpoint_id)
  SELECT c.store_id, r->>'versionId', c.id FROM checkpoints c, jsonb_array_elements(c.bundle::jsonb -> 'references') r
  WHERE r->>'versionId' IS NOT NULL
  ON CONFLICT DO NOTHING;

CREATE FUNCTION checkpoint_version_refs_follow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO checkpoint_version_refs (store_id, version_id, checkpoint_id)
      SELECT NEW.store_id, r->>'versionId', NEW.id FROM jsonb_array_elements(NEW.bundle::jsonb -> 'references') r
      WHERE r->>'versionId' IS NOT NULL
      ON CONFLICT DO NOTHING;
    RETURN NEW;
  END IF;
  DELETE FROM checkpoint_version_refs WHERE checkpoint_id = OLD.id;
  RETURN OLD;
END $$;
CREATE TRIGGER checkpoint_version_refs_insert AFTER INSERT ON checkpoints
  FOR EACH ROW EXECUTE FUNCTION checkpoint_version_refs_follow();
CREATE TRIGGER checkpoint_version_refs_delete AFTER DELETE ON checkpoints
  FOR EACH ROW EXECUTE FUNCTION checkpoint_version_refs_follow();

CREATE TABLE admin_actions (
  seq           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id            text NOT NULL UNIQUE,
  workspace_id  text NOT NULL,
  action        text NOT NULL,
  actor_type    text NOT NULL,
  actor_id      text NOT NULL,
  target_id     text NOT NULL,
  store_id      text,
  summary       text NOT NULL,
  created_at    text NOT NULL
);
CREATE INDEX admin_actions_by_workspace ON admin_actions (workspace_id, seq);
CREATE FUNCTION admin_actions_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'admin_actions rows are append-only' USING ERRCODE = 'restrict_violation';
END $$;
CREATE TRIGGER admin_actions_append_only_update BEFORE UPDATE OR DELETE ON admin_actions
  FOR EACH ROW EXECUTE FUNCTION admin_actions_append_only();
CREATE TRIGGER admin_actions_no_truncate BEFORE TRUNCATE ON admin_actions
  FOR EACH STATEMENT EXECUTE FUNCTION admin_actions_append_only();
`;
