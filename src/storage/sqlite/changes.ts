/**
 * @module How a reader can tell that nothing changed: a change mark that moves after any write
 * (another process's within 100 ms), and the next moment a memory of a store expires (expiry hides
 * rows without a write). The mount keeps storage answers while both hold (fs/storage-view.ts).
 */
import type { Synchronous } from './reads.js';
import type { MountViewStorage } from '../port.js';
import { noteCommit, settleHeld, type Db } from './tx.js';

/** How stale a reader may be about commits made by another process. */
const OUTSIDE_CHECK_MS = 100;
const NOT_DATA = /^\s*(BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE|PRAGMA)\b/i;

export interface WriteCounter {
  /** Statements run so far that may have changed rows. */
  count(): number;
  /** Counts a write this process made on another connection (a directory move: sqlite/readers.ts). */
  add(): void;
  /** Told of every count, and of every other move of the change mark (`moved`); returns the unsubscribe. */
  listen(fn: () => void): () => void;
  /** Tells the listeners the change mark moved. */
  moved(): void;
}

/**
 * Counts this connection's data writes in JavaScript: every statement prepared from here on that
 * returns no rows (INSERT, UPDATE, DELETE; the adapter uses no RETURNING) bumps the count when it
 * runs. A mount asks for the mark on every file operation, and a call into SQLite there (even
 * `SELECT total_changes()`) measurably slowed a cached stat. Install before preparing statements.
 * A write that later rolls back still counts: readers only ever drop answers too often. It is also
 * where a write run outside the transaction helpers commits a held batch first (tx.ts).
 */
export function trackWrites(db: Db): WriteCounter {
  let writes = 0;
  const listeners = new Set<() => void>();
  const moved = (): void => {
    for (const fn of listeners) fn();
  };
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => {
    const stmt = prepare(source);
    if (stmt.reader || NOT_DATA.test(source)) return stmt;
    const run = stmt.run.bind(stmt);
    stmt.run = (...params: unknown[]) => {
      // A write outside every transaction helper must not join a held batch of mount saves either.
      settleHeld(db);
      const alone = !db.inTransaction;
      try {
        const result = run(...params);
        // A write outside every transaction commits as it runs (tx.ts commitsOf).
        if (alone) noteCommit(db);
        return result;
      } finally {
        writes += 1;
        moved();
      }
    };
    return stmt;
  }) as Db['prepare'];
  return {
    count: () => writes,
    add: () => {
      writes += 1;
      moved();
    },
    listen(fn) {
      // A wrapper per call, so one function listening twice needs two unsubscribes.
      const own = (): void => fn();
      listeners.add(own);
      return () => listeners.delete(own);
    },
    moved,
  };
}

export interface ChangeStatements extends Pick<Synchronous<MountViewStorage>, 'changeMark' | 'ownWriteMark' | 'nextExpiry' | 'onMarkMoved'> {
  /** The part of changeMark() that counts other processes' commits (looked for as changeMark() looks). */
  outsideMark(): number;
  /** The same count, looked for now (keyMark(): asked once per event-stream poll or stdio tool call, never by a mount). */
  outsideMarkNow(): number;
  /**
   * Runs `fn`, a write this process makes on another connection (a directory move: sqlite/readers.ts),
   * and counts it as its own: the mark moves, and the data_version change its commit makes is not
   * taken for another process's (each mount would read back every version it wrote to find out).
   */
  ownCommitAside<T>(fn: () => Promise<T>): Promise<T>;
}

export function createChangeStatements(db: Db, writes: WriteCounter): ChangeStatements {
  const q = {
    // Moves when another connection (a CLI beside the server) commits.
    outside: db.prepare('PRAGMA data_version').pluck(),
    nextExpiry: db.prepare(
      'SELECT MIN(expires_at) FROM memories WHERE store_id = ? AND expires_at IS NOT NULL AND expires_at > ?',
    ).pluck(),
  };
  // data_version only says "changed or not", so its changes are counted here.
  let outsideVersion = -1;
  let outsideChanges = 0;
  let outsideCheckedAt = 0;

  /** Counts another process's commits since the last look. */
  function lookOutside(now: number): void {
    outsideCheckedAt = now;
    const v = q.outside.get() as number;
    if (v !== outsideVersion) {
      outsideVersion = v;
      outsideChanges += 1;
      writes.moved();
    }
  }

  /** Other processes' commits counted so far. */
  function outsideMark(): number {
    // The pragma is a call into SQLite; a writer in another process is rare (admin CLIs), so its
    // commits are seen within OUTSIDE_CHECK_MS rather than at once.
    const now = Date.now();
    if (now - outsideCheckedAt >= OUTSIDE_CHECK_MS) lookOutside(now);
    return outsideChanges;
  }

  return {
    changeMark(): number {
      // Both counts only grow, so their sum moves whenever either does.
      return outsideMark() + writes.count();
    },
    outsideMark,
    outsideMarkNow(): number {
      lookOutside(Date.now());
      return outsideChanges;
    },
    async ownCommitAside<T>(fn: () => Promise<T>): Promise<T> {
      // Others' commits before it still count as theirs; while it runs, it holds the write lock.
      lookOutside(Date.now());
      try {
        return await fn();
      } finally {
        writes.add();
        // Only a commit another process makes in the moment between its commit and this read is
        // taken for ours: the mark moves anyway; only the mounts' reading of others' versions waits.
        outsideVersion = q.outside.get() as number;
        outsideCheckedAt = Date.now();
      }
    },
    ownWriteMark: () => writes.count(),
    onMarkMoved: (fn) => writes.listen(fn),
    nextExpiry(storeId, after) {
      return (q.nextExpiry.get(storeId, after) as string | null) ?? null;
    },
  };
}
