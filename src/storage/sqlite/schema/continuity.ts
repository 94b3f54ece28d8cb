/**
 * @module Migration 3 (agent continuity): expiring memories, full-text search, checkpoints.
 *
 * Invariants (continuing sqlite/schema/migrations.ts):
 * 10. A memory whose `expires_at` is at or before now is gone for every reader (reads, lists,
 *     search, mounts); the next write to its store deletes it with a `deleted` version dated at
 *     its expiry and attributed to the writer of its last version, and records it in
 *     `memory_expirations` so a checkpoint reference can still tell "expired" from "deleted".
 * 11. `memories_fts` indexes exactly the current rows of `memories` (path and content): triggers
 *     keep it in step inside the same transaction as every write, and FTS5 secure-delete removes a
 *     deleted row's terms from the index itself. (Migration 5 replaces this one: sqlite/schema/search.ts.)
 * 12. A checkpoint bundle never changes after it is written. Revisions per (store, agent, session)
 *     only grow. `checkpoint_heads` names exactly one live checkpoint per (store, agent, session),
 *     the newest, which cannot be deleted; checkpoint ids are random and never reused.
 */
export const MIGRATION_3 = `
ALTER TABLE memories ADD COLUMN expires_at TEXT;
CREATE INDEX memories_expiring ON memories (store_id, expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE memory_expirations (
  store_id    TEXT NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  memory_id   TEXT NOT NULL,
  path        TEXT NOT NULL,
  expired_at  TEXT NOT NULL,
  PRIMARY KEY (store_id, memory_id)
);

CREATE VIRTUAL TABLE memories_fts USING fts5(
  path, content, content = 'memories', content_rowid = 'seq', tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO memories_fts (memories_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO memories_fts (memories_fts) VALUES ('rebuild');

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts (rowid, path, content) VALUES (NEW.seq, NEW.path, NEW.content);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
  INSERT INTO memories_fts (memories_fts, rowid, path, content) VALUES ('delete', OLD.seq, OLD.path, OLD.content);
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF path, content ON memories BEGIN
  INSERT INTO memories_fts (memories_fts, rowid, path, content) VALUES ('delete', OLD.seq, OLD.path, OLD.content);
  INSERT INTO memories_fts (rowid, path, content) VALUES (NEW.seq, NEW.path, NEW.content);
END;

CREATE TABLE checkpoints (
  seq           INTEGER PRIMARY KEY AUTOINCREMENT,
  id            TEXT NOT NULL UNIQUE,
  store_id      TEXT NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  agent_id      TEXT NOT NULL,
  session_id    TEXT NOT NULL,
  revision      INTEGER NOT NULL,
  bundle        TEXT NOT NULL,
  size_bytes    INTEGER NOT NULL,
  created_at    TEXT NOT NULL,
  actor_type    TEXT NOT NULL,
  actor_id      TEXT NOT NULL,
  UNIQUE (store_id, agent_id, session_id, revision)
);

CREATE TABLE checkpoint_heads (
  store_id       TEXT NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  agent_id       TEXT NOT NULL,
  session_id     TEXT NOT NULL,
  checkpoint_id  TEXT NOT NULL,
  revision       INTEGER NOT NULL,
  PRIMARY KEY (store_id, agent_id, session_id)
);

CREATE TRIGGER checkpoints_immutable BEFORE UPDATE ON checkpoints BEGIN
  SELECT RAISE(ABORT, 'checkpoints are immutable');
END;
`;
