/**
 * @module Content stored once on PostgreSQL (postgres/schema/v5.ts): a version's text is read by
 * its sha from `contents`, and appending a version puts its text there unless it is stored already.
 */
import { run, type Q } from './db.js';

/** A version's text, as a correlated subquery on a version row aliased `alias`: NULL once redacted. */
export function versionContent(alias: string, asBytes = false): string {
  const col = asBytes ? "convert_to(c.content, 'UTF8')" : 'c.content';
  return `(SELECT ${col} FROM contents c WHERE c.sha256 = ${alias}.content_sha256)`;
}

/**
 * Stores the text once; call it in the write's transaction. On a conflict the existing row is
 * locked, not written (`WHERE false`): a concurrent release of that text waits for this commit and
 * then sees the new holder (postgres/schema/v5.ts).
 */
export async function putContent(q: Q, sha: string, content: string): Promise<void> {
  await run(
    q,
    'INSERT INTO contents (sha256, content) VALUES ($1, $2) ON CONFLICT (sha256) DO UPDATE SET sha256 = excluded.sha256 WHERE false',
    [sha, content],
  );
}

/** Unredacted versions in `$2`'s workspace that hold sha `$1` (the redaction response's count). */
export const HELD_IN_WORKSPACE = `SELECT count(*)::int AS n FROM versions v JOIN stores s ON s.id = v.store_id
  WHERE v.content_sha256 = $1 AND s.deleted_at IS NULL AND s.workspace_id = (SELECT workspace_id FROM stores WHERE id = $2)`;
