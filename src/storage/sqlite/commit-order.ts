/**
 * @module The one place a version row is appended (memory writes, the expiry purge, the bulk
 * import): each takes its store's next commit number in the write's own transaction (schema
 * invariant 15, sqlite/schema/feed.ts). A PostgreSQL adapter does the same with
 * `UPDATE stores SET commit_seq = commit_seq + 1 WHERE id = $1 RETURNING commit_seq`, whose row
 * lock orders concurrent writers of one store by commit. Each version also takes its number at its
 * path (`path_seq`, sqlite/schema/history.ts) from the same transaction.
 */
import type { VersionRowInput } from '../common/version-rows.js';
import { createContentPut } from './contents.js';
import { pathHash } from './path-floors.js';
import type { Db } from './tx.js';

/** Returns `append(row)`; call it inside a write transaction. */
export function createVersionAppend(db: Db): (row: VersionRowInput) => void {
  const q = {
    // Two statements rather than UPDATE … RETURNING: the write counter (sqlite/changes.ts) counts
    // only statements that return no rows.
    bump: db.prepare('UPDATE stores SET commit_seq = commit_seq + 1 WHERE id = ?'),
    insert: db.prepare(
      `INSERT INTO versions (id, store_id, memory_id, operation, path, content_sha256, content_size_bytes,
                             created_at, actor_type, actor_id, commit_seq, path_seq)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT commit_seq FROM stores WHERE id = ?),
               max((SELECT coalesce(max(path_seq), 0) FROM versions WHERE store_id = ? AND path = ?),
                   coalesce((SELECT last FROM path_number_floors WHERE store_id = ? AND path_hash = ?), 0)) + 1)`,
    ),
  };
  const putContent = createContentPut(db);
  return (r) => {
    q.bump.run(r.storeId);
    // The text is stored once, by its sha (sqlite/schema/contents.ts); the version row names it.
    if (r.content !== null && r.sha !== null) putContent(r.sha, r.content);
    q.insert.run(r.id, r.storeId, r.memoryId, r.operation, r.path, r.sha, r.size, r.createdAt, r.actorType, r.actorId, r.storeId, r.storeId, r.path, r.storeId, pathHash(r.path));
  };
}
