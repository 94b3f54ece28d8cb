/**
 * @module SQL that takes a database file back to before migration 9 (the commit order, issue 15),
 * for the tests that migrate an older file: the columns, index and triggers it added go, and the
 * append-only trigger is the one migration 1 made.
 */
import { VERSIONS_APPEND_ONLY_DELETE_9 } from '../../src/storage/sqlite/schema/feed.js';
import { VERSIONS_APPEND_ONLY_UPDATE_13 } from '../../src/storage/sqlite/schema/contents.js';
import { VERSIONS_APPEND_ONLY_UPDATE_21 } from '../../src/storage/sqlite/schema/content-times.js';
import { PG_VERSIONS_APPEND_ONLY_DELETE_2, PG_VERSIONS_COMMIT_ORDER_2 } from '../../src/storage/postgres/schema/v2.js';

/** Back to before migration 11 (history by path; migration 12 is undone first): its indexes and column go, the append-only trigger is migration 9's. */
/** Back to before migration 16 (web console sign-ins in the database, issue 14). */
/** Back to before migration 28 (checkpoints' bytes kept apart in store_usage): the checkpoint triggers are migration 23's. */
export const UNDO_MIGRATION_28 = `DROP TRIGGER store_usage_checkpoint_insert;
DROP TRIGGER store_usage_checkpoint_delete;
CREATE TRIGGER store_usage_checkpoint_insert AFTER INSERT ON checkpoints BEGIN
  INSERT INTO store_usage (store_id, memories, bytes) VALUES (NEW.store_id, 0, NEW.size_bytes)
  ON CONFLICT (store_id) DO UPDATE SET bytes = bytes + excluded.bytes;
END;
CREATE TRIGGER store_usage_checkpoint_delete AFTER DELETE ON checkpoints BEGIN
  UPDATE store_usage SET bytes = bytes - OLD.size_bytes WHERE store_id = OLD.store_id;
END;
ALTER TABLE store_usage DROP COLUMN checkpoint_bytes;
`;

/** Back to before migration 27 (why a fork's build was deleted while it ran); migration 28 is undone first. */
export const UNDO_MIGRATION_27 = UNDO_MIGRATION_28 + `DROP TABLE fork_abandonments;
`;

/** Back to before migration 26 (at most one default workspace); migration 27 is undone first. */
export const UNDO_MIGRATION_26 = UNDO_MIGRATION_27 + `DROP INDEX workspaces_one_default;
`;

/** Back to before migration 25 (the database fills a version's missing times): the append-only trigger is migration 22's; migration 26 is undone first. */
export const UNDO_MIGRATION_25 = UNDO_MIGRATION_26 + `DROP TRIGGER versions_content_times;
DROP TRIGGER versions_append_only_update;
${VERSIONS_APPEND_ONLY_UPDATE_21}
`;

/** Back to before migration 24 (the page key); migration 25 is undone first. */
export const UNDO_MIGRATION_24 = UNDO_MIGRATION_25 + `DROP TABLE page_key;
`;

/** Back to before migration 23 (checkpoints counted in store_usage); migration 24 is undone first. */
export const UNDO_MIGRATION_23 = UNDO_MIGRATION_24 + `DROP TRIGGER store_usage_checkpoint_insert;
DROP TRIGGER store_usage_checkpoint_delete;
UPDATE store_usage SET bytes = bytes - coalesce((SELECT sum(size_bytes) FROM checkpoints c WHERE c.store_id = store_usage.store_id), 0);
`;

/** Back to before migration 22 (a version's content time and its memory's creation): the append-only trigger is migration 13's; migration 23 is undone first. */
export const UNDO_MIGRATION_22 = UNDO_MIGRATION_23 + `DROP TRIGGER versions_append_only_update;
ALTER TABLE versions DROP COLUMN content_at;
ALTER TABLE versions DROP COLUMN memory_created_at;
${VERSIONS_APPEND_ONLY_UPDATE_13}
`;

/** Back to before migration 21 (the API key that created a session); migration 22 is undone first. */
export const UNDO_MIGRATION_21 = UNDO_MIGRATION_22 + `DROP INDEX sessions_active_by_key;
ALTER TABLE sessions DROP COLUMN api_key_id;
`;

/** Back to before migration 20 (a deleted store's receipts found through their store); migration 21 is undone first. */
export const UNDO_MIGRATION_20 = UNDO_MIGRATION_21 + `DROP INDEX idempotency_receipts_by_store;
`;

/** Back to before migration 19 (the search index's remnants noted per store); migration 20 is undone first. */
export const UNDO_MIGRATION_19 = UNDO_MIGRATION_20 + `DROP TABLE search_remnants;
`;

