/** @module SQLite statements for workspaces, API keys and memory stores. */
import { notFound } from '../errors.js';
import { archivedStore } from '../memories.js';
import { assertMetadataCount } from '../validate.js';
import type { ApiKey, Page, Store, StoreListQuery, StorePatch, Workspace } from '../types.js';
import { cursorNumber, decodeCursor, encodeCursor } from './cursor.js';
import type { Storage } from './port.js';
import { toApiKey, toStore, type ApiKeyRow, type StoreRow } from './rows.js';
import type { SyncReads } from './sqlite-reads.js';
import type { SearchIndex } from './sqlite-search-index.js';
import { writeTx, type Db } from './tx.js';

type StoreStatements = Pick<
  Storage,
  | 'defaultWorkspace'
  | 'insertWorkspace'
  | 'insertApiKey'
  | 'findApiKeyByHash'
  | 'seededApiKey'
  | 'markApiKeySeeded'
  | 'countApiKeys'
  | 'insertStore'
  | 'getStore'
  | 'getStoreById'
  | 'updateStore'
  | 'archiveStore'
  | 'deleteStore'
  | 'storeUsage'
> &
  Pick<SyncReads, 'listStores'>;

export function createStoreStatements(db: Db, index: SearchIndex): StoreStatements {
  const q = {
    defaultWs: db.prepare('SELECT id, name, created_at FROM workspaces WHERE is_default = 1 LIMIT 1'),
    insertWs: db.prepare('INSERT INTO workspaces (id, name, is_default, created_at) VALUES (?, ?, ?, ?)'),
    insertKey: db.prepare(
      `INSERT INTO api_keys (id, workspace_id, name, role, store_ids, all_workspaces, key_hash, created_at, revoked_at, seeded)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    seededKey: db.prepare(
      'SELECT id, workspace_id, name, role, store_ids, all_workspaces, created_at, revoked_at, key_hash FROM api_keys WHERE seeded = 1 AND revoked_at IS NULL',
    ),
    markSeeded: db.prepare('UPDATE api_keys SET seeded = 1 WHERE id = ? AND revoked_at IS NULL'),
    keyByHash: db.prepare(
      'SELECT id, workspace_id, name, role, store_ids, all_workspaces, created_at, revoked_at FROM api_keys WHERE key_hash = ?',
    ),
    countKeys: db.prepare('SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NULL'),
    insertStore: db.prepare(
      `INSERT INTO stores (id, workspace_id, name, description, metadata, created_at, updated_at, archived_at)
       VALUES (@id, @workspaceId, @name, @description, @metadata, @createdAt, @updatedAt, @archivedAt)`,
    ),
    getStore: db.prepare('SELECT * FROM stores WHERE id = ? AND workspace_id = ?'),
    getStoreById: db.prepare('SELECT * FROM stores WHERE id = ?'),
    listStores: db.prepare(
      `SELECT * FROM stores
       WHERE workspace_id = @ws AND seq < @before
         AND (@all = 1 OR archived_at IS NULL)
         AND (@only IS NULL OR id IN (SELECT value FROM json_each(@only)))
         AND (@gte IS NULL OR created_at >= @gte) AND (@lte IS NULL OR created_at <= @lte)
       ORDER BY seq DESC LIMIT @limit`,
    ),
    updateStore: db.prepare(
      'UPDATE stores SET name = ?, description = ?, metadata = ?, updated_at = ? WHERE id = ?',
    ),
    archiveStore: db.prepare('UPDATE stores SET archived_at = ?, updated_at = ? WHERE id = ?'),
    deleteStore: db.prepare('DELETE FROM stores WHERE id = ? AND workspace_id = ?'),
    usage: db.prepare('SELECT memories, bytes FROM store_usage WHERE store_id = ?'),
  };

  function mustGet(workspaceId: string, id: string): StoreRow {
    const row = q.getStore.get(id, workspaceId) as StoreRow | undefined;
    if (!row) throw notFound('memory store', id);
    return row;
  }

  return {
    defaultWorkspace(): Workspace | null {
      const r = q.defaultWs.get() as { id: string; name: string; created_at: string } | undefined;
      return r ? { id: r.id, name: r.name, createdAt: r.created_at } : null;
    },
    insertWorkspace(ws, isDefault) {
      q.insertWs.run(ws.id, ws.name, isDefault ? 1 : 0, ws.createdAt);
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
    findApiKeyByHash(hash) {
      const r = q.keyByHash.get(hash) as ApiKeyRow | undefined;
      return r ? toApiKey(r) : null;
    },
    countApiKeys() {
      return (q.countKeys.get() as { n: number }).n;
    },

    insertStore(store) {
      q.insertStore.run({ ...store, metadata: JSON.stringify(store.metadata) });
    },
    getStore(workspaceId, id) {
      const r = q.getStore.get(id, workspaceId) as StoreRow | undefined;
      return r ? toStore(r) : null;
    },
    getStoreById(id) {
      const r = q.getStoreById.get(id) as StoreRow | undefined;
      return r ? toStore(r) : null;
    },
    listStores(workspaceId, lq: StoreListQuery, only: readonly string[] | null = null): Page<Store> {
      const c = decodeCursor(lq.page);
      const rows = q.listStores.all({
        ws: workspaceId,
        before: c ? cursorNumber(c, 's') : Number.MAX_SAFE_INTEGER,
        all: lq.includeArchived ? 1 : 0,
        only: only === null ? null : JSON.stringify(only),
        gte: lq.createdGte,
        lte: lq.createdLte,
        limit: lq.limit + 1,
      }) as StoreRow[];
      const more = rows.length > lq.limit;
      const page = rows.slice(0, lq.limit);
      return { data: page.map(toStore), nextPage: more ? encodeCursor({ s: page[page.length - 1]!.seq }) : null };
    },
    updateStore: writeTx(db, (workspaceId: string, id: string, patch: StorePatch, now: string): Store => {
        const row = mustGet(workspaceId, id);
        if (row.archived_at) throw archivedStore(id);
        // A Map, not property assignment: a "__proto__" key must stay an ordinary key.
        const metadata = new Map(Object.entries(JSON.parse(row.metadata) as Record<string, string>));
        for (const [k, v] of Object.entries(patch.metadata ?? {})) {
          if (v === null) metadata.delete(k);
          else metadata.set(k, v);
        }
        assertMetadataCount(metadata.size);
        const next = {
          name: patch.name ?? row.name,
          description: patch.description ?? row.description,
          metadata: JSON.stringify(Object.fromEntries(metadata)),
        };
        if (next.name === row.name && next.description === row.description && next.metadata === row.metadata) {
          return toStore(row);
        }
        q.updateStore.run(next.name, next.description, next.metadata, now, id);
        return toStore({ ...row, ...next, updated_at: now });
      }),
    archiveStore: writeTx(db, (workspaceId: string, id: string, now: string): Store => {
        const row = mustGet(workspaceId, id);
        if (row.archived_at) return toStore(row);
        q.archiveStore.run(now, now, id);
        return toStore({ ...row, archived_at: now, updated_at: now });
      }),
    deleteStore: writeTx(db, (workspaceId: string, id: string): void => {
        mustGet(workspaceId, id);
        // The delete takes the versions whose text the index needs to forget these memories.
        index.unindexStore(id);
        q.deleteStore.run(id, workspaceId);
      }),
    storeUsage(storeId) {
      const r = q.usage.get(storeId) as { memories: number; bytes: number } | undefined;
      return r ? { memories: r.memories, bytes: r.bytes } : { memories: 0, bytes: 0 };
    },
  };
}
