/**
 * @module Expiring memories in SQLite: the clock readers filter by, and the purge every write to a
 * store runs first (schema invariant 10).
 */
import { overlapProbe } from '../../domain/memory-rules.js';
import { subtreeEnd } from '../../domain/paths.js';
import { WRITE_PURGE_MAX, expiryVersionRow, type ExpiredRow } from '../common/version-rows.js';
import { createVersionAppend } from './commit-order.js';
import { writeTx, type Db } from './tx.js';

/** SQL that keeps only memories that have not expired; needs `registerClock` on the connection. */
export const LIVE = '(expires_at IS NULL OR expires_at > mnemo_now())';

/** Makes `mnemo_now()` answer the adapter's clock (RFC 3339 UTC with milliseconds, like expires_at). */
export function registerClock(db: Db, clock: () => string): void {
  db.function('mnemo_now', { deterministic: false }, () => clock());
}

/**
 * Returns `purge(storeId, now, max, near?)`: deletes the store's memories that expired at or before
 * `now`, at most `max` of them, each with a `deleted` version dated at its expiry; and, past `max`,
 * every expired memory at, above or below `near` too. A write calls it inside its transaction,
 * before any path check, with the path it takes, so an expired memory's path is free for it.
 */
export function createExpiryPurge(db: Db) {
  const purgeRow = createRowPurge(db);
  const q = {
    expiredSome: db.prepare(
      `SELECT m.id, m.path, m.expires_at, v.actor_type, v.actor_id
       FROM memories m LEFT JOIN versions v ON v.id = m.version_id
       WHERE m.store_id = ? AND m.expires_at IS NOT NULL AND m.expires_at <= ? ORDER BY m.expires_at LIMIT +?`,
    ),
    // Only after a mass expiry: the expired memories in a write's way.
    expiredNear: db.prepare(
      `SELECT m.id, m.path, m.expires_at, v.actor_type, v.actor_id
       FROM memories m LEFT JOIN versions v ON v.id = m.version_id
       WHERE m.store_id = @store AND m.expires_at IS NOT NULL AND m.expires_at <= @now
         AND (m.path IN (SELECT value FROM json_each(@above)) OR (m.path > @below AND m.path < @belowEnd))`,
    ),
  };

  return function purgeExpired(storeId: string, now: string, max: number = WRITE_PURGE_MAX, near?: string): number {
    // One more than `max`: whether any are left over, in the one query a write makes when none expired.
    const rows = q.expiredSome.all(storeId, now, max + 1) as ExpiredRow[];
    if (rows.length === 0) return 0;
    const inTheWay = rows.length > max && near !== undefined ? expiredNear(storeId, now, near) : [];
    const ids = new Set(inTheWay.map((r) => r.id));
    const purge = [...inTheWay, ...rows.slice(0, max).filter((r) => !ids.has(r.id))];
    for (const r of purge) purgeRow(storeId, r);
    return purge.length;
  };

  function expiredNear(storeId: string, now: string, near: string): ExpiredRow[] {
    const o = overlapProbe(near);
    return q.expiredNear.all({ store: storeId, now, above: JSON.stringify(o.atOrAbove), below: o.below, belowEnd: subtreeEnd(o.below) }) as ExpiredRow[];
  }
}

/**
 * Returns `purge(storeId, memoryId, now)`: deletes that one memory as the purge above would, if it
 * expired at or before `now`; true when it did. A redaction runs it for the memory whose current
 * version it erases: expired, that version is no live memory's, and the row that still names its
 * text (and holds it in the search index) goes first.
 */
export function createExpiredMemoryPurge(db: Db): (storeId: string, memoryId: string, now: string) => boolean {
  const purgeRow = createRowPurge(db);
  const expired = db.prepare(
    `SELECT m.id, m.path, m.expires_at, v.actor_type, v.actor_id
     FROM memories m LEFT JOIN versions v ON v.id = m.version_id
     WHERE m.id = ? AND m.store_id = ? AND m.expires_at IS NOT NULL AND m.expires_at <= ?`,
  );
  return (storeId, memoryId, now) => {
    const r = expired.get(memoryId, storeId, now) as ExpiredRow | undefined;
    if (r) purgeRow(storeId, r);
    return r !== undefined;
  };
}

/** Deletes one expired memory: a `deleted` version dated at its expiry, its last path remembered, its row gone. */
function createRowPurge(db: Db): (storeId: string, r: ExpiredRow) => void {
  const q = {
    remember: db.prepare(
      `INSERT OR REPLACE INTO memory_expirations (store_id, memory_id, path, expired_at) VALUES (?, ?, ?, ?)`,
    ),
    deleteMemory: db.prepare('DELETE FROM memories WHERE id = ?'),
  };
  const insertVersion = createVersionAppend(db);
  return (storeId, r) => {
    insertVersion(expiryVersionRow(storeId, r));
    q.remember.run(storeId, r.id, r.path, r.expires_at);
    q.deleteMemory.run(r.id);
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
