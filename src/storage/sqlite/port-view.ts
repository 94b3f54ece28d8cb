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
 *
 * A write that meets another process's write lock holds the gate while it waits on a timer
 * (lock-wait.ts): the writes after it queue in order, and the reads run beside it meanwhile.
 */
import { MnemoError } from '../../domain/errors.js';
import type { AtomicOptions, Storage } from '../port.js';
import type { Synchronous } from './reads.js';
import { asyncTx, commitsOf, settleHeld, type Db } from './tx.js';
import { createLockWait, type LockWaitOptions, type Retryable } from './lock-wait.js';
import type { WalSync } from './sync.js';
import type { WriteBehind } from './write-behind.js';

/** The methods that answer on the connection at once; the port wraps each in a settled promise. */
export type ConnectionMethods = Synchronous<Omit<Storage, LocalMethod | AsyncMethod | MixedMethod | 'atomic' | 'close' | 'ownWriteCount'>> & {
  [M in MixedMethod]: (...args: Parameters<Storage[M]>) => Awaited<ReturnType<Storage[M]>> | ReturnType<Storage[M]>;
};

/**
 * Methods that answer on the connection at once when the answer is small, and otherwise hand back a
 * reader thread's promise (a big directory's listing: sqlite/mount-view.ts); the port adopts either.
 */
type MixedMethod = 'listDirectory' | 'listDirectoryNames';

/** Counters kept in memory: synchronous in the port too (port/index.ts says why). */
type LocalMethod = 'changeMark' | 'ownWriteMark' | 'onMarkMoved' | 'keyMark' | 'unsyncedCommits' | 'keepsSearchBacklog' | 'pageKey';

/** Methods that may write on another connection (PortParts.asideWrites). */
type AsideMethod = 'moveTree' | 'indexSearchBacklog' | 'eraseSearchRemnants' | 'purgeDeletedStores';

/** Runs `write` on another connection, this one's writers held back until it settles (the caller holds the gate). */
export type Elsewhere = <T>(write: () => Promise<T>) => Promise<T>;

/** Methods that are promises already (reader threads, WAL syncs). */
type AsyncMethod =
  | 'searchMemories' | 'listMemories' | 'listStores' | 'listVersions' | 'listChanges' | 'integrityCheck' | 'domainCheck' | 'searchBacklog'
  | 'listDirectoryAsOf' | 'hasMemoriesUnderAsOf' | 'syncCommits' | 'listTextHolders';

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
  'getMemory', 'getMemoryInStore', 'getMemoryByPath', 'getMemoryMetaByPath', 'getMemoryMetaById', 'getMemoryBytesByPath', 'listDirectory', 'listDirectoryNames',
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
  /**
   * Resolves true once the caller holds the connection (at once, in a microtask, when nobody does).
   * `beside` is offered each pause of the holder's (`offerBeside`) while the caller waits: returning
   * true, it was answered there, and `enter` resolves false (the caller does not hold the connection).
   */
  enter(beside?: () => boolean): Promise<boolean>;
  leave(): void;
  /** Runs the waiting callers' `beside` in order, at the start of a pause; those answered leave the queue. */
  offerBeside(): void;
}

interface Waiter {
  resolve(held: boolean): void;
  beside: (() => boolean) | undefined;
}

export function createWriterGate(): WriterGate {
  let busy = false;
  let waiting: Waiter[] = [];
  return {
    get busy() {
      return busy;
    },
    aside: false,
    paused: false,
    enter(beside?: () => boolean): Promise<boolean> {
      if (!busy) {
        busy = true;
        return Promise.resolve(true);
      }
      return new Promise<boolean>((resolve) => waiting.push({ resolve, beside }));
    },
    leave(): void {
      const next = waiting.shift();
      if (next) next.resolve(true);
      else busy = false;
    },
    offerBeside(): void {
      const queue = waiting;
      waiting = [];
      const left: Waiter[] = [];
      for (const w of queue) {
        if (w.beside?.()) w.resolve(false);
        else left.push(w);
      }
      // Anyone who queued meanwhile came after those still waiting.
      waiting = [...left, ...waiting];
    },
  };
}

type AnyFn = (...args: unknown[]) => unknown;


function settled(fn: AnyFn): (...args: unknown[]) => Promise<unknown> {
  return (...args) => {
    try {
      return Promise.resolve(fn(...args));
    } catch (err) {
      return Promise.reject(err);
    }
  };
}

/** Wraps a write made on the connection outside the port so that Storage.ownWriteCount counts each call that wrote once. */
export type CountWrites = <A extends unknown[], R>(fn: (...args: A) => R) => (...args: A) => R;

/**
 * The outer port and the `tx` view that `atomic` hands its function (one object: one connection, one
 * transaction). With `writeBehind`, a mount's journaled write joins its held batch instead.
 * `counted`: for the adapter's writes beside the port (SqliteStorage.importWrites), counted as the port's are.
 */
