/**
 * @module The receipts role: the first answer to an idempotent request, replayed to its retries.
 * A receipt is bound to its mutation by running both inside one `atomic` (transactions.ts).
 */

/** Whose receipt: one per workspace, API key, route and Idempotency-Key. */
export interface ReceiptScope {
  workspaceId: string;
  apiKeyId: string;
  /** Method and route template, e.g. "POST /v1/memory_stores/{id}/memories". */
  route: string;
  key: string;
}

/** The first successful answer to an idempotent request, replayed to retries. */
export interface Receipt extends ReceiptScope {
  /** sha256 of the normalised request; a retry must match it. */
  fingerprint: string;
  status: number;
  /** The response body as JSON text. */
  body: string;
  /** What the answer points at, for `mnemo check`; a receipt naming a store goes with it (`findReceipt`). */
  storeId: string | null;
  versionId: string | null;
  createdAt: string;
  expiresAt: string;
}

export interface ReceiptStorage {
  /**
   * The receipt kept for `scope`, or null. A receipt naming a deleted store is not found from the
   * delete's commit on, as no read finds the store; its row leaves with the store's other rows
   * (`purgeDeletedStores`).
   */
  findReceipt(scope: ReceiptScope): Promise<Receipt | null>;
  insertReceipt(receipt: Receipt): Promise<void>;
  deleteReceipt(scope: ReceiptScope): Promise<void>;
  /**
   * Deletes receipts that expired at or before `now`, and makes those set to expire after `latest`
   * (kept under a longer retention than the one in force now) expire at `latest`; returns how many it deleted.
   */
  purgeReceipts(now: string, latest: string): Promise<number>;
}
