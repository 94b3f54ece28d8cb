/**
 * @module Expiring memories in PostgreSQL (invariant 10): the purge every write to a store runs
 * first, inside its transaction and under its store lock, and the periodic sweep, which any number
 * of servers may run at once (each store is purged by whoever locks it first; the others skip it).
 */
import { overlapProbe } from '../../domain/memory-rules.js';
import { subtreeEnd } from '../../domain/paths.js';
import { WRITE_PURGE_MAX, expiryVersionRow, type ExpiredRow } from '../common/version-rows.js';
import { appendVersionRow } from './commit-order.js';
import { all, run, type Q } from './db.js';

/** The advisory lock the sweep takes for its transaction (any bigint; this one spells "mnemo exp"). */
const EXPIRY_SWEEP_LOCK_KEY = 0x6d6e656d6f657870n;

const EXPIRED = `SELECT m.id, m.path, m.expires_at, v.actor_type, v.actor_id
  FROM memories m LEFT JOIN versions v ON v.id = m.version_id
  WHERE m.store_id = $1 AND m.expires_at IS NOT NULL AND m.expires_at <= $2`;

/**
 * Deletes the store's memories that expired at or before `now`, at most `max` of them, each with a
 * `deleted` version dated at its expiry and attributed to its last writer; and, past `max`, every
 * expired memory at, above or below `near` too. A write calls it with the store locked, before any
 * path check, with the path it takes, so an expired memory's path is free for it.
 */
export async function purgeExpired(q: Q, storeId: string, now: string, max: number = WRITE_PURGE_MAX, near?: string): Promise<number> {
  // One more than `max`: whether any are left over.
  const some = await all<ExpiredRow>(q, `${EXPIRED} ORDER BY m.expires_at, m.seq LIMIT $3`, [storeId, now, max + 1]);
  let rows = some.slice(0, max);
  if (some.length > max && near !== undefined) {
    const o = overlapProbe(near);
    const inTheWay = await all<ExpiredRow>(q, `${EXPIRED} AND (m.path = ANY($3::text[]) OR (m.path > $4 AND m.path < $5))`, [
      storeId, now, o.atOrAbove, o.below, subtreeEnd(o.below),
    ]);
    const ids = new Set(inTheWay.map((r) => r.id));
    rows = [...inTheWay, ...rows.filter((r) => !ids.has(r.id))];
  }
  for (const r of rows) await purgeRow(q, storeId, r);
  return rows.length;
}

/**
 * Deletes that one memory as purgeExpired would, if it expired at or before `now` (the store
 * locked); true when it did. A redaction runs it for the memory whose current version it erases:
 * expired, that version is no live memory's, and the row that still holds its text's words goes first.
 */
export async function purgeExpiredMemory(q: Q, storeId: string, memoryId: string, now: string): Promise<boolean> {
  const [r] = await all<ExpiredRow>(q, `${EXPIRED} AND m.id = $3`, [storeId, now, memoryId]);
  if (r) await purgeRow(q, storeId, r);
  return r !== undefined;
}

/** Deletes one expired memory: a `deleted` version dated at its expiry, its last path remembered, its row gone. */
async function purgeRow(q: Q, storeId: string, r: ExpiredRow): Promise<void> {
  await appendVersionRow(q, expiryVersionRow(storeId, r));
  await run(
    q,
    `INSERT INTO memory_expirations (store_id, memory_id, path, expired_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (store_id, memory_id) DO UPDATE SET path = excluded.path, expired_at = excluded.expired_at`,
    [storeId, r.id, r.path, r.expires_at],
  );
  await run(q, 'DELETE FROM memories WHERE id = $1', [r.id]);
}

/**
 * The sweep: purges expired memories of every store, at most `max` in one transaction. A store
 * another server (or a write) holds locked is skipped: its next write purges it, or the next sweep.
 */
export async function sweepExpired(q: Q, now: string, max: number = Number.MAX_SAFE_INTEGER): Promise<number> {
  // One server sweeps at a time (the others skip this round); a store a write holds is skipped too.
  const lock = await all<{ ok: boolean }>(q, 'SELECT pg_try_advisory_xact_lock($1) AS ok', [EXPIRY_SWEEP_LOCK_KEY.toString()]);
  if (!lock[0]?.ok) return 0;
  const stores = await all<{ id: string }>(
    q,
    `SELECT s.id FROM stores s
     WHERE s.deleted_at IS NULL AND s.id IN (SELECT DISTINCT store_id FROM memories WHERE expires_at IS NOT NULL AND expires_at <= $1)
     ORDER BY s.id FOR NO KEY UPDATE SKIP LOCKED`,
    [now],
  );
  let n = 0;
  for (const { id } of stores) {
    n += await purgeExpired(q, id, now, max - n);
    if (n >= max) break;
  }
  return n;
}
