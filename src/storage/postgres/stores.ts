/** @module PostgreSQL operations for memory stores: settings, archiving, deletion and usage. */
import { applyStorePatch } from '../../domain/store-rules.js';
import { notFound } from '../../domain/errors.js';
import type { Page, Store, StoreListQuery, StorePatch } from '../../domain/types.js';
import { seqBefore, seqPage } from '../cursor.js';
import { all, first, lookup, run, type Q } from './db.js';
import { byUniqueId, toStore, type StoreRow } from './rows.js';
import type { LiveStoreUsage } from '../port.js';

/**
 * The stores anyone sees: not a fork being built (postgres/schema/v6.ts), not a deleted store whose
 * rows are still being removed (postgres/schema/v14.ts).
 */
export const SHOWN = 'forking_since IS NULL AND deleted_at IS NULL';

async function mustGet(q: Q, workspaceId: string, id: string, lock = false): Promise<StoreRow> {
  const row = await first<StoreRow>(q, `SELECT * FROM stores WHERE id = $1 AND workspace_id = $2 AND ${SHOWN}${lock ? ' FOR NO KEY UPDATE' : ''}`, [id, workspaceId]);
  if (!row) throw notFound('memory store', id);
  return row;
}

/** A store's retention as its column holds it (NULL: keep every version). */
const retentionJson = (s: Store): string | null => (s.retention ? JSON.stringify(s.retention) : null);

export const storeReads = {
  async getStore(q: Q, workspaceId: string, id: string): Promise<Store | null> {
    const r = await lookup<StoreRow>(q, `SELECT * FROM ${byUniqueId('stores', 1)} WHERE workspace_id = $2 AND ${SHOWN}`, [id, workspaceId]);
    return r ? toStore(r) : null;
  },
  async getStoreById(q: Q, id: string): Promise<Store | null> {
    const r = await lookup<StoreRow>(q, `SELECT * FROM stores WHERE id = $1 AND ${SHOWN}`, [id]);
    return r ? toStore(r) : null;
  },
  async listStores(q: Q, workspaceId: string, lq: StoreListQuery, only: readonly string[] | null = null): Promise<Page<Store>> {
    const rows = await all<StoreRow>(
      q,
      `SELECT * FROM stores
       WHERE workspace_id = $1 AND seq < $2 AND ${SHOWN} AND ($3 OR archived_at IS NULL)
         AND ($4::text[] IS NULL OR id = ANY($4::text[]))
         AND ($5::text IS NULL OR created_at >= $5) AND ($6::text IS NULL OR created_at <= $6)
       ORDER BY seq DESC LIMIT $7`,
      [workspaceId, seqBefore(lq.page), lq.includeArchived, only, lq.createdGte, lq.createdLte, lq.limit + 1],
    );
    return seqPage(rows, lq.limit, toStore);
  },
  async storeUsage(q: Q, storeId: string): Promise<{ memories: number; bytes: number }> {
    const r = await first<{ memories: number; bytes: number }>(q, 'SELECT memories, bytes FROM store_usage WHERE store_id = $1', [storeId]);
    return r ? { memories: r.memories, bytes: r.bytes } : { memories: 0, bytes: 0 };
  },
};

/** The usage readers see: it needs the clock they hide expired memories by (port/stores.ts `liveStoreUsage`). */
export function liveUsageReads(ctx: { clock: () => string }) {
  return {
    async liveStoreUsage(q: Q, storeId: string): Promise<LiveStoreUsage> {
      // The expired rows through memories_expiring (store_id, expires_at): only those the sweep has yet to delete.
      const r = await first<LiveStoreUsage>(
        q,
        `SELECT u.memories - e.memories AS memories, u.bytes - e.bytes AS bytes, u.bytes - u.checkpoint_bytes - e.bytes AS "memoryBytes"
         FROM store_usage u,
              (SELECT count(*) AS memories, coalesce(sum(content_size_bytes), 0)::bigint AS bytes
               FROM memories WHERE store_id = $1 AND expires_at IS NOT NULL AND expires_at <= $2) e
         WHERE u.store_id = $1`,
        [storeId, ctx.clock()],
      );
      return r ? { memories: r.memories, bytes: r.bytes, memoryBytes: r.memoryBytes } : { memories: 0, bytes: 0, memoryBytes: 0 };
    },
  };
}

export const storeWrites = {
  async insertStore(q: Q, store: Store): Promise<void> {
    await run(
      q,
      `INSERT INTO stores (id, workspace_id, name, description, metadata, created_at, updated_at, archived_at, retention)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [store.id, store.workspaceId, store.name, store.description, JSON.stringify(store.metadata), store.createdAt, store.updatedAt, store.archivedAt,
        retentionJson(store)],
    );
  },
  // The store row is locked first: memory writes lock it too, so a patch or an archive and the
  // writes it must refuse are ordered.
  async updateStore(q: Q, workspaceId: string, id: string, patch: StorePatch, now: string): Promise<Store> {
    const { store, changed } = applyStorePatch(toStore(await mustGet(q, workspaceId, id, true)), patch, now);
    if (changed) {
      await run(q, 'UPDATE stores SET name = $1, description = $2, metadata = $3, retention = $4, updated_at = $5 WHERE id = $6', [
        store.name, store.description, JSON.stringify(store.metadata), retentionJson(store), now, id,
      ]);
    }
    return store;
  },
  async archiveStore(q: Q, workspaceId: string, id: string, now: string): Promise<Store> {
    const row = await mustGet(q, workspaceId, id, true);
    if (row.archived_at) return toStore(row);
    await run(q, 'UPDATE stores SET archived_at = $1, updated_at = $1 WHERE id = $2', [now, id]);
    return toStore({ ...row, archived_at: now, updated_at: now });
  },
  /** Hides the store at once; its rows go afterwards, a step at a time (store-purge.ts, postgres/schema/v14.ts). */
  async deleteStore(q: Q, workspaceId: string, id: string): Promise<void> {
    await mustGet(q, workspaceId, id, true);
    await run(q, 'UPDATE stores SET deleted_at = $1 WHERE id = $2 AND workspace_id = $3', [new Date().toISOString(), id, workspaceId]);
  },
};
