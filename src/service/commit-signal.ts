/**
 * @module Commit signal: the service tells it after each write of this process commits, and the
 * change feed's followers wake on it (src/service/feed.ts) instead of polling for their own
 * server's writes. Other processes' commits (`mnemo mount` on the same file, other PostgreSQL
 * hosts) are not heard here: followers also poll the storage's change mark for those. Mounts
 * listen too, for writes of their store by anyone but their own session (fs/writes-elsewhere.ts).
 */
import type { Actor } from '../domain/types.js';

/** Told of a commit in `storeId` (null: in some stores) by `actor` (null: not known, or several). */
export type CommitListener = (storeId: string | null, actor: Actor | null) => void;

export interface CommitSignal {
  /** Something committed in `storeId` (null: in some stores, e.g. an expiry sweep), written by `actor` if one is known. */
  notify(storeId: string | null, actor?: Actor | null): void;
  /** Calls `fn` after each commit; returns the unsubscribe. */
  subscribe(fn: CommitListener): () => void;
  /** How many subscribers there are (a gauge, and the tests' check that streams clean up). */
  count(): number;
}

export function createCommitSignal(): CommitSignal {
  const listeners = new Set<CommitListener>();
  return {
    notify(storeId, actor = null) {
      for (const fn of listeners) fn(storeId, actor);
    },
    subscribe(fn) {
      // A wrapper per call, so subscribing the same function twice needs two unsubscribes.
      const own: CommitListener = (id, actor) => fn(id, actor);
      listeners.add(own);
      return () => listeners.delete(own);
    },
    count: () => listeners.size,
  };
}
