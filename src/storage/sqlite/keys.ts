/** @module SQLite statements for workspaces and API keys (only a key's hash is stored). */
import type { Synchronous } from './reads.js';
import { notFound } from '../../domain/errors.js';
import type { ApiKey, Workspace } from '../../domain/types.js';
import type { KeyStorage } from '../port.js';
import { KEY_COLUMNS, toApiKey, toWorkspace, type ApiKeyRow, type WorkspaceRow } from '../common/rows.js';
import { writeTx, type Db } from './tx.js';
import { createdAfter, createdPage, unknownCursor } from '../cursor.js';

/** The statements, and a count of the revokes made on this connection (the own part of keyMark()). */
export function createKeyStatements(db: Db): Synchronous<Omit<KeyStorage, 'keyMark'>> & { revokes(): number } {
  // Moves as the revoke is written: a reader that then looks the key up waits at the writer gate
  // (port-view.ts) until that transaction ends, so it finds the revoke unless it rolled back.
  let revokes = 0;
  const q = {
    getWs: db.prepare('SELECT id, name, created_at FROM workspaces WHERE id = ?'),
    listWs: db.prepare('SELECT id, name, created_at FROM workspaces ORDER BY is_default DESC, created_at, id'),
    listKeys: db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE workspace_id = ? ORDER BY created_at, id`),
    // created_at >= @t takes the index's range; the id decides among keys made in the same millisecond.
    keyPage: db.prepare(
      `SELECT ${KEY_COLUMNS} FROM api_keys
       WHERE workspace_id = @ws AND (@ops OR all_workspaces = 0) AND created_at >= @t AND (created_at > @t OR id > @i)
       ORDER BY created_at, id LIMIT +@limit`,
    ),
    keyCreatedAt: db.prepare('SELECT created_at FROM api_keys WHERE workspace_id = ? AND id = ?'),
    getKey: db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE workspace_id = ? AND id = ?`),
    keyById: db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`),
    revoke: db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
    defaultWs: db.prepare('SELECT id, name, created_at FROM workspaces WHERE is_default = 1 LIMIT 1'),
    insertWs: db.prepare('INSERT INTO workspaces (id, name, is_default, created_at) VALUES (?, ?, ?, ?)'),
    // The default only if none is there yet (invariant 22): the caller reads back the one that is.
    insertDefaultWs: db.prepare('INSERT INTO workspaces (id, name, is_default, created_at) VALUES (?, ?, 1, ?) ON CONFLICT DO NOTHING'),
    insertKey: db.prepare(
      `INSERT INTO api_keys (id, workspace_id, name, role, store_ids, all_workspaces, key_hash, created_at, revoked_at, seeded)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    seededKey: db.prepare(`SELECT ${KEY_COLUMNS}, key_hash FROM api_keys WHERE seeded = 1 AND revoked_at IS NULL`),
    markSeeded: db.prepare('UPDATE api_keys SET seeded = 1 WHERE id = ? AND revoked_at IS NULL'),
    keyByHash: db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE key_hash = ?`),
    countKeys: db.prepare('SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NULL'),
  };

  return {
    defaultWorkspace(): Workspace | null {
      const r = q.defaultWs.get() as WorkspaceRow | undefined;
      return r ? toWorkspace(r) : null;
    },
    insertWorkspace(ws, isDefault) {
      if (isDefault) q.insertDefaultWs.run(ws.id, ws.name, ws.createdAt);
      else q.insertWs.run(ws.id, ws.name, 0, ws.createdAt);
    },
    insertApiKey(key: ApiKey, hash: string, seeded = false) {
      const storeIds = key.storeIds === null ? null : JSON.stringify(key.storeIds);
      q.insertKey.run(key.id, key.workspaceId, key.name, key.role, storeIds, key.allWorkspaces ? 1 : 0, hash, key.createdAt, key.revokedAt, seeded ? 1 : 0);
    },
    seededApiKey() {
      const r = q.seededKey.get() as (ApiKeyRow & { key_hash: string }) | undefined;
      return r ? { key: toApiKey(r), hash: r.key_hash } : null;
    },
    markApiKeySeeded(id) {
      q.markSeeded.run(id);
    },
    // One process writes the file (mnemo.lock), and a transaction holds the writer till its end.
    lockKeySeeding() {},
    findApiKeyByHash(hash) {
      const r = q.keyByHash.get(hash) as ApiKeyRow | undefined;
      return r ? toApiKey(r) : null;
    },
    countApiKeys() {
      return (q.countKeys.get() as { n: number }).n;
    },

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
    listApiKeyPage(workspaceId, { limit, page }, withOperatorKeys) {
      const after = createdAfter(page);
      let t = after?.createdAt ?? '';
      if (after && after.createdAt === null) {
        const r = q.keyCreatedAt.get(workspaceId, after.id) as { created_at: string } | undefined;
        if (!r) throw unknownCursor();
        t = r.created_at;
      }
      const rows = q.keyPage.all({ ws: workspaceId, ops: withOperatorKeys ? 1 : 0, t, i: after?.id ?? '', limit: limit + 1 }) as ApiKeyRow[];
      return createdPage(rows, limit, toApiKey);
    },
    getApiKey(workspaceId, id) {
      const r = q.getKey.get(workspaceId, id) as ApiKeyRow | undefined;
      return r ? toApiKey(r) : null;
    },
    getApiKeyById(id) {
      const r = q.keyById.get(id) as ApiKeyRow | undefined;
      return r ? toApiKey(r) : null;
    },
    revokes: () => revokes,
    revokeApiKey: writeTx(db, (workspaceId: string, id: string, now: string): ApiKey => {
      const r = q.getKey.get(workspaceId, id) as ApiKeyRow | undefined;
      if (!r) throw notFound('API key', id);
      if (r.revoked_at) return toApiKey(r);
      q.revoke.run(now, id);
      revokes += 1;
      return toApiKey({ ...r, revoked_at: now });
    }),
  };
}
