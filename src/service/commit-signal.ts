/**
 * @module Commit signal: the service tells it after each write of this process commits, and the
 * change feed's followers wake on it (src/service/feed.ts) instead of polling for their own
 * server's writes. Other processes' commits (`mnemo mount` on the same file, other PostgreSQL
 * hosts) are not heard here: followers also poll the storage's change mark for those.
 */
export interface CommitSignal {
  /** Something committed in `storeId` (null: in some stores, e.g. an expiry sweep). */
  notify(storeId: string | null): void;
  /** Calls `fn` after each commit; returns the unsubscribe. */
  subscribe(fn: (storeId: string | null) => void): () => void;
  /** How many subscribers there are (a gauge, and the tests' check that streams clean up). */
  count(): number;
}

export function createCommitSignal(): CommitSignal {
  const listeners = new Set<(storeId: string | null) => void>();
  return {
    notify(storeId) {
      for (const fn of listeners) fn(storeId);
    },
    subscribe(fn) {
      // A wrapper per call, so subscribing the same function twice needs two unsubscribes.
      const own = (id: string | null) => fn(id);
      listeners.add(own);
      return () => listeners.delete(own);
    },
    count: () => listeners.size,
  };
}