/** Back to before migration 18 (deleted stores hidden, then removed in steps): the delete trigger is migration 9's; migration 19 is undone first. */
export const UNDO_MIGRATION_18 = UNDO_MIGRATION_19 + `DROP TRIGGER versions_append_only_delete;
${VERSIONS_APPEND_ONLY_DELETE_9}
DROP INDEX stores_deleted;
ALTER TABLE stores DROP COLUMN deleted_at;
`;

/** Back to before migration 17 (memory rows name their text by sha only, issue 15): the row holds its text again; migration 18 is undone first. */
export const UNDO_MIGRATION_17 = UNDO_MIGRATION_18 + `DROP TRIGGER search_backlog_update;
ALTER TABLE memories ADD COLUMN content TEXT NOT NULL DEFAULT '';
UPDATE memories SET content = (SELECT c.content FROM contents c WHERE c.sha256 = memories.content_sha256);
CREATE TRIGGER search_backlog_update AFTER UPDATE OF path, content ON memories BEGIN
  INSERT OR IGNORE INTO search_backlog (seq, indexed_version) VALUES (OLD.seq, OLD.version_id);
END;
`;

export const UNDO_MIGRATION_16 = UNDO_MIGRATION_17 + `DROP TABLE console_sessions;
`;

/** Back to before migration 15 (path number floors, issue 15); migration 16 is undone first. */
export const UNDO_MIGRATION_15 = UNDO_MIGRATION_16 + `DROP TABLE path_number_floors;
`;

/** Back to before migration 14 (forks, issue 15); migration 15 is undone first. */
export const UNDO_MIGRATION_14 = UNDO_MIGRATION_15 + `ALTER TABLE stores DROP COLUMN forked_from;
ALTER TABLE stores DROP COLUMN forking_since;
`;

/** Back to before migration 13 (content stored once, issue 15): each version holds its text again; migration 14 is undone first. */
export const UNDO_MIGRATION_13 = UNDO_MIGRATION_14 + `
DROP TRIGGER contents_release_on_delete;
DROP TRIGGER contents_release_on_redaction;
DROP TRIGGER contents_immutable;
DROP INDEX versions_by_content;
DROP TRIGGER versions_append_only_update;
ALTER TABLE versions ADD COLUMN content TEXT;
UPDATE versions SET content = (SELECT c.content FROM contents c WHERE c.sha256 = versions.content_sha256);
DROP TABLE contents;
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
`;

/** Back to before migration 12 (sessions' node ids, issue 14): migration 13 is undone first. */
export const UNDO_MIGRATION_12 = UNDO_MIGRATION_13 + `ALTER TABLE sessions DROP COLUMN node_id;
`;

export const UNDO_MIGRATION_11 = UNDO_MIGRATION_12 + `
DROP INDEX versions_by_path;
DROP INDEX versions_by_memory_time;
DROP TRIGGER versions_append_only_update;
ALTER TABLE versions DROP COLUMN path_seq;
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
`;

/** Back to before migration 10 (the admin-actions log, issue 16): migration 11 is undone first. */
export const UNDO_MIGRATION_10 = UNDO_MIGRATION_11 + `DROP TABLE admin_actions;
`;

/** Back to before migration 9 from today's schema (migrations 11 and 10 are undone first). */
export const UNDO_MIGRATION_9 = UNDO_MIGRATION_10 + `
DROP TRIGGER versions_commit_order;
DROP INDEX idempotency_receipts_by_version;
DROP TRIGGER checkpoint_version_refs_insert;
DROP TRIGGER checkpoint_version_refs_delete;
DROP TABLE checkpoint_version_refs;
DROP TRIGGER versions_append_only_delete;
DROP TABLE version_prunes;
ALTER TABLE stores DROP COLUMN retention;
CREATE TRIGGER versions_append_only_delete BEFORE DELETE ON versions
WHEN EXISTS (SELECT 1 FROM stores WHERE id = OLD.store_id)
BEGIN
  SELECT RAISE(ABORT, 'memory versions are append-only: only deleting the store removes them');
END;
DROP TRIGGER versions_append_only_update;
DROP INDEX versions_by_commit;
ALTER TABLE versions DROP COLUMN commit_seq;
ALTER TABLE stores DROP COLUMN commit_seq;
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
)
BEGIN
  SELECT RAISE(ABORT, 'memory versions are append-only: only redaction may change a version');
END;
`;

/** PostgreSQL back to before its migration 28 (checkpoints' bytes kept apart in store_usage): the checkpoint trigger's function is migration 24's. */
export const PG_UNDO_MIGRATION_28 = String.raw`CREATE OR REPLACE FUNCTION store_usage_follow_checkpoints() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO store_usage (store_id, memories, bytes) VALUES (NEW.store_id, 0, NEW.size_bytes)
    ON CONFLICT (store_id) DO UPDATE SET bytes = store_usage.bytes + excluded.bytes;
    RETURN NEW;
  END IF;
  UPDATE store_usage SET bytes = bytes - OLD.size_bytes WHERE store_id = OLD.store_id;
  RETURN OLD;
END $$;
ALTER TABLE store_usage DROP COLUMN checkpoint_bytes;
`;

