/** @module PostgreSQL operations for idempotency receipts (bound to their mutation by `atomic`). */
import type { Receipt, ReceiptScope } from '../port.js';
import pg from 'pg';
import { all, first, run, type Q } from './db.js';
import { RECEIPT_VERSION_FIELDS, toReceipt, type ReceiptRow } from './rows.js';

/** The advisory lock the receipt purge takes for its transaction (any bigint; this one spells "mnemo rcp"). */
const RECEIPT_PURGE_LOCK_KEY = 0x6d6e656d6f726370n;

const SCOPE = 'workspace_id = $1 AND api_key_id = $2 AND route = $3 AND idem_key = $4';
const scope = (s: ReceiptScope) => [s.workspaceId, s.apiKeyId, s.route, s.key];

/** A receipt naming a store is found only while the store is: the delete hides its receipts with it (the store's purge removes them). */
const OF_LIVE_STORE = '(r.store_id IS NULL OR EXISTS (SELECT 1 FROM stores s WHERE s.id = r.store_id AND s.deleted_at IS NULL))';

/**
 * Redaction's half in the receipts (invariant 9), in the caller's transaction: every receipt naming
 * the version reads null in the fields that carry the version's text, as the version now does. Only
 * fields present are set, and the key order stays, as SQLite's json_replace does (in JS: jsonb
 * would reorder the replayed body's keys).
 */
export async function redactReceipts(q: Q, storeId: string, versionId: string): Promise<number> {
  const rows = await all<{ workspace_id: string; api_key_id: string; route: string; idem_key: string; body: string }>(
    q,
    'SELECT workspace_id, api_key_id, route, idem_key, body FROM idempotency_receipts WHERE store_id = $1 AND version_id = $2 FOR UPDATE',
    [storeId, versionId],
  );
  for (const r of rows) {
    const body = JSON.parse(r.body) as unknown;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) continue;
    for (const f of RECEIPT_VERSION_FIELDS) if (f in body) (body as Record<string, unknown>)[f] = null;
    await run(q, `UPDATE idempotency_receipts SET body = $5 WHERE ${SCOPE}`, [r.workspace_id, r.api_key_id, r.route, r.idem_key, JSON.stringify(body)]);
  }
  return rows.length;
}

export const receiptReads = {
  async findReceipt(q: Q, s: ReceiptScope): Promise<Receipt | null> {
    // Inside a transaction (a mutation about to record its receipt): concurrent retries of one key
    // on other connections or servers wait here until the first commits, then find its receipt.
    // SQLite's one writer orders them the same way.
    if (!(q instanceof pg.Pool)) {
      await run(q, 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [JSON.stringify(scope(s))]);
    }
    const r = await first<ReceiptRow>(q, `SELECT r.* FROM idempotency_receipts r WHERE ${SCOPE} AND ${OF_LIVE_STORE}`, scope(s));
    if (!r) return null;
    return toReceipt(r);
  },
};

export const receiptWrites = {
  async insertReceipt(q: Q, r: Receipt): Promise<void> {
    await run(
      q,
      `INSERT INTO idempotency_receipts
         (workspace_id, api_key_id, route, idem_key, fingerprint, status, body, store_id, version_id, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [...scope(r), r.fingerprint, r.status, r.body, r.storeId, r.versionId, r.createdAt, r.expiresAt],
    );
  },
  async deleteReceipt(q: Q, s: ReceiptScope): Promise<void> {
    await run(q, `DELETE FROM idempotency_receipts WHERE ${SCOPE}`, scope(s));
  },
  async purgeReceipts(q: Q, now: string, latest: string): Promise<number> {
    // Many servers run this purge: one at a time does it, the others find the lock taken and skip.
    const lock = await first<{ ok: boolean }>(q, 'SELECT pg_try_advisory_xact_lock($1) AS ok', [RECEIPT_PURGE_LOCK_KEY.toString()]);
    if (!lock?.ok) return 0;
    // A range of the expiry index: rows only after the retention was lowered, none otherwise.
    await run(q, 'UPDATE idempotency_receipts SET expires_at = $1 WHERE expires_at > $1', [latest]);
    return run(q, 'DELETE FROM idempotency_receipts WHERE expires_at <= $1', [now]);
  },
};
