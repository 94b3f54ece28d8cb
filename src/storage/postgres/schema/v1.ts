/**
 * @module PostgreSQL migration 1: SQLite's latest schema (sqlite/schema/migrations.ts, versions
 * 1–8) in PostgreSQL terms, with the same invariants (numbered as there). What differs, and why:
 * - Paths are `COLLATE "C"`: keyset walks and prefix ranges compare bytes, as SQLite's BINARY does,
 *   whatever the database's locale.
 * - Times stay RFC 3339 text (they compare in order as text, as in SQLite); kept POSIX times are
 *   bigint microseconds; flags are booleans.
 * - Full-text search (invariant 11) needs no backlog: `memories.search` is a stored generated
 *   tsvector the GIN index follows in the writing transaction. Words are split on whitespace and
 *   ASCII punctuation first and diacritics dropped (`mnemo_words`, with the unaccent extension), like
 *   SQLite's unicode61 tokenizer, so `/notes/a.md`
 *   is the words notes, a, md and not one "file" token of PostgreSQL's parser. Path words weigh more
 *   (weight A) than body words (B). Substring search has trigram indexes (pg_trgm) on both.
 * - The stat covering index is the unique (store_id, path) index with INCLUDE columns.
 * - Invariants 7 and 8 (append-only versions) and 12 (immutable checkpoints) are plpgsql triggers
 *   allowing exactly what SQLite's allow; TRUNCATE of versions is refused too.
 * - Invariant 13 (store_usage) is kept by row triggers as in SQLite.
 */
