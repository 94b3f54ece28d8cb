/**
 * @module The transactions role: several port writes as one transaction (a mutation and its
 * receipt; a group of mount saves), and commits that reach the disk later (DESIGN §5).
 */

export interface AtomicOptions {
  /**
   * false: the commit need not be on disk when the call returns, only safe from a crash of this
   * process (in the OS page cache); `syncCommits` makes it durable. A mount's saves (DESIGN §5).
   * Inside another transaction the outermost one decides. Default true: on disk at commit.
   */
  durable?: boolean;
}

export interface TransactionStorage {
  /** Runs several port writes as one transaction (the writes inside join it), e.g. a mutation and its receipt. */
  atomic<T>(fn: () => T, options?: AtomicOptions): T;
  /** Commits made with `durable: false` that may not be on disk yet (0 once `syncCommits` has run). */
  unsyncedCommits(): number;
  /**
   * Resolves once every commit made before the call is on disk (a no-op when none is pending);
   * rejects with the disk's error. Asynchronous: the event loop keeps serving meanwhile.
   */
  syncCommits(): Promise<void>;
}
