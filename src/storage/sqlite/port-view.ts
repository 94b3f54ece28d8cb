/**
 * @module The port's promises over the one SQLite connection, and the writer gate that keeps an
 * open `atomic` transaction to itself.
 *
 * The SQL modules answer synchronously; the port's methods return those answers as settled
 * promises, so a transaction whose function awaits only its `tx` calls runs start to commit within
 * one macrotask, as before. One connection has one transaction at a time, though: while an `atomic`
 * is open (its function may await something else, a timer or another service), a call that arrives
 * through the outer port would run inside it and commit or roll back with it. The gate makes such
 * calls wait until the transaction ends, in arrival order; the `tx` view handed to the transaction
 * bypasses it. PostgreSQL gets the same from a pooled client per transaction.
 */
import { MnemoError } from '../../domain/errors.js';
import type { AtomicOptions, Storage } from '../port.js';
import type { Synchronous } from './reads.js';
import { asyncTx, commitsOf, settleHeld, type Db } from './tx.js';
import { createLockWait, type LockWaitOptions, type Retryable } from './lock-wait.js';
import type { WalSync } from './sync.js';
import type { WriteBehind } from './write-behind.js';

/** The methods that answer on the connection at once; the port wraps each in a settled promise. */
export type ConnectionMethods = Synchronous<Omit<Storage, LocalMethod | AsyncMethod | MixedMethod | 'atomic' | 'close'>> & {
  [M in MixedMethod]: (...args: Parameters<Storage[M]>) => Awaited<ReturnType<Storage[M]>> | ReturnType<Storage[M]>;
};

/**
 * Methods that answer on the connection at once when the answer is small, and otherwise hand back a
 * reader thread's promise (a big directory's listing: sqlite/mount-view.ts); the port adopts either.
 */
type MixedMethod = 'listDirectory';

/** Counters kept in memory: synchronous in the port too (port/index.ts says why). */
type LocalMethod = 'changeMark' | 'ownWriteMark' | 'onMarkMoved' | 'keyMark' | 'unsyncedCommits' | 'keepsSearchBacklog' | 'pageKey';

/** Methods that may write on another connection (PortParts.asideWrites). */
type AsideMethod = 'moveTree' | 'indexSearchBacklog' | 'eraseSearchRemnants' | 'purgeDeletedStores';

/** Runs `write` on another connection, this one's writers held back until it settles (the caller holds the gate). */
export type Elsewhere = <T>(write: () => Promise<T>) => Promise<T>;

/** Methods that are promises already (reader threads, WAL syncs). */
type AsyncMethod =
  | 'searchMemories' | 'listMemories' | 'listStores' | 'listVersions' | 'listChanges' | 'integrityCheck' | 'domainCheck' | 'searchBacklog'
  | 'listDirectoryAsOf' | 'hasMemoriesUnderAsOf' | 'syncCommits';

export interface PortParts {
  connection: ConnectionMethods;
  /**
   * Port methods that may write on another connection (the writer thread's: sqlite/readers.ts): a
   * directory move, the search index's heavy turns, a deleted store's removal. Each runs holding the gate, and hands what it
   * writes there to `elsewhere`, which holds the connection's writers back while it runs and lets
   * ASIDE_READS and the reads through: they see the store as it was until that write commits.
   * Inside an `atomic` (the `tx` view) the connection's own method runs, in that transaction.
   */
  asideWrites?: { [M in AsideMethod]?: (elsewhere: Elsewhere, ...args: Parameters<NonNullable<Storage[M]>>) => ReturnType<NonNullable<Storage[M]>> };
  reads: Pick<Storage, AsyncMethod>;
  /** Reads that differ inside a transaction (a search's backlog drain must not wait at the gate for its own transaction). */
  txReads?: Partial<Pick<Storage, AsyncMethod>>;
  local: Pick<Storage, LocalMethod>;
  close(): void;
}

/**
 * Point reads that run on the connection even while the gate is held by a write made on another
 * connection (`aside`): no transaction is open on this one then, and WAL lets it read beside that
 * writer. A mount's stat and open, an API retrieve and its key's lookup keep answering. Named by
 * the connection's own method names, so a method renamed or removed fails the build.
 */
