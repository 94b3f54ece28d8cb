/**
 * @module Migration 27: why a fork's build was deleted while it ran (service/forks.ts). Its hidden
 * store is deleted by a redaction of a version it copies (sqlite/versions.ts) or by the sweep of
 * forks a crash cut short (sqlite/forks.ts); the fork request builds it again after a redaction
 * and fails at once after the sweep, and its 409 names the cause. The row is written in the
 * deletion's transaction and names the store by id with no foreign key, so it outlives the store's
 * row, which the purge of deleted stores may remove before the build's next batch looks. The build
 * forgets it when it gives up the store (`abandonFork`); the sweep forgets any an hour old (a build
 * whose process died never reads its own).
 */
export const MIGRATION_27 = `
CREATE TABLE fork_abandonments (
  store_id      TEXT PRIMARY KEY,
  cause         TEXT NOT NULL CHECK (cause IN ('redaction', 'sweep')),
  abandoned_at  TEXT NOT NULL
) WITHOUT ROWID;
`;
