/** @module SQLite statements for memory stores: their settings, archiving, deletion and usage. */
import { applyStorePatch } from '../../domain/store-rules.js';
import { notFound } from '../../domain/errors.js';
import type { Page, Store, StoreListQuery, StorePatch } from '../../domain/types.js';
import { seqBefore, seqPage } from '../cursor.js';
import type { StoreStorage } from '../port.js';
import { toStore, type StoreRow } from '../common/rows.js';
import type { Synchronous, SyncReads } from './reads.js';
import { writeTx, type Db } from './tx.js';

/** A store anyone may see: not a fork still being built, not deleted. */
export const SHOWN = 'forking_since IS NULL AND deleted_at IS NULL';

export type StoreStatements = Omit<Synchronous<StoreStorage>, 'listStores'> &
  Pick<SyncReads, 'listStores'> & {
    /** Whether `getStore` would find the store, without reading its row: a write's admission and a retrieve ask only that. */
    storeShown(workspaceId: string, id: string): boolean;
  };

export function createStoreStatements(db: Db): StoreStatements {
  const q = {
    insertStore: db.prepare(
      `INSERT INTO stores (id, workspace_id, name, description, metadata, created_at, updated_at, archived_at, retention)
       VALUES (@id, @workspaceId, @name, @description, @metadata, @createdAt, @updatedAt, @archivedAt, @retention)`,
    ),
    // A fork being built (forking_since set) is no store yet to anyone (sqlite/schema/forks.ts), and a
    // deleted one (deleted_at set) none any more while its rows are removed (sqlite/store-purge.ts).
    getStore: db.prepare(`SELECT * FROM stores WHERE id = ? AND workspace_id = ? AND ${SHOWN}`),
    getStoreById: db.prepare(`SELECT * FROM stores WHERE id = ? AND ${SHOWN}`),
    storeShown: db.prepare(`SELECT 1 FROM stores WHERE id = ? AND workspace_id = ? AND ${SHOWN}`).pluck(),
    listStores: db.prepare(
      `SELECT * FROM stores
       WHERE workspace_id = @ws AND seq < @before AND ${SHOWN}
         AND (@all = 1 OR archived_at IS NULL)
         AND (@only IS NULL OR id IN (SELECT value FROM json_each(@only)))
         AND (@gte IS NULL OR created_at >= @gte) AND (@lte IS NULL OR created_at <= @lte)
       ORDER BY seq DESC LIMIT +@limit`,
    ),
    updateStore: db.prepare(
      'UPDATE stores SET name = ?, description = ?, metadata = ?, retention = ?, updated_at = ? WHERE id = ?',
    ),
    archiveStore: db.prepare('UPDATE stores SET archived_at = ?, updated_at = ? WHERE id = ?'),
    hideStore: db.prepare(`UPDATE stores SET deleted_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ? AND workspace_id = ?`),
    usage: db.prepare('SELECT memories, bytes, checkpoint_bytes FROM store_usage WHERE store_id = ?'),
    // Through memories_expiring (store_id, expires_at): only the rows past their expiry, which the sweep deletes.
    expiredUsage: db.prepare(
      `SELECT count(*) AS memories, coalesce(sum(content_size_bytes), 0) AS bytes
       FROM memories WHERE store_id = ? AND expires_at IS NOT NULL AND expires_at <= mnemo_now()`,
    ),
  };

  function mustGet(workspaceId: string, id: string): StoreRow {
    const row = q.getStore.get(id, workspaceId) as StoreRow | undefined;
    if (!row) throw notFound('memory store', id);
    return row;
  }

  return {
    insertStore(store) {
      const { retention, forkedFrom: _fork, ...row } = store;
      q.insertStore.run({ ...row, metadata: JSON.stringify(store.metadata), retention: retention ? JSON.stringify(retention) : null });
    },
    getStore(workspaceId, id) {
      const r = q.getStore.get(id, workspaceId) as StoreRow | undefined;
      return r ? toStore(r) : null;
    },
    storeShown(workspaceId, id) {
      return q.storeShown.get(id, workspaceId) !== undefined;
    },
    getStoreById(id) {
      const r = q.getStoreById.get(id) as StoreRow | undefined;
      return r ? toStore(r) : null;
    },
    listStores(workspaceId, lq: StoreListQuery, only: readonly string[] | null = null): Page<Store> {
      const rows = q.listStores.all({
        ws: workspaceId,
        before: seqBefore(lq.page),
        all: lq.includeArchived ? 1 : 0,
        only: only === null ? null : JSON.stringify(only),
        gte: lq.createdGte,
        lte: lq.createdLte,
        limit: lq.limit + 1,
      }) as StoreRow[];
      return seqPage(rows, lq.limit, toStore);
    },
    updateStore: writeTx(db, (workspaceId: string, id: string, patch: StorePatch, now: string): Store => {
        const { store, changed } = applyStorePatch(toStore(mustGet(workspaceId, id)), patch, now);
        if (changed) {
          q.updateStore.run(store.name, store.description, JSON.stringify(store.metadata), store.retention ? JSON.stringify(store.retention) : null, now, id);
        }
        return store;
      }),
    archiveStore: writeTx(db, (workspaceId: string, id: string, now: string): Store => {
        const row = mustGet(workspaceId, id);
        if (row.archived_at) return toStore(row);
        q.archiveStore.run(now, now, id);
        return toStore({ ...row, archived_at: now, updated_at: now });
      }),
    deleteStore: writeTx(db, (workspaceId: string, id: string): void => {
        mustGet(workspaceId, id);
        // Hidden at once; the upkeep removes its rows in short steps (sqlite/store-purge.ts).
        q.hideStore.run(id, workspaceId);
      }),
    storeUsage(storeId) {
      const r = q.usage.get(storeId) as { memories: number; bytes: number } | undefined;
      return r ? { memories: r.memories, bytes: r.bytes } : { memories: 0, bytes: 0 };
    },
    liveStoreUsage(storeId) {
      const r = q.usage.get(storeId) as { memories: number; bytes: number; checkpoint_bytes: number } | undefined;
      if (!r) return { memories: 0, bytes: 0, memoryBytes: 0 };
      const e = q.expiredUsage.get(storeId) as { memories: number; bytes: number };
      return { memories: r.memories - e.memories, bytes: r.bytes - e.bytes, memoryBytes: r.bytes - r.checkpoint_bytes - e.bytes };
    },
  };
}
