/**
 * @module The transactions role: several port writes as one transaction (a mutation and its
 * receipt; a group of API writes; a mount's save), and commits that reach the disk later (DESIGN §5).
 *
 * The calls of a transaction go through the `tx` it hands its function, explicitly: `tx` is the
 * whole port (Storage) bound to that transaction (on PostgreSQL its pooled client; on SQLite the one connection).
 * Calls through the outer port while a transaction is open wait until it ends, so they never join
 * it by accident; a call through the outer port from inside the transaction's function would wait
 * for itself (a deadlock): inside, use only `tx`. No AsyncLocalStorage carries the transaction
 * implicitly: in Node 20 it makes every await about 3x slower once enabled.
 */
import type { JournaledWrite } from './memories.js';

export interface AtomicOptions {
  /**
   * false: the commit need not be on disk when the call returns, only safe from a crash of this
   * process (in the OS page cache); `syncCommits` makes it durable. A mount's saves (DESIGN §5).
   * Inside another transaction the outermost one decides. Default true: on disk at commit.
   */
  durable?: boolean;
  /**
   * A mount's write (with `durable: false`), as data: the adapter may answer before the commit, once
   * the write is visible to every reader of this storage and kept where a crash of this process
   * cannot lose it, and commit it with the writes around it shortly after (sqlite/write-behind.ts).
   * `fn` must make exactly this write. Ignored inside another transaction and by adapters that
   * commit every write at once (PostgreSQL).
   */
  journal?: JournaledWrite;
}

/** `Tx`: the whole port (Storage), as the transaction's view of it; a parameter so that this file imports nothing. */
export interface TransactionStorage<Tx> {
  /**
   * Runs `fn` as one transaction over `tx` (commit when its promise resolves, roll back when it
   * rejects), e.g. a mutation and its receipt. `tx.atomic` nests: a savepoint, rolled back alone.
   */
  atomic<T>(fn: (tx: Tx) => Promise<T>, options?: AtomicOptions): Promise<T>;
  /** Commits made with `durable: false` that may not be on disk yet (0 once `syncCommits` has run); a local counter, synchronous. */
  unsyncedCommits(): number;
  /**
   * Resolves once every commit made before the call is on disk (a no-op when none is pending);
   * rejects with the disk's error. Asynchronous: the event loop keeps serving meanwhile.
   */
  syncCommits(): Promise<void>;
}
