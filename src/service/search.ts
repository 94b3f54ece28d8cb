/** @module Search over a store's current memories (FTS5 or substring), behind the caller's read grant. */
import type { Storage } from '../storage/port.js';
import type { Caller, SearchPage, SearchQuery, Store } from '../domain/types.js';

export function createSearch({ storage, readable }: { storage: Storage; readable: (caller: Caller, storeId: string) => Promise<Store> }) {
  return async function searchMemories(caller: Caller, storeId: string, q: SearchQuery): Promise<SearchPage> {
    await readable(caller, storeId);
    return storage.searchMemories(storeId, q);
  };
}
