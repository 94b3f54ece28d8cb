/** @module PostgreSQL operations for workspaces and API keys (only a key's hash is stored). */
import { notFound } from '../../domain/errors.js';
import type { ApiKey, Page, PageQuery, Workspace } from '../../domain/types.js';
import { createdAfter, createdPage, unknownCursor } from '../cursor.js';
import { all, first, lookup, run, type Q } from './db.js';
import { KEY_COLUMNS, byUniqueId, toApiKey, toWorkspace, type ApiKeyRow, type WorkspaceRow } from './rows.js';

/** The advisory lock seeding the admin key takes for its transaction (any bigint; this one spells "mnemokey"). */
const KEY_SEEDING_LOCK_KEY = 0x6d6e656d6f6b6579n;

export const keyReads = {
  async defaultWorkspace(q: Q): Promise<Workspace | null> {
    const r = await first<WorkspaceRow>(q, 'SELECT id, name, created_at FROM workspaces WHERE is_default LIMIT 1');
    return r ? toWorkspace(r) : null;
  },
  async getWorkspace(q: Q, id: string): Promise<Workspace | null> {
    const r = await lookup<WorkspaceRow>(q, 'SELECT id, name, created_at FROM workspaces WHERE id = $1', [id]);
    return r ? toWorkspace(r) : null;
  },
  async listWorkspaces(q: Q): Promise<Workspace[]> {
    return (await all<WorkspaceRow>(q, 'SELECT id, name, created_at FROM workspaces ORDER BY is_default DESC, created_at, id')).map(toWorkspace);
  },
  async findApiKeyByHash(q: Q, hash: string): Promise<ApiKey | null> {
    const r = await lookup<ApiKeyRow>(q, `SELECT ${KEY_COLUMNS} FROM api_keys WHERE key_hash = $1`, [hash]);
    return r ? toApiKey(r) : null;
  },
  async seededApiKey(q: Q): Promise<{ key: ApiKey; hash: string } | null> {
    const r = await first<ApiKeyRow & { key_hash: string }>(q, `SELECT ${KEY_COLUMNS}, key_hash FROM api_keys WHERE seeded AND revoked_at IS NULL`);
    return r ? { key: toApiKey(r), hash: r.key_hash } : null;
  },
  // A transaction's lock (a read here: it needs no savepoint and tells other servers nothing).
  async lockKeySeeding(q: Q): Promise<void> {
    await first(q, 'SELECT pg_advisory_xact_lock($1)', [KEY_SEEDING_LOCK_KEY.toString()]);
  },
  async countApiKeys(q: Q): Promise<number> {
    return (await first<{ n: number }>(q, 'SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NULL'))!.n;
  },
  async listApiKeys(q: Q, workspaceId: string): Promise<ApiKey[]> {
    return (await all<ApiKeyRow>(q, `SELECT ${KEY_COLUMNS} FROM api_keys WHERE workspace_id = $1 ORDER BY created_at, id`, [workspaceId])).map(toApiKey);
  },
  async listApiKeyPage(q: Q, workspaceId: string, { limit, page }: PageQuery, withOperatorKeys: boolean): Promise<Page<ApiKey>> {
    const after = createdAfter(page);
    let t = after?.createdAt ?? '';
    if (after && after.createdAt === null) {
      const r = await first<{ created_at: string }>(q, `SELECT created_at FROM ${byUniqueId('api_keys', 2)} WHERE workspace_id = $1`, [workspaceId, after.id]);
      if (!r) throw unknownCursor();
      t = r.created_at;
    }
    // created_at >= $3 takes the index's range; the id decides among keys made in the same millisecond.
    const rows = await all<ApiKeyRow>(
      q,
      `SELECT ${KEY_COLUMNS} FROM api_keys
       WHERE workspace_id = $1 AND ($2 OR NOT all_workspaces) AND created_at >= $3 AND (created_at > $3 OR id > $4)
       ORDER BY created_at, id LIMIT $5`,
      [workspaceId, withOperatorKeys, t, after?.id ?? '', limit + 1],
    );
    return createdPage(rows, limit, toApiKey);
  },
  async getApiKey(q: Q, workspaceId: string, id: string): Promise<ApiKey | null> {
    const r = await first<ApiKeyRow>(q, `SELECT ${KEY_COLUMNS} FROM ${byUniqueId('api_keys', 2)} WHERE workspace_id = $1`, [workspaceId, id]);
    return r ? toApiKey(r) : null;
  },
  async getApiKeyById(q: Q, id: string): Promise<ApiKey | null> {
    const r = await lookup<ApiKeyRow>(q, `SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [id]);
    return r ? toApiKey(r) : null;
  },
};

export const keyWrites = {
  async insertWorkspace(q: Q, ws: Workspace, isDefault: boolean): Promise<void> {
    // The default only if none is there yet (invariant 22): the caller reads back the one that is.
    const ifNone = isDefault ? ' ON CONFLICT DO NOTHING' : '';
    await run(q, `INSERT INTO workspaces (id, name, is_default, created_at) VALUES ($1, $2, $3, $4)${ifNone}`, [ws.id, ws.name, isDefault, ws.createdAt]);
  },
  async insertApiKey(q: Q, key: ApiKey, hash: string, seeded = false): Promise<void> {
    await run(
      q,
      `INSERT INTO api_keys (id, workspace_id, name, role, store_ids, all_workspaces, key_hash, created_at, revoked_at, seeded)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [key.id, key.workspaceId, key.name, key.role, key.storeIds === null ? null : JSON.stringify(key.storeIds), key.allWorkspaces, hash, key.createdAt, key.revokedAt, seeded],
    );
  },
  async markApiKeySeeded(q: Q, id: string): Promise<void> {
    await run(q, 'UPDATE api_keys SET seeded = true WHERE id = $1 AND revoked_at IS NULL', [id]);
  },
  async revokeApiKey(q: Q, workspaceId: string, id: string, now: string): Promise<ApiKey> {
    const r = await first<ApiKeyRow>(q, `SELECT ${KEY_COLUMNS} FROM ${byUniqueId('api_keys', 2)} WHERE workspace_id = $1 FOR UPDATE`, [workspaceId, id]);
    if (!r) throw notFound('API key', id);
    if (r.revoked_at) return toApiKey(r);
    await run(q, 'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [now, id]);
    return toApiKey({ ...r, revoked_at: now });
  },
};
