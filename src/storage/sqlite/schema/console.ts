/**
 * @module Migration 16 (issue 14): web console sign-ins in the database, so a restart or another
 * server behind the same balancer keeps them (they were in one process's memory). Keyed by the
 * hash of the cookie value; a session goes with its key (ON DELETE CASCADE; revoking is checked on
 * every request against api_keys anyway).
 */
export const MIGRATION_16 = `
CREATE TABLE console_sessions (
  id_hash       TEXT PRIMARY KEY,
  csrf          TEXT NOT NULL,
  key_id        TEXT NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
  key_hash      TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  last_seen_at  TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX console_sessions_by_last_seen ON console_sessions (last_seen_at);
`;
