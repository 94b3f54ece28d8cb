/**
 * @module PostgreSQL migration 7: version numbers at a path are never reused, as SQLite's migration
 * 15 (sqlite/schema/path-numbers.ts): per store and SHA-256 of a path, the highest number a
 * redaction or prune took away; the next version there numbers above it (postgres/commit-order.ts).
 */
export const PG_MIGRATION_7 = String.raw`
CREATE TABLE path_number_floors (
  store_id   text NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  path_hash  text NOT NULL,
  last       bigint NOT NULL,
  PRIMARY KEY (store_id, path_hash)
);
`;
