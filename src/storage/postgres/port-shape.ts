/**
 * @module TEMPORARY (issue 14 merge): the storage port as it is becoming (helper h-async): every
 * method returns a Promise except the three local counters, and `atomic` hands its function a
 * transaction view through which the transaction's calls go (`tx.atomic` nests as a savepoint).
 * The PostgreSQL adapter is typed against this shape; at the merge the lead replaces `AsyncStorage`
 * with the port's own `Storage` and deletes this file.
 */
import type { AtomicOptions, Storage } from '../port.js';

/** The port methods that stay synchronous: local counters a mount asks on every file operation. */
type SyncCounters = 'changeMark' | 'ownWriteMark' | 'unsyncedCommits';

type Promised<F> = F extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;

export type AsyncStorage = {
  [K in Exclude<keyof Storage, 'atomic' | SyncCounters>]: Promised<Storage[K]>;
} & Pick<Storage, SyncCounters> & {
  atomic<T>(fn: (tx: AsyncStorage) => Promise<T>, options?: AtomicOptions): Promise<T>;
};
