/**
 * @module PostgreSQL migration 24, SQLite's 23 (sqlite/schema/checkpoint-usage.ts): a store's
 * checkpoints count in `store_usage.bytes` with its memories (invariant 13), kept by triggers in
 * the write's transaction, so MNEMO_STORE_MAX_BYTES bounds both. A checkpoint insert or delete
 * holds the store's row lock (postgres/checkpoints.ts), as memory writes do, so the counter's row
 * is updated in the same order as theirs. Existing checkpoints are counted here.
 */
export const PG_MIGRATION_24 = String.raw`
INSERT INTO store_usage (store_id, memories, bytes)
  SELECT store_id, 0, sum(size_bytes) FROM checkpoints GROUP BY store_id
  ON CONFLICT (store_id) DO UPDATE SET bytes = store_usage.bytes + excluded.bytes;

CREATE FUNCTION store_usage_follow_checkpoints() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO store_usage (store_id, memories, bytes) VALUES (NEW.store_id, 0, NEW.size_bytes)
    ON CONFLICT (store_id) DO UPDATE SET bytes = store_usage.bytes + excluded.bytes;
    RETURN NEW;
  END IF;
  UPDATE store_usage SET bytes = bytes - OLD.size_bytes WHERE store_id = OLD.store_id;
  RETURN OLD;
END $$;
CREATE TRIGGER store_usage_checkpoint_insert AFTER INSERT ON checkpoints FOR EACH ROW EXECUTE FUNCTION store_usage_follow_checkpoints();
CREATE TRIGGER store_usage_checkpoint_delete AFTER DELETE ON checkpoints FOR EACH ROW EXECUTE FUNCTION store_usage_follow_checkpoints();
`;
