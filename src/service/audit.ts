/**
 * @module The log of admin actions (issue 16): keys created and revoked, versions redacted, stores
 * archived and deleted, sessions ended. The API and the web console act through the same service,
 * so both are recorded here, once. Each entry is written in the same transaction as its action
 * (`within`), so an action is never kept without its entry, nor an entry without its action.
 */
import { assertAllowed } from '../domain/access.js';
import { bindPage, scopeTag, unbindPage } from '../domain/page-scope.js';
import type { AdminAction, AdminActionKind, Caller, Page } from '../domain/types.js';
import type { IdGenerator } from './ids.js';
import type { Storage } from '../storage/port.js';

/** What an action says about itself; the log adds who, when and an id. */
export interface AuditEntry {
  action: AdminActionKind;
  targetId: string;
  storeId?: string | null;
  summary: string;
}

export interface AuditOptions {
  storage: Pick<Storage, 'listAdminActions' | 'pageKey'>;
  clock: () => string;
  ids: IdGenerator;
}

export function createAudit({ storage, clock, ids }: AuditOptions) {
  function entry(caller: Caller, e: AuditEntry): AdminAction {
    return {
      id: ids('adminAction'), workspaceId: caller.workspaceId, action: e.action, actor: caller.actor,
      targetId: e.targetId, storeId: e.storeId ?? null, summary: e.summary, createdAt: clock(),
    };
  }

  return {
    /**
     * Runs `act` and writes the entry `describe` makes of its result in one transaction of `over`
     * (the outer port, or a transaction's `tx`, where it nests). `describe` returns null when the
     * call changed nothing (archiving an archived store): no entry then.
     */
    async within<T>(over: Pick<Storage, 'atomic'>, caller: Caller, act: (tx: Storage) => Promise<T>, describe: (result: T) => AuditEntry | null): Promise<T> {
      return over.atomic(async (tx) => {
        const result = await act(tx);
        const e = describe(result);
        if (e) await tx.insertAdminAction(entry(caller, e));
        return result;
      });
    },

    /** GET /v1/admin_actions: the caller's workspace's entries, newest first (admin keys only). */
    async list(caller: Caller, limit: number, page: string | null): Promise<Page<AdminAction>> {
      assertAllowed(caller, 'read_audit');
      const tag = scopeTag('admin_actions', caller.workspaceId);
      return bindPage(storage.pageKey(), await storage.listAdminActions(caller.workspaceId, limit, unbindPage(storage.pageKey(), page, tag)), tag);
    },
  };
}

export type Audit = ReturnType<typeof createAudit>;
