/**
 * @module The one place the PostgreSQL adapter appends a version row (memory writes, the expiry
 * purge): it takes the store's next commit number in the write's own transaction (invariant 14,
 * postgres/schema/v2.ts). The UPDATE's row lock is held to the commit, so writers of one store, on
 * any host, commit in the order of their numbers; a rollback gives the number back. The same lock
 * serialises taking `path_seq`, the version's number at its path (postgres/schema/v4.ts).
 */
import type { VersionRowInput } from '../common/version-rows.js';
import { putContent } from './contents.js';
import { pathHash } from './path-floors.js';
import { first, run, type Q } from './db.js';
import { noticeOfCommit } from './notify.js';

/** Call it inside a write transaction (the store row is locked by then or by this statement). */
export async function appendVersionRow(q: Q, r: VersionRowInput): Promise<void> {
  // The cross-host wake-up rides on the same statement (notify.ts): delivered only if this commits.
  const notice = noticeOfCommit(q, r.storeId, 2);
  const s = await first<{ commit_seq: number }>(q, `UPDATE stores SET commit_seq = commit_seq + 1 WHERE id = $1 RETURNING commit_seq${notice.sql}`, [r.storeId, ...notice.params]);
  // The text is stored once, by its sha (postgres/schema/v5.ts); the version row names it.
  if (r.content !== null && r.sha !== null) await putContent(q, r.sha, r.content);
  await run(
    q,
    `INSERT INTO versions (id, store_id, memory_id, operation, path, content_sha256, content_size_bytes, created_at, actor_type, actor_id, commit_seq, path_seq)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
             greatest((SELECT coalesce(max(path_seq), 0) FROM versions WHERE store_id = $2 AND path = $5),
                      coalesce((SELECT last FROM path_number_floors WHERE store_id = $2 AND path_hash = $12), 0)) + 1)`,
    [r.id, r.storeId, r.memoryId, r.operation, r.path, r.sha, r.size, r.createdAt, r.actorType, r.actorId, s?.commit_seq ?? null, pathHash(r.path)],
  );
}
