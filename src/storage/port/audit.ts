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
}
