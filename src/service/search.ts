/** @module Search over a store's current memories (FTS5 or substring), behind the caller's read grant. */
import { bindPage, scopeTag, unbindPage } from '../domain/page-scope.js';
import type { Storage } from '../storage/port.js';
import type { Caller, SearchPage, SearchQuery, Store } from '../domain/types.js';

export function createSearch({ storage, readable }: { storage: Storage; readable: (caller: Caller, storeId: string) => Promise<Store> }) {
  return async function searchMemories(caller: Caller, storeId: string, q: SearchQuery): Promise<SearchPage> {
    await readable(caller, storeId);
    // Not the mode: the storage refuses a cursor of the other mode with a message that says so.
    const tag = scopeTag('search', storeId, q.q, q.pathPrefix);
    return bindPage(storage.pageKey(), await storage.searchMemories(storeId, { ...q, page: unbindPage(storage.pageKey(), q.page, tag) }), tag);
  };
}
