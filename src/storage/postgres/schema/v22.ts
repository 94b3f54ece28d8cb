/**
 * @module PostgreSQL migration 22, SQLite's 21 (sqlite/schema/session-keys.ts): the API key that
 * created a session, and the active sessions of each key found through a partial index.
 */
export const PG_MIGRATION_22 = `
ALTER TABLE sessions ADD COLUMN api_key_id text;
CREATE INDEX sessions_active_by_key ON sessions (api_key_id) WHERE status = 'active' AND api_key_id IS NOT NULL;
`;
