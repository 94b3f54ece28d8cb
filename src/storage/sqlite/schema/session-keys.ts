/**
 * @module Migration 21: the API key that created a session. Revoking a key ends the active sessions
 * it created (service/sessions.ts `endSessionsOfKey`), found through a partial index that holds only
 * active sessions made by a key. NULL: a session of `mnemo mount`, or one from before this migration.
 */
export const MIGRATION_21 = `
ALTER TABLE sessions ADD COLUMN api_key_id TEXT;
CREATE INDEX sessions_active_by_key ON sessions (api_key_id) WHERE status = 'active' AND api_key_id IS NOT NULL;
`;
