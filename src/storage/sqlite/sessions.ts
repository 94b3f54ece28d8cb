/** @module SQLite statements for mount sessions. */
import type { Synchronous } from './reads.js';
import { notFound } from '../../domain/errors.js';
import type { Page, Session } from '../../domain/types.js';
import { seqBefore, seqPage } from '../cursor.js';
import type { SessionStorage } from '../port.js';
import { creatorKey, toSession, type SessionRow } from '../common/rows.js';
import { writeTx, type Db } from './tx.js';

export function createSessionStatements(db: Db): Synchronous<SessionStorage> {
  const q = {
    insert: db.prepare(
      'INSERT INTO sessions (id, workspace_id, status, resources, created_at, ended_at, local_pid, node_id, api_key_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    get: db.prepare('SELECT * FROM sessions WHERE workspace_id = ? AND id = ?'),
    list: db.prepare('SELECT * FROM sessions WHERE workspace_id = ? AND seq < ? ORDER BY seq DESC LIMIT +?'),
    active: db.prepare("SELECT * FROM sessions WHERE status = 'active' AND local_pid IS NULL ORDER BY seq"),
    activeOfKey: db.prepare(
      "SELECT * FROM sessions INDEXED BY sessions_active_by_key WHERE api_key_id = ? AND status = 'active' AND api_key_id IS NOT NULL ORDER BY seq",
    ),
    activeLocal: db.prepare("SELECT * FROM sessions WHERE status = 'active' AND local_pid IS NOT NULL ORDER BY seq"),
    move: db.prepare("UPDATE sessions SET resources = ?, node_id = ? WHERE workspace_id = ? AND id = ? AND status = 'active'"),
    end: db.prepare("UPDATE sessions SET status = 'ended', ended_at = ? WHERE id = ?"),
    countActive: db.prepare("SELECT count(*) AS n FROM sessions INDEXED BY sessions_active_by_workspace WHERE workspace_id = ? AND status = 'active'"),
    countMounts: db.prepare(
      "SELECT coalesce(sum(json_array_length(resources)), 0) AS n FROM sessions INDEXED BY sessions_active_by_workspace WHERE workspace_id = ? AND status = 'active'",
    ),
  };

  return {
    insertSession(s) {
      q.insert.run(s.id, s.workspaceId, s.status, JSON.stringify(s.resources), s.createdAt, s.endedAt, s.localPid ?? null, s.nodeId ?? null, creatorKey(s));
    },
    getSession(workspaceId, id) {
      const r = q.get.get(workspaceId, id) as SessionRow | undefined;
      return r ? toSession(r) : null;
    },
    listSessions(workspaceId, limit, page): Page<Session> {
      return seqPage(q.list.all(workspaceId, seqBefore(page), limit + 1) as SessionRow[], limit, toSession);
    },
    countActiveSessions(workspaceId) {
      return (q.countActive.get(workspaceId) as { n: number }).n;
    },
    countActiveMounts(workspaceId) {
      return (q.countMounts.get(workspaceId) as { n: number }).n;
    },
    listActiveSessions() {
      return (q.active.all() as SessionRow[]).map(toSession);
    },
    listActiveSessionsOfKey(apiKeyId) {
      return (q.activeOfKey.all(apiKeyId) as SessionRow[]).map(toSession);
    },
    listActiveLocalSessions() {
      return (q.activeLocal.all() as SessionRow[]).map(toSession);
    },
    moveSession(workspaceId, id, resources, nodeId) {
      q.move.run(JSON.stringify(resources), nodeId, workspaceId, id);
    },
    endSession: writeTx(db, (workspaceId: string, id: string, now: string): Session => {
      const r = q.get.get(workspaceId, id) as SessionRow | undefined;
      if (!r) throw notFound('session', id);
      if (r.status === 'ended') return toSession(r);
      q.end.run(now, id);
      return toSession({ ...r, status: 'ended', ended_at: now });
    }),
  };
}
