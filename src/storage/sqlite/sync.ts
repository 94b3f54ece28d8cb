/**
 * @module Commits that reach the disk later, and the WAL sync that puts them there (DESIGN §5).
 *
 * A relaxed commit runs at synchronous=NORMAL: in WAL mode its frames are written to the -wal file
 * (the OS page cache) without an fsync, so a crash of this process loses nothing, and a power loss
 * can lose it until the next sync. The pragma cannot change inside a transaction, so it is set
 * before BEGIN and put back to FULL after COMMIT: every other write (the API's) stays durable at
 * its commit, and the connection is always at FULL between operations.
 *
 * The sync is an fdatasync of the -wal file rather than a FULL commit: every commit appends its
 * frames to that one file, so one fdatasync makes every commit written before it durable, which is
 * what fsync(2) on a mounted file promises; a FULL commit would need a write of its own (an empty
 * transaction writes no frames and syncs nothing) and would fsync on the event loop. The fdatasync
 * runs on libuv's thread pool: the file is outside every mount, so it never waits on a FUSE reply
 * (notes §1.5). A checkpoint also syncs the WAL first, and a FULL commit syncs it too, so counting
 * only relaxed commits is conservative: at worst one sync finds nothing left to write.
 */
import { close, closeSync, fdatasync, fsync, open, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Db } from './tx.js';

export interface WalSync {
  /** Runs `fn` (one transaction) at synchronous=NORMAL; inside an open transaction, that one decides. */
  relaxed<T>(fn: () => T): T;
  /** The same for a transaction that spans awaits (open.ts keeps the connection to it meanwhile). */
  relaxedAsync<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Runs `fn` at synchronous=NORMAL without counting it as a commit to sync: for derived data only
   * (the search index and its queue, changed together), whose loss to a power failure leaves the
   * work queued. No sync is owed for it, so nothing waits for one and the gauge stays honest.
   */
  derived<T>(fn: () => T): T;
  /**
   * Sets synchronous=NORMAL for a transaction opened next and committed later by hand (a held batch:
   * sqlite/write-behind.ts); the function returned puts FULL back once it has ended, and counts its
   * commit if it committed. `synchronous` cannot change inside a transaction.
   */
  hold(): (committed: boolean) => void;
  /** Relaxed commits that may not be on disk yet. */
  unsynced(): number;
  /** Resolves once every commit made before the call is on disk; rejects with the disk's error. */
  sync(): Promise<void>;
  /** Closes the -wal descriptor (after a sync in flight); later syncs have nothing to do. */
  close(): void;
}

export function createWalSync(db: Db, file: string, onSync?: (seconds: number) => void): WalSync {
  const wal = `${file}-wal`;
  const inMemory = file === ':memory:' || file === '';
  /** Relaxed commits so far, and how many of them are known to be on disk. */
  let committed = 0;
  let synced = 0;
  let fd: number | null = null;
  let ino = -1;
  let inflight: Promise<void> | null = null;
  let closed = false;

  /** The -wal file's descriptor, reopened if SQLite replaced the file; null if there is none. */
  async function walFd(): Promise<number | null> {
    let current: number;
    try {
      current = statSync(wal).ino;
    } catch (err) {
      // No -wal file: SQLite removed it after a full checkpoint into the (synced) database file.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    if (fd !== null && current === ino) return fd;
    if (fd !== null) closeSync(fd);
    fd = openSync(wal, 'r');
    ino = current;
    // The file's name must survive a power loss too: its directory entry is synced once per file.
    await syncPath(dirname(wal));
    return fd;
  }

  async function syncOnce(): Promise<void> {
    // Every relaxed commit counted here has its frames in the file before the fdatasync starts.
    const upTo = committed;
    const started = performance.now();
    try {
      const f = await walFd();
      if (f !== null) await new Promise<void>((resolve, reject) => fdatasync(f, (err) => (err ? reject(err) : resolve())));
      synced = Math.max(synced, upTo);
      onSync?.((performance.now() - started) / 1000);
    } finally {
      if (closed && fd !== null) {
        closeSync(fd);
        fd = null;
      }
    }
  }

  /** One transaction at synchronous=NORMAL, FULL again after it. */
  function atNormal<T>(fn: () => T): T {
    // Prepared on every call on purpose: SQLite applies `synchronous` when the pragma is
    // compiled, not when it runs, so a statement prepared once would set it only once.
    db.pragma('synchronous = NORMAL');
    try {
      return fn();
    } finally {
      db.pragma('synchronous = FULL');
    }
  }

  return {
    relaxed<T>(fn: () => T): T {
      if (db.inTransaction) return fn();
      const result = atNormal(fn);
      committed++;
      return result;
    },
    derived<T>(fn: () => T): T {
      return db.inTransaction ? fn() : atNormal(fn);
    },
    async relaxedAsync<T>(fn: () => Promise<T>): Promise<T> {
      if (db.inTransaction) return fn();
      db.pragma('synchronous = NORMAL');
      try {
        const result = await fn();
        committed++;
        return result;
      } finally {
        db.pragma('synchronous = FULL');
      }
    },
    hold() {
      db.pragma('synchronous = NORMAL');
      return (didCommit) => {
        if (didCommit) committed++;
        db.pragma('synchronous = FULL');
      };
    },
    unsynced: () => committed - synced,
    async sync(): Promise<void> {
      const target = committed;
      if (inMemory || closed) {
        // Nothing of an in-memory database reaches a disk; a closed one checkpointed at FULL.
        synced = committed;
        return;
      }
      while (synced < target) {
        // One fdatasync at a time; a caller whose commits came after the one in flight waits for the next.
        if (!inflight) inflight = syncOnce().finally(() => (inflight = null));
        await inflight;
      }
    },
    close(): void {
      closed = true;
      if (!inflight && fd !== null) {
        closeSync(fd);
        fd = null;
      }
    },
  };
}

/** fsync of a directory (or any path), off the event loop. */
function syncPath(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    open(path, 'r', (err, d) => {
      if (err) return reject(err);
      fsync(d, (syncErr) => close(d, () => (syncErr ? reject(syncErr) : resolve())));
    });
  });
}
