/** @module PostgreSQL migration 8: web console sign-ins in the database, as SQLite's 16 (sqlite/schema/console.ts). */
export const PG_MIGRATION_8 = `
CREATE TABLE console_sessions (
  id_hash       text PRIMARY KEY,
  csrf          text NOT NULL,
  key_id        text NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
  key_hash      text NOT NULL,
  created_at    text NOT NULL,
  last_seen_at  text NOT NULL
);
CREATE INDEX console_sessions_by_last_seen ON console_sessions (last_seen_at);
`;
