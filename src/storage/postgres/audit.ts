/** @module PostgreSQL operations for the admin-actions log (append-only: postgres/schema/v2.ts). */
import type { AdminAction, Page } from '../../domain/types.js';
import { seqBefore, seqPage } from '../cursor.js';
import { all, run, type Q } from './db.js';
import { actorColumns, toAdminAction, type AdminActionRow } from './rows.js';

export const auditWrites = {
  async insertAdminAction(q: Q, e: AdminAction): Promise<void> {
    const actor = actorColumns(e.actor);
    await run(
      q,
      `INSERT INTO admin_actions (id, workspace_id, action, actor_type, actor_id, target_id, store_id, summary, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [e.id, e.workspaceId, e.action, actor.type, actor.id, e.targetId, e.storeId, e.summary, e.createdAt],
    );
  },
};

export const auditReads = {
  async listAdminActions(q: Q, workspaceId: string, limit: number, page: string | null): Promise<Page<AdminAction>> {
    const rows = await all<AdminActionRow>(q, 'SELECT * FROM admin_actions WHERE workspace_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3', [
      workspaceId, seqBefore(page), limit + 1,
    ]);
    return seqPage(rows, limit, toAdminAction);
  },
};
