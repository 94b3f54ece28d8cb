/** @module The stores role: a workspace's memory stores, their settings and what they hold. */
import type { Page, Store, StoreListQuery, StorePatch } from '../../domain/types.js';

/** What a store's limits are checked against. */
export interface StoreUsage {
  memories: number;
  /** The memories' bytes and the store's checkpoints' (what MNEMO_STORE_MAX_BYTES and a mount's `df` count). */
  bytes: number;
}

/** A store's usage as readers see it (`liveStoreUsage`), with its memories' bytes apart from its checkpoints'. */
export interface LiveStoreUsage extends StoreUsage {
  /** The live memories' `content_size_bytes` summed, checkpoints left out: what the API lists for them. */
  memoryBytes: number;
}

export interface StoreStorage {
  insertStore(store: Store): Promise<void>;
  getStore(workspaceId: string, id: string): Promise<Store | null>;
  /** A store by id alone: for the mount, which is bound to a store, not a caller. */
  getStoreById(id: string): Promise<Store | null>;
  /** `only`: the stores a scoped key may see (null: all of the workspace's). */
  listStores(workspaceId: string, q: StoreListQuery, only?: readonly string[] | null): Promise<Page<Store>>;
  /** Merges the patch (src/domain/store-rules.ts decides); refuses (archived) once the store is archived. */
  updateStore(workspaceId: string, id: string, patch: StorePatch, now: string): Promise<Store>;
  /** Sets archived_at once; archiving an archived store returns it unchanged. */
  archiveStore(workspaceId: string, id: string, now: string): Promise<Store>;
  /** Deletes the store with its memories, versions, checkpoints and the receipts naming it: no read finds them after this, though their rows may go later (`purgeDeletedStores`). */
  deleteStore(workspaceId: string, id: string): Promise<void>;
  /** How many memories the store holds, and the bytes of those and of its checkpoints: one indexed row (sqlite/schema/limits.ts). */
  storeUsage(storeId: string): Promise<StoreUsage>;
  /**
   * The usage as readers see it (the web console's store page): `storeUsage` less the memories that
   * expired by the adapter's clock and that no write or sweep has deleted yet. Those are found through
   * the expiry index, so the cost is as many as expired since the last sweep, not the store's size.
   * The memories' bytes alone come from the same row (its `checkpoint_bytes`), not from a sum.
   */
  liveStoreUsage(storeId: string): Promise<LiveStoreUsage>;
}
