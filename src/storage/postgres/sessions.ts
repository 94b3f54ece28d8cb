/** @module PostgreSQL operations for mount sessions. */
import { notFound } from '../../domain/errors.js';
import type { Page, Session, SessionResource } from '../../domain/types.js';
import { seqBefore, seqPage } from '../cursor.js';
import { all, first, lookup, run, type Q } from './db.js';
import { creatorKey, toSession, type SessionRow } from './rows.js';

export const sessionReads = {
  async getSession(q: Q, workspaceId: string, id: string): Promise<Session | null> {
    const r = await lookup<SessionRow>(q, 'SELECT * FROM sessions WHERE workspace_id = $1 AND id = $2', [workspaceId, id]);
    return r ? toSession(r) : null;
  },
  async listSessions(q: Q, workspaceId: string, limit: number, page: string | null): Promise<Page<Session>> {
    const rows = await all<SessionRow>(q, 'SELECT * FROM sessions WHERE workspace_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3', [
      workspaceId, seqBefore(page), limit + 1,
    ]);
    return seqPage(rows, limit, toSession);
  },
  async listActiveSessions(q: Q): Promise<Session[]> {
    return (await all<SessionRow>(q, "SELECT * FROM sessions WHERE status = 'active' AND local_pid IS NULL ORDER BY seq")).map(toSession);
  },
  async listActiveSessionsOfKey(q: Q, apiKeyId: string): Promise<Session[]> {
    return (await all<SessionRow>(
      q, "SELECT * FROM sessions WHERE api_key_id = $1 AND status = 'active' AND api_key_id IS NOT NULL ORDER BY seq", [apiKeyId],
    )).map(toSession);
  },
  async listActiveLocalSessions(q: Q): Promise<Session[]> {
    return (await all<SessionRow>(q, "SELECT * FROM sessions WHERE status = 'active' AND local_pid IS NOT NULL ORDER BY seq")).map(toSession);
  },
  async countActiveSessions(q: Q, workspaceId: string): Promise<number> {
    return (await first<{ n: number }>(q, "SELECT count(*) AS n FROM sessions WHERE workspace_id = $1 AND status = 'active'", [workspaceId]))!.n;
  },
  async countActiveMounts(q: Q, workspaceId: string): Promise<number> {
    const r = await first<{ n: number }>(
      q, "SELECT coalesce(sum(json_array_length(resources::json)), 0)::int AS n FROM sessions WHERE workspace_id = $1 AND status = 'active'", [workspaceId],
    );
    return r!.n;
  },
};

export const sessionWrites = {
  async insertSession(q: Q, s: Session): Promise<void> {
    await run(
      q,
      'INSERT INTO sessions (id, workspace_id, status, resources, created_at, ended_at, local_pid, node_id, api_key_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)',
      [s.id, s.workspaceId, s.status, JSON.stringify(s.resources), s.createdAt, s.endedAt, s.localPid ?? null, s.nodeId ?? null, creatorKey(s)],
    );
  },
  async moveSession(q: Q, workspaceId: string, id: string, resources: SessionResource[], nodeId: string | null): Promise<void> {
    await run(q, "UPDATE sessions SET resources = $1, node_id = $2 WHERE workspace_id = $3 AND id = $4 AND status = 'active'", [
      JSON.stringify(resources), nodeId, workspaceId, id,
    ]);
  },
  async endSession(q: Q, workspaceId: string, id: string, now: string): Promise<Session> {
    const r = await first<SessionRow>(q, 'SELECT * FROM sessions WHERE workspace_id = $1 AND id = $2 FOR UPDATE', [workspaceId, id]);
    if (!r) throw notFound('session', id);
    if (r.status === 'ended') return toSession(r);
    await run(q, "UPDATE sessions SET status = 'ended', ended_at = $1 WHERE id = $2", [now, id]);
    return toSession({ ...r, status: 'ended', ended_at: now });
  },
};
