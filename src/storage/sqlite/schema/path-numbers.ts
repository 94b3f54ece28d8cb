/**
 * @module Migration 15 (issue 15): version numbers at a path are never reused. A version's number
 * at its path (`path_seq`, sqlite/schema/history.ts) is one more than the highest number of the
 * versions still at that path; redaction erases a version's path and a prune deletes the row, so
 * once a path's newest versions were all redacted (or pruned) the next version there took their
 * number again. `path_number_floors` keeps, per store and path, the highest number a redaction or
 * prune took away, and the next number is above it too (sqlite/commit-order.ts).
 *
 * Keyed by the SHA-256 of the path, never the path: a redacted path must leave the database (a
 * hash still confirms a guessed path; README, "History"). Floors for versions redacted before this
 * migration cannot be known (their paths are gone): those paths may still reuse a number once.
 */
export const MIGRATION_15 = `
CREATE TABLE path_number_floors (
  store_id   TEXT NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  path_hash  TEXT NOT NULL,
  last       INTEGER NOT NULL,
  PRIMARY KEY (store_id, path_hash)
) WITHOUT ROWID;
`;