const ASIDE_READS: ReadonlySet<string> = new Set<keyof ConnectionMethods>([
  'getStore', 'getStoreById', 'getWorkspace', 'defaultWorkspace', 'findApiKeyByHash', 'getApiKey', 'getApiKeyById', 'getSession',
  'getMemory', 'getMemoryInStore', 'getMemoryByPath', 'getMemoryMetaByPath', 'getMemoryBytesByPath', 'listDirectory',
  'hasMemoriesUnder', 'nextExpiry', 'getVersion', 'findReceipt', 'getCheckpoint', 'getLatestCheckpoint',
  'listPathVersions', 'getPathVersion', 'getPathVersionBytes', 'listHistoryDirectory', 'hasHistoryUnder',
  'getMemoryMetaAsOf', 'getMemoryBytesAsOf', 'lastCommitSeq', 'previousVersion',
]);

/** One transaction at a time on the connection; calls from outside it wait their turn. */
export interface WriterGate {
  readonly busy: boolean;
  /** The holder writes on another connection: ASIDE_READS and the reads need not wait. */
  aside: boolean;
  /**
   * The holder waits for another process's write lock (lock-wait.ts), the connection query_only
   * meanwhile: every call may try it, and one that writes is refused whole and queues behind.
   */
  paused: boolean;
  /** Resolves once the caller holds the connection (at once, in a microtask, when nobody does). */
  enter(): Promise<void>;
  leave(): void;
}

