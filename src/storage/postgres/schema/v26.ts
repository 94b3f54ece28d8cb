/**
 * @module PostgreSQL migration 26, SQLite's 26 (sqlite/schema/one-default.ts): at most one default
 * workspace, held by a partial unique index. Servers started at once on a fresh database, or an
 * admin command beside them, could each make one before; the oldest stays the default.
 */
export const PG_MIGRATION_26 = String.raw`
UPDATE workspaces SET is_default = false
WHERE is_default
  AND id <> (SELECT id FROM workspaces WHERE is_default ORDER BY created_at, id LIMIT 1);
CREATE UNIQUE INDEX workspaces_one_default ON workspaces (is_default) WHERE is_default;
`;