export function bindPort(db: Db, walSync: WalSync, parts: PortParts, writeBehind: WriteBehind | null = null, lockWaitOptions: LockWaitOptions = {}): { port: Storage; gate: WriterGate; counted: CountWrites } {
  const gate = createWriterGate();
  const lockWait = createLockWait(db, lockWaitOptions);
  const tx = {} as Record<string, unknown>;
  const port = {} as Record<string, unknown>;

  // The port's calls that wrote (Storage.ownWriteCount): each counts once, by the statements it ran
  // (ownWriteMark). Counted around each try, holding the connection: no other writer runs meanwhile.
  let writeCalls = 0;
  const statements = parts.local.ownWriteMark;
  const counted: CountWrites = <A extends unknown[], R>(fn: (...args: A) => R) => (...args: A): R => {
    const before = statements();
    let sync = true;
    try {
      const result = fn(...args);
      if (result instanceof Promise) {
        sync = false;
        return result.finally(() => {
          if (statements() !== before) writeCalls += 1;
        }) as R;
      }
      return result;
    } finally {
      if (sync && statements() !== before) writeCalls += 1;
    }
  };

  // While a write waits for another process's write lock, no transaction is open here, and with
  // query_only nothing can be written: reads run beside it, and a write is refused and queues behind.
  const pausing = (on: boolean): void => {
    db.pragma(`query_only = ${on ? 1 : 0}`);
    gate.aside = on;
    gate.paused = on;
    if (on) gate.offerBeside();
  };
  /** Runs `attempt` holding the gate (entered by the caller), until the lock held outside lets it write. */
  const heldUntilUnlocked = <T>(attempt: () => T | Promise<T>, deadline: number, retryable: Retryable, refused?: { err: unknown }): Promise<T> =>
    lockWait.untilUnlocked(attempt, deadline, retryable, pausing, refused).finally(() => gate.leave());

  for (const [name, own] of Object.entries(parts.connection as unknown as Record<string, AnyFn>)) {
    tx[name] = settled(own);
    const aside = ASIDE_READS.has(name);
    const fn = counted(own);
    port[name] = (...args: unknown[]) => {
      if (!gate.busy || gate.paused || (aside && gate.aside)) {
        const mark = commitsOf(db);
        const paused = gate.paused;
        try {
          return Promise.resolve(fn(...args));
        } catch (err) {
          const call = () => fn(...args);
          const deadline = lockWait.deadline();
          // Beside a write waiting for the lock, a write is refused by query_only; and what fails there
          // (an admission's refusal) might not in its turn, after the writes before it: either takes its turn.
          if (paused && commitsOf(db) === mark) {
            return gate.enter().then(() => heldUntilUnlocked(call, deadline, lockWait.nothingWritten));
          }
          if (!lockWait.nothingWritten(err, mark)) return Promise.reject(err);
          // A point read beside someone else's write holds nothing; a write takes the gate, so that later ones queue behind it.
          if (gate.busy) return lockWait.untilUnlocked(call, deadline, lockWait.nothingWritten, undefined, { err });
          return gate.enter().then(() => heldUntilUnlocked(call, deadline, lockWait.nothingWritten, { err }));
        }
      }
      const call = () => fn(...args);
      const deadline = lockWait.deadline();
      // Queued behind a write that then waits for the lock: a read is answered at its next pause.
      let answer: { ok: true; value: unknown } | { ok: false; err: unknown } | null = null;
      const beside = (): boolean => {
        const mark = commitsOf(db);
        try {
          answer = { ok: true, value: fn(...args) };
        } catch (err) {
          // Refused by query_only, or failed on a state the writes queued before it will change: it waits its turn.
          if (commitsOf(db) === mark) return false;
          answer = { ok: false, err };
        }
        return true;
      };
      return gate.enter(beside).then((held) => {
        if (held) return heldUntilUnlocked(call, deadline, lockWait.nothingWritten);
        const a = answer!;
        if (a.ok) return a.value;
        throw a.err;
      });
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
      // Not behind a write waiting for the lock: its pauses let reads through.
      return gate.enter(() => true).then((held) => {
        if (held) gate.leave();
        settleHeld(db);
        return fn(...args);
      });
    };
  }
  for (const [name, fn] of Object.entries(parts.local as unknown as Record<string, AnyFn>)) {
    tx[name] = fn;
    port[name] = fn;
  }
  tx['ownWriteCount'] = port['ownWriteCount'] = () => writeCalls;

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
    return heldUntilUnlocked(counted(() => (journal ? writeBehind!.join(() => fn(tx as unknown as Storage), journal) : run(fn, options))), deadline, lockWait.refusedAtBegin);
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
      return heldUntilUnlocked(counted(() => fn(elsewhere, ...args)), deadline, lockWait.nothingWritten);
    };
  }
  tx['close'] = () => Promise.reject(new MnemoError('internal', 'cannot close the storage inside a transaction'));
  port['close'] = async () => {
    if (gate.busy) await gate.enter();
    parts.close();
  };
  return { port: port as unknown as Storage, gate, counted };
}