export const PG_MIGRATION_1 = String.raw`
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS unaccent;

-- Words as SQLite's unicode61 (remove_diacritics 2) sees them: whitespace and ASCII punctuation
-- separate, the rest is word, diacritics dropped. Immutable with the dictionary named (unaccent()
-- alone is only stable); a SQL-standard body binds the dictionary when it is created.
CREATE FUNCTION mnemo_words(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN lower(regexp_replace(unaccent('unaccent'::regdictionary, t), '[\s\x21-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e]+', ' ', 'g'));

CREATE TABLE workspaces (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  is_default  boolean NOT NULL DEFAULT false,
  created_at  text NOT NULL
);

CREATE TABLE api_keys (
  id              text PRIMARY KEY,
  workspace_id    text NOT NULL REFERENCES workspaces(id),
  name            text NOT NULL,
  role            text NOT NULL CHECK (role IN ('admin', 'read_write', 'read_only')),
  key_hash        text NOT NULL UNIQUE,
  created_at      text NOT NULL,
  revoked_at      text,
  store_ids       text,
  all_workspaces  boolean NOT NULL DEFAULT false,
  seeded          boolean NOT NULL DEFAULT false
);
CREATE INDEX api_keys_by_workspace ON api_keys (workspace_id, created_at);
CREATE UNIQUE INDEX api_keys_one_seeded ON api_keys (seeded) WHERE seeded AND revoked_at IS NULL;

CREATE TABLE stores (
  seq           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id            text NOT NULL UNIQUE,
  workspace_id  text NOT NULL REFERENCES workspaces(id),
  name          text NOT NULL,
  description   text NOT NULL,
  metadata      text NOT NULL,
  created_at    text NOT NULL,
  updated_at    text NOT NULL,
  archived_at   text
);
CREATE INDEX stores_by_workspace ON stores (workspace_id, seq);

CREATE TABLE memories (
  seq                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id                  text NOT NULL UNIQUE,
  store_id            text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  path                text COLLATE "C" NOT NULL,
  content             text NOT NULL,
  content_sha256      text NOT NULL,
  content_size_bytes  integer NOT NULL,
  version_id          text NOT NULL,
  mode                integer NOT NULL DEFAULT 420,
  created_at          text NOT NULL,
  updated_at          text NOT NULL,
  expires_at          text,
  atime_us            bigint,
  mtime_us            bigint,
  ctime_us            bigint,
  uid                 bigint,
  gid                 bigint,
  search              tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple'::regconfig, mnemo_words(path)), 'A') ||
    setweight(to_tsvector('simple'::regconfig, mnemo_words(content)), 'B')
  ) STORED,
  CONSTRAINT memories_store_path UNIQUE (store_id, path)
    INCLUDE (id, version_id, content_sha256, content_size_bytes, mode, created_at, updated_at, expires_at,
             atime_us, mtime_us, ctime_us, uid, gid)
);
CREATE INDEX memories_expiring ON memories (store_id, expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX memories_search ON memories USING gin (search);
CREATE INDEX memories_content_trgm ON memories USING gin (content gin_trgm_ops);
CREATE INDEX memories_path_trgm ON memories USING gin (path gin_trgm_ops);

CREATE TABLE versions (
  seq                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id                  text NOT NULL UNIQUE,
  store_id            text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  memory_id           text NOT NULL,
  operation           text NOT NULL CHECK (operation IN ('created', 'modified', 'deleted')),
  path                text COLLATE "C",
  content             text,
  content_sha256      text,
  content_size_bytes  integer,
  created_at          text NOT NULL,
  actor_type          text NOT NULL,
  actor_id            text NOT NULL,
  redacted_at         text,
  redacted_by_type    text,
  redacted_by_id      text
);
CREATE INDEX versions_by_store ON versions (store_id, seq);
CREATE INDEX versions_by_memory ON versions (store_id, memory_id, seq);
CREATE INDEX versions_by_actor ON versions (store_id, actor_type, actor_id, seq);

-- Invariant 8: only deleting the store (its cascade) removes versions.
CREATE FUNCTION versions_append_only_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM stores WHERE id = OLD.store_id) THEN
    RAISE EXCEPTION 'memory versions are append-only: only deleting the store removes them' USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN OLD;
END $$;
CREATE TRIGGER versions_append_only_delete BEFORE DELETE ON versions
  FOR EACH ROW EXECUTE FUNCTION versions_append_only_delete();

-- Invariant 7: the one update allowed is redaction, once: text nulled, who and when set, nothing else moved.
CREATE FUNCTION versions_append_only_update() RETURNS trigger LANGUAGE plpgsql AS $$
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
  ) THEN
    RAISE EXCEPTION 'memory versions are append-only: only redaction may change a version' USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER versions_append_only_update BEFORE UPDATE ON versions
  FOR EACH ROW EXECUTE FUNCTION versions_append_only_update();

CREATE FUNCTION versions_no_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'memory versions are append-only: they cannot be truncated' USING ERRCODE = 'restrict_violation';
END $$;
CREATE TRIGGER versions_no_truncate BEFORE TRUNCATE ON versions
  FOR EACH STATEMENT EXECUTE FUNCTION versions_no_truncate();

CREATE TABLE sessions (
  seq           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id            text NOT NULL UNIQUE,
  workspace_id  text NOT NULL REFERENCES workspaces(id),
  status        text NOT NULL CHECK (status IN ('active', 'ended')),
  resources     text NOT NULL,
  created_at    text NOT NULL,
  ended_at      text,
  local_pid     integer
);
CREATE INDEX sessions_by_workspace ON sessions (workspace_id, seq);
CREATE INDEX sessions_active_by_workspace ON sessions (workspace_id) WHERE status = 'active';

CREATE TABLE idempotency_receipts (
  workspace_id  text NOT NULL,
  api_key_id    text NOT NULL,
  route         text NOT NULL,
  idem_key      text NOT NULL,
  fingerprint   text NOT NULL,
  status        integer NOT NULL,
  body          text NOT NULL,
  store_id      text,
  version_id    text,
  created_at    text NOT NULL,
  expires_at    text NOT NULL,
  PRIMARY KEY (workspace_id, api_key_id, route, idem_key)
);
CREATE INDEX idempotency_receipts_by_expiry ON idempotency_receipts (expires_at);
CREATE INDEX idempotency_receipts_by_version ON idempotency_receipts (store_id, version_id) WHERE version_id IS NOT NULL;

-- Invariant 10: an expired memory's last path, so a checkpoint reference tells expired from deleted.
CREATE TABLE memory_expirations (
  store_id    text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  memory_id   text NOT NULL,
  path        text COLLATE "C" NOT NULL,
  expired_at  text NOT NULL,
  PRIMARY KEY (store_id, memory_id)
);
CREATE INDEX memory_expirations_by_path ON memory_expirations (store_id, path);

-- Invariant 12.
CREATE TABLE checkpoints (
  seq           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id            text NOT NULL UNIQUE,
  store_id      text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  agent_id      text NOT NULL,
  session_id    text NOT NULL,
  revision      integer NOT NULL,
  bundle        text NOT NULL,
  size_bytes    integer NOT NULL,
  created_at    text NOT NULL,
  actor_type    text NOT NULL,
  actor_id      text NOT NULL,
  UNIQUE (store_id, agent_id, session_id, revision)
);

CREATE TABLE checkpoint_heads (
  store_id       text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  agent_id       text NOT NULL,
  session_id     text NOT NULL,
  checkpoint_id  text NOT NULL,
  revision       integer NOT NULL,
  PRIMARY KEY (store_id, agent_id, session_id)
);

CREATE FUNCTION checkpoints_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'checkpoints are immutable' USING ERRCODE = 'restrict_violation';
END $$;
CREATE TRIGGER checkpoints_immutable BEFORE UPDATE ON checkpoints
  FOR EACH ROW EXECUTE FUNCTION checkpoints_immutable();

-- Invariant 13: how many memories a store holds and their bytes, one primary-key row to read.
CREATE TABLE store_usage (
  store_id  text PRIMARY KEY REFERENCES stores(id) ON DELETE CASCADE,
  memories  bigint NOT NULL,
  bytes     bigint NOT NULL
);

CREATE FUNCTION store_usage_follow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO store_usage (store_id, memories, bytes) VALUES (NEW.store_id, 1, NEW.content_size_bytes)
    ON CONFLICT (store_id) DO UPDATE SET memories = store_usage.memories + 1, bytes = store_usage.bytes + excluded.bytes;
    RETURN NEW;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE store_usage SET memories = memories - 1, bytes = bytes - OLD.content_size_bytes WHERE store_id = OLD.store_id;
    RETURN OLD;
  ELSE
    IF NEW.content_size_bytes <> OLD.content_size_bytes THEN
      UPDATE store_usage SET bytes = bytes + NEW.content_size_bytes - OLD.content_size_bytes WHERE store_id = NEW.store_id;
    END IF;
    RETURN NEW;
  END IF;
END $$;
CREATE TRIGGER store_usage_insert AFTER INSERT ON memories FOR EACH ROW EXECUTE FUNCTION store_usage_follow();
CREATE TRIGGER store_usage_delete AFTER DELETE ON memories FOR EACH ROW EXECUTE FUNCTION store_usage_follow();
CREATE TRIGGER store_usage_resize AFTER UPDATE OF content_size_bytes ON memories FOR EACH ROW EXECUTE FUNCTION store_usage_follow();
`;
