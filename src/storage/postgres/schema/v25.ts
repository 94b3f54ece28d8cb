/**
 * @module PostgreSQL migration 25, SQLite's 24 (sqlite/schema/page-key.ts): the key that seals page
 * cursors, one row made here and never changed, read by every server at open so that each takes the
 * others' cursors. Its 32 bytes are two gen_random_uuid() (PostgreSQL's strong random source; 244
 * random bits) with no extension needed. An upgraded database (one with workspaces) takes unsealed
 * cursors for an hour more.
 */
export const PG_MIGRATION_25 = String.raw`
CREATE TABLE page_key (
  one           boolean PRIMARY KEY DEFAULT true CHECK (one),
  key           bytea NOT NULL CHECK (length(key) = 32),
  legacy_until  text
);
INSERT INTO page_key (one, key, legacy_until) VALUES (true,
  uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()),
  CASE WHEN EXISTS (SELECT 1 FROM workspaces) THEN to_char((now() + interval '1 hour') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') END);
`;
