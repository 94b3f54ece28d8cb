/**
 * @module Retention in SQLite (schema invariant 16): prunes a store's old versions in bounded
 * batches. Each batch looks at a window of the store's versions in commit order (so a batch costs
 * the same in a store of any size) and prunes those every rule of the store lets go and nothing
 * holds: a live memory's head, a checkpoint's reference, an idempotency receipt, the search index
 * (a version whose words the index holds for a memory queued to be re-indexed: taking them out needs
 * its text; the upkeep re-indexes it, and a later sweep prunes it). A prune records
 * its tombstone first (it takes the store's next commit number: the change feed shows it), then
 * deletes the row; secure_delete zeroes the freed cells and, as after a redaction, a WAL checkpoint
 * after the commit takes the old page images off the disk.
 */
import { truncateWalSoon } from './wal-checkpointer.js';
import { createFloorKeep } from './path-floors.js';
import type { PruneWindow } from '../port.js';
import type { SearchIndex } from './search-index.js';
import { afterCommit, writeTx, type Db } from './tx.js';

/** The prune batch's statements (a test reads their plans). */
export const RETENTION_SQL = {
  // `keep` newer versions exist when the memory's keep-th newest is newer: found once per memory of
  // the window, `keep` steps of versions_by_memory from its newest. Counting every newer version for
  // each version of the window cost the window times the memory's history (6,000 versions: 1.1 s).
  candidates:
    `WITH w AS MATERIALIZED (SELECT id, store_id, memory_id, path, path_seq, created_at, seq, commit_seq FROM versions
          WHERE store_id = @store AND commit_seq > @after ORDER BY commit_seq LIMIT +@scan),
       floors AS MATERIALIZED (SELECT d.memory_id, (SELECT n.seq FROM versions n INDEXED BY versions_by_memory
            WHERE n.store_id = @store AND n.memory_id = d.memory_id ORDER BY n.seq DESC LIMIT 1 OFFSET +@keep - 1) AS floor
          FROM (SELECT DISTINCT memory_id FROM w WHERE @cutoff IS NULL OR created_at < @cutoff) AS d WHERE @keep IS NOT NULL)
     SELECT w.id, w.memory_id, w.path, w.path_seq, w.commit_seq FROM w LEFT JOIN floors f ON f.memory_id = w.memory_id
     WHERE (@cutoff IS NULL OR w.created_at < @cutoff)
       AND (@keep IS NULL OR w.seq < f.floor)
       AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = w.memory_id AND m.version_id = w.id)
       AND NOT EXISTS (SELECT 1 FROM checkpoint_version_refs r WHERE r.version_id = w.id)
       AND NOT EXISTS (SELECT 1 FROM idempotency_receipts r WHERE r.version_id = w.id)
       AND w.id NOT IN (SELECT indexed_version FROM search_backlog WHERE indexed_version IS NOT NULL)
     ORDER BY w.commit_seq LIMIT +@max`,
} as const;

export function createRetention(db: Db, index: SearchIndex) {
  const q = {
    stores: db.prepare("SELECT id, retention FROM stores WHERE retention IS NOT NULL AND archived_at IS NULL AND deleted_at IS NULL ORDER BY seq"),
    candidates: db.prepare(RETENTION_SQL.candidates),
    live: db.prepare('SELECT 1 FROM stores WHERE id = ? AND deleted_at IS NULL').pluck(),
    windowEnd: db.prepare(
      'SELECT max(commit_seq) FROM (SELECT commit_seq FROM versions WHERE store_id = ? AND commit_seq > ? ORDER BY commit_seq LIMIT +?)',
    ).pluck(),
    bump: db.prepare('UPDATE stores SET commit_seq = commit_seq + 1 WHERE id = ?'),
    tombstone: db.prepare(
      `INSERT INTO version_prunes (store_id, commit_seq, version_id, memory_id, pruned_at)
       VALUES (@store, (SELECT commit_seq FROM stores WHERE id = @store), @id, @memory, @now)`,
    ),
    remove: db.prepare('DELETE FROM versions WHERE id = ?'),
    // As after a redaction (sqlite/versions.ts): an expired memory's remembered path goes with the last version holding it.
    forgetExpiredPath: db.prepare(
      `UPDATE memory_expirations SET path = '' WHERE store_id = @store AND memory_id = @memory AND path = @path
         AND NOT EXISTS (SELECT 1 FROM versions WHERE store_id = @store AND memory_id = @memory AND path = @path)`,
    ),
  };

  const keepFloor = createFloorKeep(db);
  const prune = writeTx(db, (storeId: string, w: PruneWindow): { pruned: number; scannedTo: number | null } => {
    // A store deleted since the upkeep listed it has nothing left to prune: its rows are the purge's.
    if (q.live.get(storeId) === undefined) return { pruned: 0, scannedTo: null };
    // Before the deletes, which would move a window counted afterwards.
    const windowEnd = (q.windowEnd.get(storeId, w.after, w.scan) as number | null) ?? null;
    const rows = q.candidates.all({ store: storeId, after: w.after, scan: w.scan, cutoff: w.cutoff, keep: w.keepLast, max: w.max }) as {
      id: string; memory_id: string; path: string | null; path_seq: number | null; commit_seq: number;
    }[];
    for (const r of rows) {
      q.bump.run(storeId);
      q.tombstone.run({ store: storeId, id: r.id, memory: r.memory_id, now: w.now });
      q.remove.run(r.id);
      if (r.path !== null) q.forgetExpiredPath.run({ store: storeId, memory: r.memory_id, path: r.path });
      // The version goes, its number at its path stays taken (sqlite/schema/path-numbers.ts).
      if (r.path !== null && r.path_seq !== null) keepFloor(storeId, r.path, r.path_seq);
    }
    // Words of the pruned texts that an earlier re-indexing left in the index pages go too (service: eraseSearchRemnants).
    if (rows.length > 0) index.eraseDue(storeId);
    // A full batch stops at its last prune (more may follow in the window); otherwise the window was seen whole.
    const scannedTo = rows.length === w.max ? rows[rows.length - 1]!.commit_seq : windowEnd;
    return { pruned: rows.length, scannedTo };
  });

  return {
    storesWithRetention(): { id: string; retention: { maxAgeDays: number | null; keepLast: number | null } }[] {
      return (q.stores.all() as { id: string; retention: string }[]).map((r) => ({ id: r.id, retention: JSON.parse(r.retention) }));
    },
    pruneVersions(storeId: string, w: PruneWindow): { pruned: number; scannedTo: number | null } {
      const result = prune(storeId, w);
      if (result.pruned > 0) afterCommit(db, () => truncateWalSoon(db));
      return result;
    },
  };
}
