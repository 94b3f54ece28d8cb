/**
 * @module Content stored once (sqlite/schema/contents.ts): a version's text is read by its sha from
 * `contents`, and appending a version puts its text there unless the same bytes are already stored.
 */
import type { Db } from './tx.js';

/** A version's text, as a correlated subquery on a version row aliased `alias`: NULL once redacted. */
export function versionContent(alias: string, asBlob = false): string {
  const col = asBlob ? 'CAST(c.content AS BLOB)' : 'c.content';
  return `(SELECT ${col} FROM contents c WHERE c.sha256 = ${alias}.content_sha256)`;
}

/**
 * A memory's text, as a correlated subquery on a memory row aliased `alias` (schema/memory-text.ts):
 * the row names it by sha only, and its head version holds that `contents` row alive.
 */
export function textOf(alias: string, asBlob = false): string {
  return versionContent(alias, asBlob);
}

/** Returns `put(sha, content)`: stores the text once; call it in the write's transaction. */
export function createContentPut(db: Db): (sha: string, content: string) => void {
  // A unique-index probe when the text is already there (a rename, a revert, a fork): no write.
  const put = db.prepare('INSERT INTO contents (sha256, content) VALUES (?, ?) ON CONFLICT (sha256) DO NOTHING');
  return (sha, content) => {
    put.run(sha, content);
  };
}

/**
 * Unredacted versions `v` that hold `@sha` in the stores of `@store`'s workspace anyone can see (no
 * fork still being built, which nothing else shows either): the redaction's count, and its list.
 */
const HOLDERS = `FROM versions v JOIN stores s ON s.id = v.store_id
  WHERE v.content_sha256 = @sha AND s.deleted_at IS NULL AND s.forking_since IS NULL
    AND s.workspace_id = (SELECT workspace_id FROM stores WHERE id = @store)`;

/**
 * How many hold it (the redaction answer's `content_still_held_by`): it grows with them, so it is
 * read once the redaction has committed, on a reader thread with the list, never in the redaction's
 * write transaction.
 */
export const HELD_IN_WORKSPACE = `SELECT count(*) ${HOLDERS}`;

/**
 * The first `@limit` of them, newest first (the index on content_sha256 holds each sha's rows in seq
 * order), in the stores named by the JSON array `@only` (null: all), each with whether it is a live
 * memory's current version at `@now`. Read on a reader thread.
 */
export const HOLDERS_IN_WORKSPACE = `SELECT v.id, v.store_id, v.memory_id, v.path, v.created_at,
    EXISTS (SELECT 1 FROM memories m WHERE m.id = v.memory_id AND m.version_id = v.id AND (m.expires_at IS NULL OR m.expires_at > @now)) AS current
  ${HOLDERS} AND (@only IS NULL OR v.store_id IN (SELECT value FROM json_each(@only)))
  ORDER BY v.seq DESC LIMIT +@limit`;
