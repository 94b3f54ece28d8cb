/** @module The search role: full-text and substring search over a store's live memories. */
import type { SearchPage, SearchQuery } from '../../domain/types.js';

export interface SearchStorage {
  /** Full-text search first indexes every queued write (or refuses, overloaded), so it always sees every committed one. */
  searchMemories(storeId: string, q: SearchQuery): Promise<SearchPage>;
}
