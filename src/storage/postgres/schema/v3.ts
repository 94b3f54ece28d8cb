/** @module PostgreSQL migration 3: the node a session is mounted on, as SQLite's 12 (sqlite/schema/nodes.ts). */
export const PG_MIGRATION_3 = `ALTER TABLE sessions ADD COLUMN node_id text;`;
