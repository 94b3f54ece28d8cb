/**
 * @module Expiring memories in SQLite: the clock readers filter by, and the purge every write to a
 * store runs first (schema invariant 10).
 */
import { expiryVersionRow, type ExpiredRow } from '../common/version-rows.js';
import { createVersionAppend } from './commit-order.js';
import { writeTx, type Db } from './tx.js';

/** SQL that keeps only memories that have not expired; needs `registerClock` on the connection. */
export const LIVE = '(expires_at IS NULL OR expires_at > mnemo_now())';

/** Makes `mnemo_now()` answer the adapter's clock (RFC 3339 UTC with milliseconds, like expires_at). */
export function registerClock(db: Db, clock: () => string): void {
  db.function('mnemo_now', { deterministic: false }, () => clock());
}

/**
 * Returns `purge(storeId, now, max?)`: deletes the store's memories that expired at or before
 * `now` (at most `max` of them, if given), each with a `deleted` version dated at its expiry. Call it inside the write transaction,
 * before any path check, so an expired memory's path is free for the write.
 */
export function createExpiryPurge(db: Db) {
  const q = {
    expired: db.prepare(
      `SELECT m.id, m.path, m.expires_at, v.actor_type, v.actor_id
       FROM memories m LEFT JOIN versions v ON v.id = m.version_id
       WHERE m.store_id = ? AND m.expires_at IS NOT NULL AND m.expires_at <= ?`,
    ),
    expiredSome: db.prepare(
      `SELECT m.id, m.path, m.expires_at, v.actor_type, v.actor_id
       FROM memories m LEFT JOIN versions v ON v.id = m.version_id
       WHERE m.store_id = ? AND m.expires_at IS NOT NULL AND m.expires_at <= ? LIMIT ?`,
    ),
    remember: db.prepare(
      `INSERT OR REPLACE INTO memory_expirations (store_id, memory_id, path, expired_at) VALUES (?, ?, ?, ?)`,
    ),
    deleteMemory: db.prepare('DELETE FROM memories WHERE id = ?'),
  };
  const insertVersion = createVersionAppend(db);

  return function purgeExpired(storeId: string, now: string, max?: number): number {
    const rows = (max === undefined ? q.expired.all(storeId, now) : q.expiredSome.all(storeId, now, max)) as ExpiredRow[];
    for (const r of rows) {
      insertVersion(expiryVersionRow(storeId, r));
      q.remember.run(storeId, r.id, r.path, r.expires_at);
      q.deleteMemory.run(r.id);
    }
    return rows.length;
  };
}

/**
 * The periodic sweep: purges expired memories of every store, at most `max` in one transaction (the
 * caller runs batches until one comes back short, yielding between them); returns how many.
 */
export function createExpirySweep(db: Db): (now: string, max?: number) => number {
  const purge = createExpiryPurge(db);
  // Not a deleted store's: its rows are on their way out (sqlite/store-purge.ts).
  const stores = db.prepare(
    `SELECT DISTINCT store_id FROM memories
     WHERE expires_at IS NOT NULL AND expires_at <= ? AND store_id NOT IN (SELECT id FROM stores WHERE deleted_at IS NOT NULL)`,
  );
  return writeTx(db, (now: string, max: number = Number.MAX_SAFE_INTEGER): number => {
    let n = 0;
    for (const { store_id } of stores.all(now) as { store_id: string }[]) {
      n += purge(store_id, now, max - n);
      if (n >= max) break;
    }
    return n;
  });
}
