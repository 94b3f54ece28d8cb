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
    // The content's time and the memory's creation (invariant 20, sqlite/schema/content-times.ts)
    // come from the memory's previous version, one seek of versions_by_memory_time: a rename that
    // keeps the text keeps its time.
    insert: db.prepare(
      `INSERT INTO versions (id, store_id, memory_id, operation, path, content_sha256, content_size_bytes,
                             created_at, actor_type, actor_id, commit_seq, path_seq, content_at, memory_created_at)
       SELECT @id, @store, @memory, @operation, @path, @sha, @size, @at, @actorType, @actorId, (SELECT commit_seq FROM stores WHERE id = @store),
              max((SELECT coalesce(max(path_seq), 0) FROM versions WHERE store_id = @store AND path = @path),
                  coalesce((SELECT last FROM path_number_floors WHERE store_id = @store AND path_hash = @pathHash), 0)) + 1,
              CASE WHEN @operation = 'modified' AND p.content_sha256 IS @sha THEN coalesce(p.content_at, @at) ELSE @at END,
              coalesce(p.memory_created_at, @at)
       FROM (SELECT 1) LEFT JOIN (SELECT content_sha256, content_at, memory_created_at FROM versions INDEXED BY versions_by_memory_time
                                  WHERE store_id = @store AND memory_id = @memory ORDER BY created_at DESC, seq DESC LIMIT 1) AS p`,
    ),
  };
  const putContent = createContentPut(db);
  return (r) => {
    q.bump.run(r.storeId);
    // The text is stored once, by its sha (sqlite/schema/contents.ts); the version row names it.
    if (r.content !== null && r.sha !== null) putContent(r.sha, r.content);
    q.insert.run({
      id: r.id, store: r.storeId, memory: r.memoryId, operation: r.operation, path: r.path, sha: r.sha, size: r.size, at: r.createdAt,
      actorType: r.actorType, actorId: r.actorId, pathHash: pathHash(r.path),
    });
  };
}
