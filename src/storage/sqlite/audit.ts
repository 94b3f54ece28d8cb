/** @module SQLite statements for the admin-actions log (append-only: sqlite/schema/audit.ts). */
import { seqBefore, seqPage } from '../cursor.js';
import type { AuditStorage } from '../port.js';
import type { Synchronous } from './reads.js';
import { actorColumns, toAdminAction, type AdminActionRow } from '../common/rows.js';
import type { Db } from './tx.js';

export function createAuditStatements(db: Db): Synchronous<AuditStorage> {
  const q = {
    insert: db.prepare(
      `INSERT INTO admin_actions (id, workspace_id, action, actor_type, actor_id, target_id, store_id, summary, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    list: db.prepare('SELECT * FROM admin_actions WHERE workspace_id = ? AND seq < ? ORDER BY seq DESC LIMIT +?'),
    last: db.prepare('SELECT coalesce(max(seq), 0) FROM admin_actions').pluck(),
    redactions: db.prepare(
      "SELECT target_id FROM admin_actions WHERE seq > ? AND seq <= ? AND store_id = ? AND action = 'memory_version.redacted' ORDER BY seq",
    ).pluck(),
  };

  return {
    insertAdminAction(e) {
      const actor = actorColumns(e.actor);
      q.insert.run(e.id, e.workspaceId, e.action, actor.type, actor.id, e.targetId, e.storeId, e.summary, e.createdAt);
    },
    // A point range on an index, a page at most: inline, like the sessions list.
    listAdminActions(workspaceId, limit, page) {
      return seqPage(q.list.all(workspaceId, seqBefore(page), limit + 1) as AdminActionRow[], limit, toAdminAction);
    },
    // Two ranges of the primary key: the entries logged since the last call, a few at most.
    redactionsAfter(storeId, after) {
      const last = q.last.get() as number;
      return { last, versionIds: after === null || after >= last ? [] : (q.redactions.all(after, last, storeId) as string[]) };
    },
  };
}
