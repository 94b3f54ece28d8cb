/**
 * @module The pragmas every writable connection to the database file runs with: the serving
 * connection (open.ts) and the writer thread's connections for a directory move and heavy index turns (reader-worker.ts).
 */
import type { Db } from './tx.js';
import { LOCK_WAIT_MS } from './lock-wait.js';

/**
 * WAL with synchronous=FULL: a commit is on disk before the call returns (this build defaults WAL
 * to NORMAL, which can lose the last commits on power loss). Only `atomic(fn, {durable: false})`
 * runs one transaction at NORMAL and puts FULL back after it (sqlite/sync.ts). secure_delete zeroes freed cells so
 * that redacted bytes do not linger in free space.
 */
export function applyPragmas(db: Db, synchronous: 'FULL' | 'NORMAL'): void {
  // First, so that opening the file beside a busy server (its migration included) waits instead of
  // failing at once; once open, the connection stops waiting inside SQLite (`serveWithoutWaiting`).
  db.pragma(`busy_timeout = ${LOCK_WAIT_MS}`);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma('foreign_keys = ON');
  db.pragma('secure_delete = ON');
}

/**
 * temp_store=MEMORY keeps savepoints' sub-journals (and statement journals) in memory. Every write
 * that joins a held batch or an API group is a savepoint, and a savepoint that changes more than
 * 64 KiB of pages (a 4 KiB save touches about 20) spilled its sub-journal to a file in /var/tmp:
 * about three saves in four created, wrote and unlinked one, ~30 writes each, and the pages it
 * copied (a text being redacted among them) stayed in that disk's free blocks. In memory the
 * serving thread spends 8–10% less CPU per mount save, and no page leaves the database's own
 * files. Set after the migrations: one of them may rewrite a whole table in one statement,
 * whose statement journal could then hold a copy of the table in memory; at start-up, nothing
 * waits on its temp file.
 */
export function keepJournalsInMemory(db: Db): void {
  db.pragma('temp_store = MEMORY');
}

/**
 * busy_timeout=0 on an open connection that serves the port: a write that meets another process's
 * write lock is refused at once, and the port tries it again on a timer (lock-wait.ts) instead of
 * SQLite sleeping on the thread that serves every mount and request. Reads in WAL never need the lock.
 */
export function serveWithoutWaiting(db: Db): void {
  db.pragma('busy_timeout = 0');
}

/**
 * Runs `fn` with the connection's busy_timeout at `ms`, then puts its own back: a serving
 * connection has none (sqlite/lock-wait.ts), the writer thread's waits.
 */
export function withBusyTimeout<T>(db: Db, ms: number, fn: () => T): T {
  const own = db.pragma('busy_timeout', { simple: true }) as number;
  if (own === ms) return fn();
  db.pragma(`busy_timeout = ${ms}`);
  try {
    return fn();
  } finally {
    db.pragma(`busy_timeout = ${own}`);
  }
}
