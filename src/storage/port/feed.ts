/**
 * @module The history role (issue 15): a store's versions in commit order (the change feed) and a
 * version's predecessor (diffs). Commit order is schema invariant 15: a number per store taken
 * under the store's row lock in the write's own transaction, so a page read after any commit is a
 * prefix of every later read, on one host or many.
 */
import type { Change, ChangeQuery, MemoryVersion, Retention } from '../../domain/types.js';

export interface FeedStorage {
  /**
   * The store's versions whose commit number is above `q.after`, oldest first, at most `q.limit`;
   * view=basic (no content). A read that grows with the store: off the event loop.
   */
  listChanges(storeId: string, q: ChangeQuery): Promise<Change[]>;
  /**
   * The commit number of the store's last version or prune (0: none yet, or no such store): where a
   * reader that wants only what commits from now on starts (a mount following writes made elsewhere).
   */
  lastCommitSeq(storeId: string): Promise<number>;
  /** The version of the same memory committed just before `versionId` (with its content), or null. */
  previousVersion(storeId: string, versionId: string): Promise<MemoryVersion | null>;
  /** Stores that are not archived and have a retention set (the upkeep prunes only those). */
  storesWithRetention(): Promise<{ id: string; retention: Retention }[]>;
  /**
   * One bounded prune batch, one transaction: looks at the versions after commit number `w.after`
   * (at most `w.scan` of them) and prunes at most `w.max` that the rules let go and nothing holds
   * (schema invariant 16), each recorded with a tombstone in the feed. `scannedTo`: the commit
   * number to continue after (null: the window was empty, the store's history was seen to its end).
   */
  pruneVersions(storeId: string, w: PruneWindow): Promise<{ pruned: number; scannedTo: number | null }>;
}

export interface PruneWindow {
  after: number;
  scan: number;
  max: number;
  /** Versions created before this instant are old enough (null: no age rule). */
  cutoff: string | null;
  /** Versions with this many newer versions of their memory are beyond the last ones kept (null: no such rule). */
  keepLast: number | null;
  /** When the prune happens (the tombstones' pruned_at). */
  now: string;
}
