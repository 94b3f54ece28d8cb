/**
 * @module Migration 10 (issue 16): the log of admin actions.
 *
 * Invariant 17: an admin_actions row is written in the same transaction as the action it records
 * and is never updated or deleted (a trigger refuses both). It names its store without a foreign
 * key, so deleting a store keeps the entry that says who deleted it.
 */
export const MIGRATION_10 = `
CREATE TABLE admin_actions (
  seq           INTEGER PRIMARY KEY AUTOINCREMENT,
  id            TEXT NOT NULL UNIQUE,
  workspace_id  TEXT NOT NULL,
  action        TEXT NOT NULL,
  actor_type    TEXT NOT NULL,
  actor_id      TEXT NOT NULL,
  target_id     TEXT NOT NULL,
  store_id      TEXT,
  summary       TEXT NOT NULL,
  created_at    TEXT NOT NULL
);
CREATE INDEX admin_actions_by_workspace ON admin_actions (workspace_id, seq);
CREATE TRIGGER admin_actions_append_only_update BEFORE UPDATE ON admin_actions
BEGIN SELECT RAISE(ABORT, 'admin_actions rows are append-only'); END;
CREATE TRIGGER admin_actions_append_only_delete BEFORE DELETE ON admin_actions
BEGIN SELECT RAISE(ABORT, 'admin_actions rows are append-only'); END;
`;
