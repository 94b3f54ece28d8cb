/**
 * @module Removing deleted stores' rows in steps (sqlite/schema/deleted-stores.ts): the request only
 * hid the store; each step here is one short transaction, so the serving thread is never held for
 * longer than a search-index turn however big the store was.
 */
import type { SearchIndex } from './search-index.js';
import { truncateWalSoon } from './wal-checkpointer.js';
import { TURN_BATCH } from './search-index.js';
import type { Db } from './tx.js';

/**
 * Rows deleted per step, per table: a memory's delete queues its text's removal from the index
 * (about 0.6 ms of secure-delete for 4 KiB, done by the indexer in its own turns), so memories go in
 * small slices; a version's delete frees its text's row too when no other version holds it (with
 * secure_delete, its pages are zeroed: 200 versions of 4 KiB took 15 ms), and so may a checkpoint's
 * bundle, so those go 50 at a time; the other rows are small.
 */
export const PURGE_MEMORIES = 100;

/**
 * A deleted store's rows, in the order they may go: its idempotency receipts first (none is found
 * once the store is deleted, and they may hold its text), then memories (their deletes queue the
 * index's removals, which read the versions' text), versions only once that queue is empty, then
 * what named them (a checkpoint's latest pointer before the checkpoint). Each slice is found through
 * an index led by store_id (`key`: the rowid, or the primary key of a table without one). What is
 * left (the usage row) goes with the store's row.
 */
const SLICES: readonly { table: string; key: string; size: number }[] = [
  // A receipt's body may hold a memory's text (zeroed as it goes, with secure_delete): as few at a time as versions.
  { table: 'idempotency_receipts', key: 'rowid', size: 50 },
  { table: 'memory_expirations', key: 'store_id, memory_id', size: 500 },
  { table: 'memories', key: 'rowid', size: PURGE_MEMORIES },
  { table: 'checkpoint_heads', key: 'rowid', size: 500 },
  { table: 'checkpoints', key: 'rowid', size: 50 },
  { table: 'versions', key: 'rowid', size: 50 },
  { table: 'version_prunes', key: 'store_id, commit_seq', size: 500 },
  { table: 'path_number_floors', key: 'store_id, path_hash', size: 500 },
];

export interface StorePurge {
  /**
   * One step: a turn of the search index if anything is queued, else a slice of the oldest deleted
   * store's rows (or its last row). Returns whether another step should follow at once: false when
   * none remain, and while `wait` says to let the WAL's checkpoints catch up (the upkeep's next tick goes on).
   */
  purgeDeletedStores(): boolean;
  /** Whether a step would do anything now: rows of a deleted store remain, and `wait` lets it (which counts the pass it went by). */
  purgeDue(): boolean;
}

/**
 * `relaxed` as the index's: a step lost to a power failure is redone, since the store stays hidden until its last.
 * `wait`: true while the steps should pause (wal-checkpointer.ts `waitForPasses`): a removal commits every turn
 * of the event loop, so without a pause the WAL never starts over and reaches the serving connection's
 * backstop checkpoint, which then runs inside the steps' commits.
 */
export function createStorePurge(db: Db, index: SearchIndex, relaxed: <T>(fn: () => T) => T, wait: () => boolean = () => false): StorePurge {
  const q = {
    next: db.prepare('SELECT id FROM stores WHERE deleted_at IS NOT NULL ORDER BY seq LIMIT 1').pluck(),
    slices: SLICES.map(({ table, key, size }) =>
      db.prepare(`DELETE FROM ${table} WHERE (${key}) IN (SELECT ${key} FROM ${table} WHERE store_id = ? LIMIT ${size})`)),
    store: db.prepare('DELETE FROM stores WHERE id = ? AND deleted_at IS NOT NULL'),
  };

  /** One slice; true when it was the last (the store's row went). */
  const slice = db.transaction((storeId: string): boolean => {
    for (const del of q.slices) if (del.run(storeId).changes > 0) return false;
    q.store.run(storeId);
    // Its memories left the index without secure-delete (noted in search_remnants): their words,
    // a redacted text's among them (a fork build a redaction abandoned), go in a merge of the index.
    index.eraseDue(storeId);
    return true;
  });

  return {
    purgeDeletedStores(): boolean {
      const storeId = q.next.get() as string | undefined;
      if (storeId === undefined || wait()) return false;
      // The index first: a queued removal reads a version's text, so no version may go before it.
      if (index.hasBacklog()) {
        index.indexSearchBacklog(TURN_BATCH);
        return true;
      }
      // Once a store's rows are all gone, the WAL is emptied as after a redaction: the texts its
      // versions were the last to hold (a fork build a redaction abandoned holds a redacted one) leave the disk.
      if (relaxed(() => slice.immediate(storeId))) truncateWalSoon(db);
      return true;
    },
    purgeDue: () => q.next.get() !== undefined && !wait(),
  };
}
