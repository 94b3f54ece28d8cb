/**
 * @module Bulk import for trusted, already-valid history (the bench's large store, migrations in):
 * one transaction per call, no per-write savepoints. It keeps invariants 1, 3, 4 and 5 (each row
 * is one real change, the memory row always matches its newest version) but trusts the caller on
 * invariant 2: paths are not checked for overlap with one another.
 */
import { byteLength, sha256Hex } from '../../domain/content.js';
import { notFound } from '../../domain/errors.js';
import { createVersionAppend } from './commit-order.js';
import { actorColumns } from '../common/rows.js';
import type { WriteStamp } from '../port.js';
import type { SearchIndex } from './search-index.js';
import type { Db } from './tx.js';

export interface ImportedWrite extends WriteStamp {
  memoryId: string;
  /** `created` inserts the memory (its path must be free); `modified` replaces its content. */
  operation: 'created' | 'modified';
  path: string;
  content: string;
}

export function createBulkImport(db: Db, index: SearchIndex): (storeId: string, writes: ImportedWrite[]) => void {
  const q = {
    store: db.prepare('SELECT 1 FROM stores WHERE id = ? AND archived_at IS NULL AND deleted_at IS NULL'),
    insert: db.prepare(
      `INSERT INTO memories (id, store_id, path, content_sha256, content_size_bytes, version_id, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    update: db.prepare(
      // Every imported write counts as new content: the kept mtime and ctime follow updated_at again.
      `UPDATE memories SET path = ?, content_sha256 = ?, content_size_bytes = ?, version_id = ?, updated_at = ?,
                           mtime_us = NULL, ctime_us = NULL
       WHERE id = ? AND store_id = ?`,
    ),
  };
  const insertVersion = createVersionAppend(db);
  const run = db.transaction((storeId: string, writes: ImportedWrite[]) => {
    if (!q.store.get(storeId)) throw notFound('memory store', storeId);
    // Each memory row is written once, with its newest state: the rows in between are never seen
    // outside this transaction, and every row write queues one more memory to index.
    const heads = new Map<string, { w: ImportedWrite; sha: string; size: number; created: boolean; createdAt: string }>();
    for (const w of writes) {
      const sha = sha256Hex(w.content);
      const size = byteLength(w.content);
      const a = actorColumns(w.actor);
      insertVersion({
        id: w.versionId, storeId, memoryId: w.memoryId, operation: w.operation, path: w.path,
        content: w.content, sha, size, createdAt: w.now, actorType: a.type, actorId: a.id,
      });
      const prev = heads.get(w.memoryId);
      const created = w.operation === 'created' || (prev?.created ?? false);
      heads.set(w.memoryId, { w, sha, size, created, createdAt: prev?.createdAt ?? w.now });
    }
    for (const { w, sha, size, created, createdAt } of heads.values()) {
      if (created) q.insert.run(w.memoryId, storeId, w.path, sha, size, w.versionId, createdAt, w.now);
      else if (q.update.run(w.path, sha, size, w.versionId, w.now, w.memoryId, storeId).changes !== 1) throw notFound('memory', w.memoryId);
    }
    // Indexed in the same transaction, where batching makes it cheap, rather than left queued for
    // the background upkeep (a 100,000-memory import would otherwise make the next search wait).
    index.indexQueued();
  });
  return (storeId, writes) => run.immediate(storeId, writes);
}
