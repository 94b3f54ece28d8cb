/**
 * @module Migration 22: a store's checkpoints count against its byte limit with its memories.
 *
 * Invariant 13 (sqlite/schema/limits.ts) grows: `store_usage.bytes` is the sum of the store's
 * current memories' `content_size_bytes` and of its checkpoints' `size_bytes`, kept by triggers in
 * the write's transaction, so MNEMO_STORE_MAX_BYTES bounds both with one indexed read: a checkpoint
 * that would pass it is refused (service/limits.ts), a memory write sees the room checkpoints took,
 * and deleting a checkpoint gives its bytes back. `memories` still counts memory rows only.
 * Existing checkpoints are counted here.
 */
export const MIGRATION_23 = `
INSERT INTO store_usage (store_id, memories, bytes)
  SELECT store_id, 0, sum(size_bytes) FROM checkpoints WHERE true GROUP BY store_id
  ON CONFLICT (store_id) DO UPDATE SET bytes = bytes + excluded.bytes;

CREATE TRIGGER store_usage_checkpoint_insert AFTER INSERT ON checkpoints BEGIN
  INSERT INTO store_usage (store_id, memories, bytes) VALUES (NEW.store_id, 0, NEW.size_bytes)
  ON CONFLICT (store_id) DO UPDATE SET bytes = bytes + excluded.bytes;
END;
CREATE TRIGGER store_usage_checkpoint_delete AFTER DELETE ON checkpoints BEGIN
  UPDATE store_usage SET bytes = bytes - OLD.size_bytes WHERE store_id = OLD.store_id;
END;
`;
