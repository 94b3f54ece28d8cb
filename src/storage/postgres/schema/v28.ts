/**
 * @module PostgreSQL migration 28, SQLite's 28 (sqlite/schema/checkpoint-bytes.ts): `store_usage`
 * keeps its checkpoints' bytes apart too (`checkpoint_bytes`, invariant 13), by the same trigger
 * as `bytes`, so the memories' bytes alone (`bytes - checkpoint_bytes`) are one primary-key read.
 * Existing checkpoints are counted here.
 */
export const PG_MIGRATION_28 = String.raw`
ALTER TABLE store_usage ADD COLUMN checkpoint_bytes bigint NOT NULL DEFAULT 0;
UPDATE store_usage u SET checkpoint_bytes = c.bytes
  FROM (SELECT store_id, sum(size_bytes) AS bytes FROM checkpoints GROUP BY store_id) c
  WHERE c.store_id = u.store_id;

CREATE OR REPLACE FUNCTION store_usage_follow_checkpoints() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO store_usage (store_id, memories, bytes, checkpoint_bytes) VALUES (NEW.store_id, 0, NEW.size_bytes, NEW.size_bytes)
    ON CONFLICT (store_id) DO UPDATE SET bytes = store_usage.bytes + excluded.bytes, checkpoint_bytes = store_usage.checkpoint_bytes + excluded.checkpoint_bytes;
    RETURN NEW;
  END IF;
  UPDATE store_usage SET bytes = bytes - OLD.size_bytes, checkpoint_bytes = checkpoint_bytes - OLD.size_bytes WHERE store_id = OLD.store_id;
  RETURN OLD;
END $$;
`;