export function createWriterGate(): WriterGate {
  let busy = false;
  const waiting: (() => void)[] = [];
  return {
    get busy() {
      return busy;
    },
    aside: false,
    paused: false,
    enter(): Promise<void> {
      if (!busy) {
        busy = true;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    leave(): void {
      const next = waiting.shift();
      if (next) next();
      else busy = false;
    },
  };
}

type AnyFn = (...args: unknown[]) => unknown;

/** SQLITE_READONLY: a write tried on the connection while it is query_only (`WriterGate.paused`). */
function isReadOnlyRefusal(err: unknown): boolean {
  return err instanceof Error && (err as Error & { code?: unknown }).code === 'SQLITE_READONLY';
}

function settled(fn: AnyFn): (...args: unknown[]) => Promise<unknown> {
  return (...args) => {
    try {
      return Promise.resolve(fn(...args));
    } catch (err) {
      return Promise.reject(err);
    }
  };
}

/**
 * The outer port and the `tx` view that `atomic` hands its function (one object: one connection, one
 * transaction). With `writeBehind`, a mount's journaled write joins its held batch instead.
 */
export function bindPort(db: Db, walSync: WalSync, parts: PortParts, writeBehind: WriteBehind | null = null, lockWaitOptions: LockWaitOptions = {}): { port: Storage; gate: WriterGate } {
  const gate = createWriterGate();
  const lockWait = createLockWait(db, lockWaitOptions);
  const tx = {} as Record<string, unknown>;
  const port = {} as Record<string, unknown>;

  // While a write waits for another process's write lock, no transaction is open here, and with
  // query_only nothing can be written: reads run beside it, and a write is refused and queues behind.
  const pausing = (on: boolean): void => {
    db.pragma(`query_only = ${on ? 1 : 0}`);
    gate.aside = on;
    gate.paused = on;
  };
  /** Runs `attempt` holding the gate (entered by the caller), until the lock held outside lets it write. */
  const heldUntilUnlocked = <T>(attempt: () => T | Promise<T>, deadline: number, retryable: Retryable, refused?: { err: unknown }): Promise<T> =>
    lockWait.untilUnlocked(attempt, deadline, retryable, pausing, refused).finally(() => gate.leave());

  for (const [name, fn] of Object.entries(parts.connection as unknown as Record<string, AnyFn>)) {
    tx[name] = settled(fn);
    const aside = ASIDE_READS.has(name);
    port[name] = (...args: unknown[]) => {
      const call = () => fn(...args);
      if (!gate.busy || gate.paused || (aside && gate.aside)) {
        const mark = commitsOf(db);
        const paused = gate.paused;
        try {
          return Promise.resolve(fn(...args));
        } catch (err) {
          const deadline = lockWait.deadline();
          // A write beside one waiting for the lock: refused by query_only, it takes its turn after that one.
          if (paused && isReadOnlyRefusal(err) && commitsOf(db) === mark) {
            return gate.enter().then(() => heldUntilUnlocked(call, deadline, lockWait.nothingWritten));
          }
          if (!lockWait.nothingWritten(err, mark)) return Promise.reject(err);
          // A point read beside someone else's write holds nothing; a write takes the gate, so that later ones queue behind it.
          if (gate.busy) return lockWait.untilUnlocked(call, deadline, lockWait.nothingWritten, undefined, { err });
          return gate.enter().then(() => heldUntilUnlocked(call, deadline, lockWait.nothingWritten, { err }));
        }
      }
      const deadline = lockWait.deadline();
      return gate.enter().then(() => heldUntilUnlocked(call, deadline, lockWait.nothingWritten));
    };
  }
  for (const [name, fn] of Object.entries(parts.reads as unknown as Record<string, AnyFn>)) {
    tx[name] = (parts.txReads as Record<string, AnyFn> | undefined)?.[name] ?? fn;
    // A read on a reader thread does not hold the connection; it only starts after an open
    // transaction, and sees a held batch of mount writes once that has committed (as a WAL sync must).
    port[name] = (...args: unknown[]) => {
      if (!gate.busy || gate.aside) {
        settleHeld(db);
        return fn(...args);
      }
      return gate.enter().then(() => {
        gate.leave();
        settleHeld(db);
        return fn(...args);
      });
    };
  }
  for (const [name, fn] of Object.entries(parts.local as unknown as Record<string, AnyFn>)) {
    tx[name] = fn;
    port[name] = fn;
  }

  const run = <T>(fn: (tx: Storage) => Promise<T>, options?: AtomicOptions): Promise<T> => {
    // Before the relaxed switch, which cannot change `synchronous` inside the held batch's transaction.
    settleHeld(db);
    const body = () => fn(tx as unknown as Storage);
    return options?.durable === false ? walSync.relaxedAsync(() => asyncTx(db, body)) : asyncTx(db, body);
  };
  // Nested: a savepoint of the open transaction (asyncTx knows it is inside one).
  tx['atomic'] = run;
  port['atomic'] = async <T>(fn: (tx: Storage) => Promise<T>, options?: AtomicOptions): Promise<T> => {
    const deadline = lockWait.deadline();
    await gate.enter();
    const journal = writeBehind && options?.journal && options.durable === false ? options.journal : null;
    // Only a refused BEGIN is tried again: `fn` never ran, so nothing of it (in SQLite or not) happens twice.
    return heldUntilUnlocked(() => (journal ? writeBehind!.join(() => fn(tx as unknown as Storage), journal) : run(fn, options)), deadline, lockWait.refusedAtBegin);
  };
  const elsewhere: Elsewhere = async (write) => {
    // The other connection needs the write lock: nothing may be held open on this one.
    settleHeld(db);
    gate.aside = true;
    try {
      return await write();
    } finally {
      gate.aside = false;
    }
  };
  for (const [name, fn] of Object.entries(parts.asideWrites ?? {}) as [string, (e: Elsewhere, ...args: unknown[]) => Promise<unknown>][]) {
    port[name] = async (...args: unknown[]): Promise<unknown> => {
      const deadline = lockWait.deadline();
      await gate.enter();
      return heldUntilUnlocked(() => fn(elsewhere, ...args), deadline, lockWait.nothingWritten);
    };
  }
  tx['close'] = () => Promise.reject(new MnemoError('internal', 'cannot close the storage inside a transaction'));
  port['close'] = async () => {
    if (gate.busy) await gate.enter();
    parts.close();
  };
  return { port: port as unknown as Storage, gate };
}
