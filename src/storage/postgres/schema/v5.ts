/**
 * @module PostgreSQL migration 5: content stored once, as SQLite's migration 13
 * (sqlite/schema/contents.ts), with the same invariant 19: every version with a `content_sha256`
 * has its `contents` row, and every `contents` row is held by at least one version; a trigger
 * releases a row in the statement that drops its last holder (redaction, prune, a store's cascade).
 * Memory rows name their text by sha too since migration 9 (v9.ts): a live memory's text is its
 * head version's, which cannot be redacted, so the versions hold it alive and no trigger watches
 * memory rows.
 *
 * Concurrency (many hosts): a writer storing a text takes the row lock of an existing `contents`
 * row (`ON CONFLICT … DO UPDATE … WHERE false` locks without writing: postgres/contents.ts), and
 * the release takes the same lock before it looks for holders. So a release that finds no holder
 * deletes before the writer's insert retries (the writer then inserts the row again), or waits for
 * the writer's commit and then sees its version: never a version naming a deleted text.
 *
 * Moved in the migration's one transaction: migrations run under the advisory lock before the
 * server serves (postgres/schema/migrations.ts), so nothing waits on it and a crash leaves the old
 * schema whole. PostgreSQL has no secure delete: the old column's bytes stay in dead tuples until
 * vacuum (README, "PostgreSQL").
 */
export const PG_MIGRATION_5 = String.raw`
CREATE TABLE contents (
  sha256   text PRIMARY KEY,
  content  text NOT NULL
);
INSERT INTO contents (sha256, content)
  SELECT DISTINCT ON (content_sha256) content_sha256, content FROM versions WHERE content IS NOT NULL
  ON CONFLICT DO NOTHING;

CREATE OR REPLACE FUNCTION versions_append_only_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT (
    OLD.redacted_at IS NULL AND NEW.redacted_at IS NOT NULL
    AND NEW.redacted_by_type IS NOT NULL AND NEW.redacted_by_id IS NOT NULL
    AND NEW.path IS NULL
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
ALTER TABLE versions DROP COLUMN content;

CREATE INDEX versions_by_content ON versions (content_sha256) WHERE content_sha256 IS NOT NULL;

CREATE FUNCTION contents_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'content rows never change: a new text is a new row' USING ERRCODE = 'restrict_violation';
END $$;
CREATE TRIGGER contents_immutable BEFORE UPDATE ON contents FOR EACH ROW EXECUTE FUNCTION contents_immutable();

CREATE FUNCTION contents_release() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.content_sha256 IS NOT NULL AND (TG_OP = 'DELETE' OR NEW.content_sha256 IS NULL) THEN
    PERFORM 1 FROM contents WHERE sha256 = OLD.content_sha256 FOR UPDATE;
    IF NOT EXISTS (SELECT 1 FROM versions WHERE content_sha256 = OLD.content_sha256) THEN
      DELETE FROM contents WHERE sha256 = OLD.content_sha256;
    END IF;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER contents_release_on_redaction AFTER UPDATE OF content_sha256 ON versions
  FOR EACH ROW EXECUTE FUNCTION contents_release();
CREATE TRIGGER contents_release_on_delete AFTER DELETE ON versions
  FOR EACH ROW EXECUTE FUNCTION contents_release();
`;
