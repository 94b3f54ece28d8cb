/**
 * @module Migration 28: the usage counter keeps its checkpoints' bytes apart too.
 *
 * Invariant 13 (sqlite/schema/limits.ts, checkpoint-usage.ts) grows: `store_usage.checkpoint_bytes`
 * is the sum of the store's checkpoints' `size_bytes`, kept by the same checkpoint triggers as
 * `bytes` (which still counts memories and checkpoints together, for MNEMO_STORE_MAX_BYTES). So the
 * memories' bytes alone, `bytes - checkpoint_bytes`, are one primary-key read too: the web console
 * shows them beside the store's size. Existing checkpoints are counted here.
 */
export const MIGRATION_28 = `
ALTER TABLE store_usage ADD COLUMN checkpoint_bytes INTEGER NOT NULL DEFAULT 0;
UPDATE store_usage SET checkpoint_bytes = coalesce((SELECT sum(size_bytes) FROM checkpoints c WHERE c.store_id = store_usage.store_id), 0);

DROP TRIGGER store_usage_checkpoint_insert;
DROP TRIGGER store_usage_checkpoint_delete;
CREATE TRIGGER store_usage_checkpoint_insert AFTER INSERT ON checkpoints BEGIN
  INSERT INTO store_usage (store_id, memories, bytes, checkpoint_bytes) VALUES (NEW.store_id, 0, NEW.size_bytes, NEW.size_bytes)
  ON CONFLICT (store_id) DO UPDATE SET bytes = bytes + excluded.bytes, checkpoint_bytes = checkpoint_bytes + excluded.checkpoint_bytes;
END;
CREATE TRIGGER store_usage_checkpoint_delete AFTER DELETE ON checkpoints BEGIN
  UPDATE store_usage SET bytes = bytes - OLD.size_bytes, checkpoint_bytes = checkpoint_bytes - OLD.size_bytes WHERE store_id = OLD.store_id;
END;
`;
