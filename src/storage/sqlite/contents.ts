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

/** Unredacted versions in `storeId`'s workspace that hold `sha` (the redaction response's count). */
export const HELD_IN_WORKSPACE = `SELECT count(*) FROM versions v JOIN stores s ON s.id = v.store_id
  WHERE v.content_sha256 = @sha AND s.deleted_at IS NULL AND s.workspace_id = (SELECT workspace_id FROM stores WHERE id = @store)`;
