/**
 * @module Migration 6: what store limits are checked against, kept O(1) to read.
 *
 * Invariant 13: for every store with memories, `store_usage` holds how many current memory rows it
 * has and the sum of their `content_size_bytes`. Triggers keep it in the same transaction as the
 * change (every path that adds, resizes or removes a memory row, the bulk import and the expiry
 * sweep included), so a limit check is one primary-key lookup instead of an aggregate over the
 * store (a COUNT over 100,000 memories was milliseconds per write). Deleting a store drops its row.
 *
 * Active sessions per workspace are counted through a partial index that holds only active ones,
 * so the count grows with the active sessions, not with every session the workspace ever had.
 */
export const MIGRATION_6 = `
CREATE TABLE store_usage (
  store_id  TEXT PRIMARY KEY REFERENCES stores(id) ON DELETE CASCADE,
  memories  INTEGER NOT NULL,
  bytes     INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO store_usage (store_id, memories, bytes)
  SELECT store_id, count(*), sum(content_size_bytes) FROM memories GROUP BY store_id;

CREATE TRIGGER store_usage_insert AFTER INSERT ON memories BEGIN
  INSERT INTO store_usage (store_id, memories, bytes) VALUES (NEW.store_id, 1, NEW.content_size_bytes)
  ON CONFLICT (store_id) DO UPDATE SET memories = memories + 1, bytes = bytes + excluded.bytes;
END;
CREATE TRIGGER store_usage_delete AFTER DELETE ON memories BEGIN
  UPDATE store_usage SET memories = memories - 1, bytes = bytes - OLD.content_size_bytes WHERE store_id = OLD.store_id;
END;
CREATE TRIGGER store_usage_resize AFTER UPDATE OF content_size_bytes ON memories
WHEN NEW.content_size_bytes <> OLD.content_size_bytes BEGIN
  UPDATE store_usage SET bytes = bytes + NEW.content_size_bytes - OLD.content_size_bytes WHERE store_id = NEW.store_id;
END;

CREATE INDEX sessions_active_by_workspace ON sessions (workspace_id) WHERE status = 'active';
`;
