/** @module The page-key role: the database's key that seals page cursors (domain/page-scope.ts). */
import type { PageKey } from '../../domain/page-scope.js';

export type { PageKey };

export interface PageKeyStorage {
  /**
   * The key, read once when the storage opened (synchronous: kept in memory). Each storage answers
   * its own database's, so storages open side by side in one process never share one.
   */
  pageKey(): PageKey;
}
