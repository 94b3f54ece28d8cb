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

/**
 * Unredacted versions `v` that hold sha `$1` in the stores of `$2`'s workspace anyone can see (no
 * fork still being built, which nothing else shows either): the redaction's count, and its list.
 */
const HOLDERS = `FROM versions v JOIN stores s ON s.id = v.store_id
  WHERE v.content_sha256 = $1 AND s.deleted_at IS NULL AND s.forking_since IS NULL
    AND s.workspace_id = (SELECT workspace_id FROM stores WHERE id = $2)`;

/**
 * In one statement (one snapshot): how many hold it (`count`, the redaction answer's
 * `content_still_held_by`) on every row, and the first `$5` of them, newest first, in the stores `$4`
 * names (null: all), each with whether it is a live memory's current version at `$3`; one row of
 * nulls but the count when none is listed. It grows with them: read once the redaction has
 * committed, on the pool, never in the redaction's transaction.
 */
export const HOLDERS_IN_WORKSPACE = `SELECT held.count, l.id, l.store_id, l.memory_id, l.path, l.created_at, l.current
  FROM (SELECT count(*)::int AS count ${HOLDERS}) held
  LEFT JOIN (
    SELECT v.seq, v.id, v.store_id, v.memory_id, v.path, v.created_at,
      EXISTS (SELECT 1 FROM memories m WHERE m.id = v.memory_id AND m.version_id = v.id AND (m.expires_at IS NULL OR m.expires_at > $3)) AS current
    ${HOLDERS} AND ($4::text[] IS NULL OR v.store_id = ANY($4::text[]))
    ORDER BY v.seq DESC LIMIT $5
  ) l ON true
  ORDER BY l.seq DESC`;
