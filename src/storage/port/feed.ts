/**
 * @module The history role (issue 15): a store's versions in commit order (the change feed) and a
 * version's predecessor (diffs). Commit order is schema invariant 14: a number per store taken
 * under the store's row lock in the write's own transaction, so a page read after any commit is a
 * prefix of every later read, on one host or many.
 */
import type { Change, ChangeQuery, MemoryVersion } from '../../domain/types.js';

export interface FeedStorage {
  /**
   * The store's versions whose commit number is above `q.after`, oldest first, at most `q.limit`;
   * view=basic (no content). A read that grows with the store: off the event loop.
   */
  listChanges(storeId: string, q: ChangeQuery): Promise<Change[]>;
  /** The version of the same memory committed just before `versionId` (with its content), or null. */
  previousVersion(storeId: string, versionId: string): Promise<MemoryVersion | null>;
}
