/** @module SQLite statements for idempotency receipts (the transaction that binds one to its mutation is `atomic`, sqlite.ts). */
import type { Synchronous } from './reads.js';
import type { Receipt, ReceiptScope, ReceiptStorage } from '../port.js';
import { writeTx, type Db } from './tx.js';
import { RECEIPT_VERSION_FIELDS, toReceipt, type ReceiptRow } from '../common/rows.js';

/**
 * Redaction's half in the receipts: rewrites, in the caller's transaction, the body of every
 * receipt naming the version so those fields read null, as the version now does. Rewriting (not
 * deleting) keeps the receipt, so a retry still replays (no second write) and shows the version as
 * it now stands. json_replace only touches fields present: a basic-view body keeps content null.
 * With secure_delete on, the old cell is zeroed, and redaction then truncates the WAL.
 */
export function createReceiptRedaction(db: Db): (storeId: string, versionId: string) => number {
  const nulls = RECEIPT_VERSION_FIELDS.map((f) => `'$.${f}', NULL`).join(', ');
  const stmt = db.prepare(`UPDATE idempotency_receipts SET body = json_replace(body, ${nulls}) WHERE store_id = ? AND version_id = ?`);
  return (storeId, versionId) => stmt.run(storeId, versionId).changes;
}

const SCOPE = 'workspace_id = @workspaceId AND api_key_id = @apiKeyId AND route = @route AND idem_key = @key';

/** A receipt naming a store is found only while the store is: the delete hides its receipts with it (sqlite/store-purge.ts removes them). */
const OF_LIVE_STORE = '(store_id IS NULL OR EXISTS (SELECT 1 FROM stores s WHERE s.id = idempotency_receipts.store_id AND s.deleted_at IS NULL))';

export function createReceiptStatements(db: Db): Synchronous<ReceiptStorage> {
  const q = {
    find: db.prepare(`SELECT * FROM idempotency_receipts WHERE ${SCOPE} AND ${OF_LIVE_STORE}`),
    insert: db.prepare(
      `INSERT INTO idempotency_receipts
         (workspace_id, api_key_id, route, idem_key, fingerprint, status, body, store_id, version_id, created_at, expires_at)
       VALUES (@workspaceId, @apiKeyId, @route, @key, @fingerprint, @status, @body, @storeId, @versionId, @createdAt, @expiresAt)`,
    ),
    remove: db.prepare(`DELETE FROM idempotency_receipts WHERE ${SCOPE}`),
    purge: db.prepare('DELETE FROM idempotency_receipts WHERE expires_at <= ?'),
    // A range of the expiry index: rows only after the retention was lowered, none otherwise.
    cap: db.prepare('UPDATE idempotency_receipts SET expires_at = @latest WHERE expires_at > @latest'),
  };
  const scope = (s: ReceiptScope) => ({ workspaceId: s.workspaceId, apiKeyId: s.apiKeyId, route: s.route, key: s.key });

  return {
    findReceipt(s) {
      const r = q.find.get(scope(s)) as ReceiptRow | undefined;
      if (!r) return null;
      return toReceipt(r);
    },
    insertReceipt(r: Receipt) {
      q.insert.run({ ...scope(r), fingerprint: r.fingerprint, status: r.status, body: r.body, storeId: r.storeId, versionId: r.versionId, createdAt: r.createdAt, expiresAt: r.expiresAt });
    },
    deleteReceipt(s) {
      q.remove.run(scope(s));
    },
    purgeReceipts: writeTx(db, (now: string, latest: string): number => {
      q.cap.run({ latest });
      return q.purge.run(now).changes;
    }),
  };
}