/** PostgreSQL back to before its migration 27 (why a fork's build was deleted while it ran); 28 is undone first. */
export const PG_UNDO_MIGRATION_27 = PG_UNDO_MIGRATION_28 + `DROP TABLE fork_abandonments;
`;

/** PostgreSQL back to before its migration 26 (at most one default workspace); 27 is undone first. */
export const PG_UNDO_MIGRATION_26 = PG_UNDO_MIGRATION_27 + `DROP INDEX workspaces_one_default;
`;

/** PostgreSQL back to before its migration 25 (the page key); 26 is undone first. */
export const PG_UNDO_MIGRATION_25 = PG_UNDO_MIGRATION_26 + `DROP TABLE page_key;
`;

/** PostgreSQL back to before its migration 22 (the API key that created a session); 25 (the page key), 24 (checkpoints in store_usage) and 23 (a version's content time) are undone first. */
export const PG_UNDO_MIGRATION_22 = PG_UNDO_MIGRATION_25 + `DROP TRIGGER store_usage_checkpoint_insert ON checkpoints;
DROP TRIGGER store_usage_checkpoint_delete ON checkpoints;
DROP FUNCTION store_usage_follow_checkpoints();
UPDATE store_usage SET bytes = bytes - coalesce((SELECT sum(size_bytes) FROM checkpoints c WHERE c.store_id = store_usage.store_id), 0);
DROP TRIGGER versions_content_times ON versions;
DROP FUNCTION versions_content_times();
ALTER TABLE versions DROP COLUMN content_at, DROP COLUMN memory_created_at;
DROP INDEX sessions_active_by_key;
ALTER TABLE sessions DROP COLUMN api_key_id;
`;

/** PostgreSQL back to before its migration 14 (deleted stores hidden, then removed in steps): the delete trigger's function is migration 2's; 21 (receipts found through their store), 17 (the guarded create) and 16 (a move's numbers by the page) are undone first, 15 and 21 only replaced 14's function; 22 to 24 go first. */
const PG_UNDO_MIGRATION_14 = `${PG_UNDO_MIGRATION_22}
DROP INDEX idempotency_receipts_by_store;
DROP FUNCTION mnemo_create_guarded;
DROP FUNCTION mnemo_append_moves;
${PG_VERSIONS_COMMIT_ORDER_2}
DROP FUNCTION mnemo_purge_deleted_store();
${PG_VERSIONS_APPEND_ONLY_DELETE_2}
DROP INDEX stores_deleted;
ALTER TABLE stores DROP COLUMN deleted_at;
`;

/** PostgreSQL back to before its migration 5 (content stored once): each version holds its text again; 14 (deleted stores), 11 (the write probe with its admission), 10 (the write functions, the search backlog), 9 (memory text by sha), 8, 7 and 6 (forks) are undone first. */
export const PG_UNDO_MIGRATION_5 = PG_UNDO_MIGRATION_14 + `
DROP FUNCTION mnemo_write_probe;
DROP FUNCTION mnemo_append;
DROP FUNCTION mnemo_probe;
DROP INDEX memories_unindexed;
ALTER TABLE memories ADD COLUMN content text;
UPDATE memories SET content = (SELECT c.content FROM contents c WHERE c.sha256 = memories.content_sha256);
ALTER TABLE memories ALTER COLUMN content SET NOT NULL;
ALTER TABLE memories DROP COLUMN search;
ALTER TABLE memories ADD COLUMN search tsvector GENERATED ALWAYS AS (
  setweight(to_tsvector('simple'::regconfig, mnemo_words(path)), 'A') ||
  setweight(to_tsvector('simple'::regconfig, mnemo_words(content)), 'B')
) STORED;
CREATE INDEX memories_search ON memories USING gin (search);
CREATE INDEX memories_content_trgm ON memories USING gin (content gin_trgm_ops);
DROP FUNCTION mnemo_search(text, text);
DROP TABLE console_sessions;
DROP TABLE path_number_floors;
ALTER TABLE stores DROP COLUMN forked_from;
ALTER TABLE stores DROP COLUMN forking_since;
DROP TRIGGER contents_release_on_delete ON versions;
DROP TRIGGER contents_release_on_redaction ON versions;
DROP FUNCTION contents_release();
ALTER TABLE versions ADD COLUMN content text;
ALTER TABLE versions DISABLE TRIGGER versions_append_only_update;
UPDATE versions SET content = (SELECT c.content FROM contents c WHERE c.sha256 = versions.content_sha256);
ALTER TABLE versions ENABLE TRIGGER versions_append_only_update;
DROP TABLE contents;
DROP FUNCTION contents_immutable();
DROP INDEX versions_by_content;
UPDATE schema_version SET version = 4;
`;
