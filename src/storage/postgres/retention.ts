/**
 * @module Retention in PostgreSQL (invariant 15): one bounded prune batch per call, as in SQLite
 * (sqlite/retention.ts). The batch locks the store row first, so it is ordered with the store's
 * writes and with another server's batch on the same store (which then finds nothing left to
 * prune in the window). Each prune records its tombstone (with the store's next commit number)
 * before deleting the row, which the delete trigger requires. PostgreSQL has no secure delete: the
 * pruned bytes stay in freed pages and WAL until reused (README, "PostgreSQL").
 */
import { keepFloor } from './path-floors.js';
import type { Retention } from '../../domain/types.js';
import type { PruneWindow } from '../port.js';
import { all, first, run, type Q } from './db.js';

export const retentionReads = {
  async storesWithRetention(q: Q): Promise<{ id: string; retention: Retention }[]> {
    const rows = await all<{ id: string; retention: string }>(q, 'SELECT id, retention FROM stores WHERE retention IS NOT NULL AND archived_at IS NULL AND deleted_at IS NULL ORDER BY seq');
    return rows.map((r) => ({ id: r.id, retention: JSON.parse(r.retention) as Retention }));
  },
};

export const retentionWrites = {
  async pruneVersions(q: Q, storeId: string, w: PruneWindow): Promise<{ pruned: number; scannedTo: number | null }> {
    // A store deleted since the upkeep listed it has nothing left to prune: its rows are the purge's.
    if (!(await first(q, 'SELECT 1 FROM stores WHERE id = $1 AND deleted_at IS NULL FOR NO KEY UPDATE', [storeId]))) return { pruned: 0, scannedTo: null };
    // Before the deletes, which would move a window counted afterwards.
    const end = await first<{ end: number | null }>(
      q,
      'SELECT max(commit_seq) AS end FROM (SELECT commit_seq FROM versions WHERE store_id = $1 AND commit_seq > $2 ORDER BY commit_seq LIMIT $3) w',
      [storeId, w.after, w.scan],
    );
    const rows = await all<{ id: string; memory_id: string; path: string | null; path_seq: number | null; commit_seq: number }>(
      q,
      // `keep` newer versions exist when the memory's keep-th newest is newer (as sqlite/retention.ts): found
      // once per memory of the window, `keep` steps of versions_by_memory, where counting every newer
      // version for each version of the window cost the window times the memory's history. By seq: a
      // memory's versions take their numbers in the order of their rows (both under the store's row lock).
      `WITH w AS MATERIALIZED (SELECT id, store_id, memory_id, path, path_seq, created_at, seq, commit_seq FROM versions
            WHERE store_id = $1 AND commit_seq > $2 ORDER BY commit_seq LIMIT $3),
         floors AS MATERIALIZED (SELECT d.memory_id, (SELECT n.seq FROM versions n
              WHERE n.store_id = $1 AND n.memory_id = d.memory_id ORDER BY n.seq DESC LIMIT 1 OFFSET $5::bigint - 1) AS floor
            FROM (SELECT DISTINCT memory_id FROM w WHERE $4::text IS NULL OR created_at < $4) AS d WHERE $5::bigint IS NOT NULL)
       SELECT w.id, w.memory_id, w.path, w.path_seq, w.commit_seq FROM w LEFT JOIN floors f ON f.memory_id = w.memory_id
       WHERE ($4::text IS NULL OR w.created_at < $4)
         AND ($5::bigint IS NULL OR w.seq < f.floor)
         AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = w.memory_id AND m.version_id = w.id)
         AND NOT EXISTS (SELECT 1 FROM checkpoint_version_refs r WHERE r.version_id = w.id)
         AND NOT EXISTS (SELECT 1 FROM idempotency_receipts r WHERE r.store_id = w.store_id AND r.version_id = w.id)
       ORDER BY w.commit_seq LIMIT $6`,
      [storeId, w.after, w.scan, w.cutoff, w.keepLast, w.max],
    );
    // The texts these deletes may release, locked in one order (as the purge's: postgres/schema/v15.ts),
    // before the release trigger locks each as its version goes: two servers pruning stores that
    // share texts then wait for each other instead of deadlocking.
    if (rows.length > 1) {
      await run(q, 'SELECT 1 FROM contents WHERE sha256 IN (SELECT content_sha256 FROM versions WHERE id = ANY($1::text[])) ORDER BY sha256 FOR UPDATE', [
        rows.map((r) => r.id),
      ]);
    }
    for (const r of rows) {
      const s = await first<{ commit_seq: number }>(q, 'UPDATE stores SET commit_seq = commit_seq + 1 WHERE id = $1 RETURNING commit_seq', [storeId]);
      await run(q, 'INSERT INTO version_prunes (store_id, commit_seq, version_id, memory_id, pruned_at) VALUES ($1, $2, $3, $4, $5)', [
        storeId, s!.commit_seq, r.id, r.memory_id, w.now,
      ]);
      await run(q, 'DELETE FROM versions WHERE id = $1', [r.id]);
      // The version goes, its number at its path stays taken (postgres/schema/v7.ts).
      if (r.path !== null && r.path_seq !== null) await keepFloor(q, storeId, r.path, Number(r.path_seq));
      // As after a redaction: an expired memory's remembered path goes with the last version holding it.
      if (r.path !== null) {
        await run(
          q,
          `UPDATE memory_expirations SET path = '' WHERE store_id = $1 AND memory_id = $2 AND path = $3
             AND NOT EXISTS (SELECT 1 FROM versions WHERE store_id = $1 AND memory_id = $2 AND path = $3)`,
          [storeId, r.memory_id, r.path],
        );
      }
    }
    // A full batch stops at its last prune (more may follow in the window); otherwise the window was seen whole.
    const scannedTo = rows.length === w.max ? rows[rows.length - 1]!.commit_seq : (end?.end ?? null);
    return { pruned: rows.length, scannedTo };
  },
};
