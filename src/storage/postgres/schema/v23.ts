/**
 * @module PostgreSQL migration 23, SQLite's 22 (sqlite/schema/content-times.ts), with the same
 * invariant 20: every version carries `content_at` (the time of the newest version of its memory
 * up to it that changed the content; a rename that kept the text keeps its predecessor's) and
 * `memory_created_at` (its memory's first version's time), the mtime and atime the live mount
 * showed, so an `as_of` mount reads both from the one version it finds (postgres/history.ts).
 *
 * A trigger takes them as the row is inserted, from the memory's previous version (one seek of
 * versions_by_memory_time, under the store's row lock every append holds): every way a version is
 * appended (`mnemo_append`, `mnemo_create_guarded`, a move's page in `mnemo_append_moves`, forks,
 * the expiry purge) gets them without a change. Redaction keeps them (the append-only trigger).
 * Existing versions take them as SQLite's migration does.
 */
export const PG_MIGRATION_23 = String.raw`
ALTER TABLE versions ADD COLUMN content_at text, ADD COLUMN memory_created_at text;

ALTER TABLE versions DISABLE TRIGGER versions_append_only_update;
UPDATE versions SET content_at = t.content_at, memory_created_at = t.born
  FROM (SELECT seq, born, max(CASE WHEN changed THEN created_at END) OVER (PARTITION BY store_id, memory_id ORDER BY created_at, seq ROWS UNBOUNDED PRECEDING) AS content_at
        FROM (SELECT seq, store_id, memory_id, created_at,
                     min(created_at) OVER (PARTITION BY store_id, memory_id) AS born,
                     (operation <> 'modified' OR content_sha256 IS NULL
                      OR content_sha256 IS DISTINCT FROM lag(content_sha256) OVER (PARTITION BY store_id, memory_id ORDER BY created_at, seq)) AS changed
              FROM versions) AS c) AS t
  WHERE versions.seq = t.seq;
ALTER TABLE versions ENABLE TRIGGER versions_append_only_update;

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
    AND NEW.content_at IS NOT DISTINCT FROM OLD.content_at
    AND NEW.memory_created_at IS NOT DISTINCT FROM OLD.memory_created_at
  ) THEN
    RAISE EXCEPTION 'memory versions are append-only: only redaction may change a version' USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN NEW;
END $$;

CREATE FUNCTION versions_content_times() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  prev_sha text;
  prev_content_at text;
  prev_born text;
BEGIN
  SELECT content_sha256, content_at, memory_created_at INTO prev_sha, prev_content_at, prev_born FROM versions
    WHERE store_id = NEW.store_id AND memory_id = NEW.memory_id ORDER BY created_at DESC, seq DESC LIMIT 1;
  NEW.memory_created_at := coalesce(prev_born, NEW.created_at);
  IF NEW.operation = 'modified' AND prev_sha IS NOT DISTINCT FROM NEW.content_sha256 THEN
    NEW.content_at := coalesce(prev_content_at, NEW.created_at);
  ELSE
    NEW.content_at := NEW.created_at;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER versions_content_times BEFORE INSERT ON versions
  FOR EACH ROW EXECUTE FUNCTION versions_content_times();
`;
