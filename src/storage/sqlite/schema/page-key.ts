/**
 * @module Migration 24: the key that seals page cursors (domain/page-scope.ts).
 *
 * Invariant 21: `page_key` holds exactly one row, made here and never changed: 32 random bytes
 * (SQLite's randomblob, a CSPRNG seeded from the OS) that every process opening the file reads at
 * open, so a cursor one issued pages on in another and after a restart. A database that had
 * workspaces when it migrated (an upgrade) still takes unsealed cursors until `legacy_until`, an
 * hour on: clients paging across the upgrade hold them. A new database never does.
 */
export const MIGRATION_24 = `
CREATE TABLE page_key (
  one           INTEGER PRIMARY KEY CHECK (one = 1),
  key           BLOB NOT NULL CHECK (length(key) = 32),
  legacy_until  TEXT
);
INSERT INTO page_key (one, key, legacy_until) VALUES (1, randomblob(32),
  CASE WHEN EXISTS (SELECT 1 FROM workspaces) THEN strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+1 hour') END);
`;
