/**
 * @module Waiting for another process's write lock off the serving thread.
 *
 * better-sqlite3 is synchronous: with a busy timeout, a write that met a lock held by another
 * process (an operator's `sqlite3` shell in a transaction, a backup tool, `mnemo keys …`) slept
 * inside SQLite for up to that timeout, and every mount operation and request waited behind it. The
 * serving connection runs with busy_timeout 0 instead (pragmas.ts `serveWithoutWaiting`): the write
 * is refused at once, and is tried again whole on a timer, with a backoff, until LOCK_WAIT_MS after
 * it arrived; then it fails with SQLITE_BUSY as before (`database_locked` at the faces). Meanwhile
 * the port (port-view.ts) holds its writer gate, so later writes queue behind it in order, and lets
 * point reads and the reader threads through, as during a write on another connection: no
 * transaction is open on the connection while it waits, and WAL readers never need the lock.
 */
import { isDatabaseBusy } from '../common/database-busy.js';
import { commitsOf, isRefusedAtBegin, type Db } from './tx.js';

/** How long a write waits for another process's write lock, in all: SQLite's busy timeout of before. */
export const LOCK_WAIT_MS = 5000;
/** The longest pause between two tries: a write lands at most this long after the lock is let go. */
const MAX_PAUSE_MS = 25;

export interface LockWaitOptions {
  /** LOCK_WAIT_MS unless set (a test's short wait). */
  budgetMs?: number;
  /** Milliseconds on a monotonic clock. */
  now?: () => number;
  /** Told +1 when a call starts waiting for the lock, -1 when it stops (written, or refused for good): a gauge. */
  onWait?: (delta: 1 | -1) => void;
}

/** How a failed try says whether it may run again whole: `mark` is commitsOf(db) before it. */
export type Retryable = (err: unknown, mark: number) => boolean;

export interface LockWait {
  /** When a call arriving now stops waiting. */
  deadline(): number;
  /**
   * Tries `attempt` until it succeeds, fails otherwise than `retryable` allows, or meets the lock past
   * `deadline` (its last refusal is thrown). `pausing(true)` before each pause, `pausing(false)` after.
   * With `refused` (a first try's retryable refusal, made by the caller), it pauses before trying.
   */
  untilUnlocked<T>(attempt: () => T | Promise<T>, deadline: number, retryable: Retryable, pausing?: (on: boolean) => void, refused?: { err: unknown }): Promise<T>;
  /** A synchronous call on the connection that wrote nothing before meeting the lock (no transaction open or committed). */
  readonly nothingWritten: Retryable;
  /** An `atomic` whose BEGIN was refused: its function never ran. */
  readonly refusedAtBegin: Retryable;
}

export function createLockWait(db: Db, { budgetMs = LOCK_WAIT_MS, now = () => performance.now(), onWait }: LockWaitOptions = {}): LockWait {
  return {
    deadline: () => now() + budgetMs,
    async untilUnlocked<T>(attempt: () => T | Promise<T>, deadline: number, retryable: Retryable, pausing?: (on: boolean) => void, refused?: { err: unknown }): Promise<T> {
      let failed = refused;
      let waiting = false;
      try {
        for (let tries = 0; ; tries++) {
          if (failed) {
            if (!waiting) onWait?.(1);
            waiting = true;
            const left = deadline - now();
            if (left <= 0) throw failed.err;
            pausing?.(true);
            try {
              await pause(Math.min(2 ** tries, MAX_PAUSE_MS, left));
            } finally {
              pausing?.(false);
            }
          }
          const mark = commitsOf(db);
          try {
            return await attempt();
          } catch (err) {
            if (!retryable(err, mark)) throw err;
            failed = { err };
          }
        }
      } finally {
        if (waiting) onWait?.(-1);
      }
    },
    nothingWritten: (err, mark) => isDatabaseBusy(err) && !db.inTransaction && commitsOf(db) === mark,
    refusedAtBegin: (err) => isRefusedAtBegin(err) && !db.inTransaction,
  };
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
