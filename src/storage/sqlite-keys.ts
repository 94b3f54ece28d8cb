/** @module SQLite statements for key and workspace management: list, look up, revoke. */
import { notFound } from '../errors.js';
import type { ApiKey, Workspace } from '../types.js';
import type { Storage } from './port.js';
import { toApiKey, type ApiKeyRow } from './rows.js';
import { writeTx, type Db } from './tx.js';

type KeyStatements = Pick<Storage, 'getWorkspace' | 'listWorkspaces' | 'listApiKeys' | 'getApiKey' | 'revokeApiKey'>;

const KEY_COLUMNS = 'id, workspace_id, name, role, store_ids, all_workspaces, created_at, revoked_at';

interface WorkspaceRow {
  id: string;
  name: string;
  created_at: string;
}

const toWorkspace = (r: WorkspaceRow): Workspace => ({ id: r.id, name: r.name, createdAt: r.created_at });

export function createKeyStatements(db: Db): KeyStatements {
  const q = {
    getWs: db.prepare('SELECT id, name, created_at FROM workspaces WHERE id = ?'),
    listWs: db.prepare('SELECT id, name, created_at FROM workspaces ORDER BY is_default DESC, created_at, id'),
    listKeys: db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE workspace_id = ? ORDER BY created_at, id`),
    getKey: db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE workspace_id = ? AND id = ?`),
    revoke: db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
  };

  return {
    getWorkspace(id) {
      const r = q.getWs.get(id) as WorkspaceRow | undefined;
      return r ? toWorkspace(r) : null;
    },
    listWorkspaces() {
      return (q.listWs.all() as WorkspaceRow[]).map(toWorkspace);
    },
    listApiKeys(workspaceId) {
      return (q.listKeys.all(workspaceId) as ApiKeyRow[]).map(toApiKey);
    },
    getApiKey(workspaceId, id) {
      const r = q.getKey.get(workspaceId, id) as ApiKeyRow | undefined;
      return r ? toApiKey(r) : null;
    },
    revokeApiKey: writeTx(db, (workspaceId: string, id: string, now: string): ApiKey => {
      const r = q.getKey.get(workspaceId, id) as ApiKeyRow | undefined;
      if (!r) throw notFound('API key', id);
      if (r.revoked_at) return toApiKey(r);
      q.revoke.run(now, id);
      return toApiKey({ ...r, revoked_at: now });
    }),
  };
}
