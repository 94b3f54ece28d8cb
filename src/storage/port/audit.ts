/** @module The audit role: the append-only log of admin actions (keys, redactions, archives, deletes, ended sessions). */
import type { AdminAction, Page } from '../../domain/types.js';

export interface AuditStorage {
  /**
   * Appends one entry. Its SQL runs before the call returns (a throw is synchronous), so inside
   * `atomic` it joins the action's own transaction; the promise only reports completion.
   */
  insertAdminAction(entry: AdminAction): Promise<void>;
  /** A workspace's entries, newest first. */
  listAdminActions(workspaceId: string, limit: number, page: string | null): Promise<Page<AdminAction>>;
  /**
   * The versions of `storeId` whose redactions were logged after entry number `after` (the log's
   * own order), oldest first, and the log's last number: the next call's `after`. `after` null:
   * that number only. How a mount learns of a redaction another process made on the same SQLite
   * file (fs/writes-elsewhere.ts). Absent on PostgreSQL, whose redactions tell every server by
   * notice inside their transaction (postgres/notify.ts).
   */
  redactionsAfter?(storeId: string, after: number | null): Promise<{ last: number; versionIds: string[] }>;
}
