/**
 * @module Data-directory locks through SQLite's own file locking on two tiny lock files. SQLite
 * locks with POSIX advisory locks, which the OS drops when the process dies (kill -9 included), so
 * a crash never leaves a stale lock behind the way a pid file does. Node has no flock of its own.
 *
 * - `mnemo.lock`: the server's, held EXCLUSIVE for the life of `mnemo serve` (one server per dir).
 * - `mnemo.users.lock`: held SHARED by every process using the database (serve, mount, mcp and the
 *   admin commands), so they run side by side; `mnemo restore` takes both EXCLUSIVE, which fails
 *   while anyone holds either.
 * - `mount-locks/<session id>.lock`: held EXCLUSIVE by the `mnemo mount` process that records that
 *   session, for its life. Whether it is still held says whether that process runs, from any
 *   process on the same files, whatever its pid namespace (a container beside) or node id. A free
 *   one is removed by whoever finds it so (the next start's check of sessions), that of a session
 *   never recorded (its process killed first) or ended included.
 * - `mount-locks/<session id>.lock.new`: the same file while its `mnemo mount` takes it, before it
 *   gets its session's name. One a process killed at that point left is removed as a free one is,
 *   under `mount-locks/.taking` held EXCLUSIVE: every `mnemo mount` holds that one SHARED
 *   from before it makes its file until it has locked it, so a file found free then is no live
 *   process's (one made a moment ago and not locked yet is). While some mount holds the guard, a
 *   free one whose mtime is over a minute old is removed all the same: a live mount's file is free
 *   for the milliseconds between its making and its lock, never a minute.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { MnemoError } from '../../domain/errors.js';
import { whyNotReadable, whyNotWritable } from '../common/file-reasons.js';
import { isFileRefusal } from './open-file.js';

export const SERVER_LOCK_FILE = 'mnemo.lock';
export const USERS_LOCK_FILE = 'mnemo.users.lock';

export interface HeldLock {
  release(): void;
}

/** Open lock handles, kept reachable so a collected handle can never drop its lock early. */
const held = new Set<Database.Database>();

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
}

/**
 * Takes the lock without waiting (or waiting up to `waitMs`): null if another process holds a
 * conflicting one. Exclusive holds an open EXCLUSIVE transaction (journal in memory, so no -journal
 * file appears); shared holds an open read transaction, which keeps SQLite's SHARED lock on the file.
 */
export function tryLock(file: string, mode: 'exclusive' | 'shared', { mustExist = false, waitMs = 0 }: { mustExist?: boolean; waitMs?: number } = {}): HeldLock | null {
  let db: Database.Database;
  try {
    db = new Database(file, { fileMustExist: mustExist });
  } catch (err) {
    throw lockRefusal(file, err);
  }
  try {
    // SQLite's own busy handler does the waiting, if any.
    db.pragma(`busy_timeout = ${waitMs}`);
    if (mode === 'exclusive') {
      db.pragma('journal_mode = MEMORY');
      db.pragma('locking_mode = EXCLUSIVE');
      db.exec('BEGIN EXCLUSIVE');
    } else {
      db.exec('BEGIN');
      db.prepare('SELECT count(*) FROM sqlite_master').get();
    }
  } catch (err) {
    db.close();
    if (isBusy(err)) return null;
    throw lockRefusal(file, err);
  }
  held.add(db);
  return {
    release() {
      if (!held.delete(db)) return;
      db.close();
    },
  };
}

export const serverLockFile = (dataDir: string) => join(dataDir, SERVER_LOCK_FILE);
export const usersLockFile = (dataDir: string) => join(dataDir, USERS_LOCK_FILE);

export const MOUNT_LOCKS_DIR = 'mount-locks';
const LOCK_SUFFIX = '.lock';
/** A lock file while its `mnemo mount` takes it: made and locked under this name, then renamed. */
const TAKING_SUFFIX = '.lock.new';
/** Held SHARED by each `mnemo mount` while it makes and locks its `.lock.new`, EXCLUSIVE while free ones are removed. */
const TAKING_GUARD = '.taking';
/**
 * A free `.lock.new` older than this (by its mtime) is a leftover even while a `mnemo mount` holds
 * the guard: a live one's file is free from its making to its lock, milliseconds.
 */
const TAKING_STALE_MS = 60_000;
/** How long a `mnemo mount` waits for a removal of `.lock.new` files to let go of the guard (it takes a moment). */
const TAKING_GUARD_WAIT_MS = 10_000;
const mountLockFile = (dataDir: string, sessionId: string) => join(dataDir, MOUNT_LOCKS_DIR, `${sessionId}${LOCK_SUFFIX}`);

/** The locks of `mnemo mount` sessions in one data directory. */
export interface MountLocks {
  /** Taken by the `mnemo mount` process for its session before the session is recorded; release removes the file. */
  hold(sessionId: string): HeldLock;
  /**
   * Whether the process that recorded the session still holds its lock: null when the session has
   * no lock file here (recorded by an older release, or on another host) or this process cannot
   * open it. One found free is removed.
   */
  held(sessionId: string): boolean | null;
  /**
   * Removes every lock file here that no process holds, but those of the sessions `keep` names:
   * one left by a `mnemo mount` killed before it recorded its session (or before it ended one
   * ended since) is no live session's. Returns the sessions whose files it removed.
   */
  removeFree(keep: ReadonlySet<string>): string[];
  /**
   * Removes every `<session id>.lock.new` here that no process holds: one left by a `mnemo mount`
   * killed while it took its lock (after making the file, before giving it its session's name).
   * While a `mnemo mount` is between making its file and locking it (it holds the guard), that file
   * is free yet its: then only those last modified over a minute ago are looked at, the others left
   * for a later look. Returns the names of the files removed.
   */
  removeLeftovers(): string[];
}

export function mountLocks(dataDir: string): MountLocks {
  const dir = join(dataDir, MOUNT_LOCKS_DIR);
  const guardFile = join(dir, TAKING_GUARD);

  /**
   * Takes the lock at `file` for a moment, to see: no such file, held by a process, free (and so
   * removed here), removed meanwhile by its process, or not to be told.
   */
  function probe(file: string): 'absent' | 'held' | 'removed' | 'gone' | 'unknown' {
    if (!existsSync(file)) return 'absent';
    let lock: HeldLock | null;
    try {
      lock = tryLock(file, 'exclusive', { mustExist: true });
    } catch {
      // Removed since (its process ended the session as it stopped): not held. One this process
      // may not open (another user's) cannot tell, and must not stop a start that checks it.
      return existsSync(file) ? 'unknown' : 'gone';
    }
    if (lock === null) return 'held';
    rmSync(file, { force: true });
    lock.release();
    return 'removed';
  }

  /** Runs `take` holding the guard SHARED, as every `mnemo mount` does: many at once, none while leftovers are removed. */
  function underGuard<T>(take: () => T): T {
    const guard = tryLock(guardFile, 'shared', { waitMs: TAKING_GUARD_WAIT_MS });
    if (guard === null) throw new MnemoError('conflict', `the lock file ${guardFile} is held by another process`);
    try {
      return take();
    } finally {
      guard.release();
    }
  }

  return {
    hold(sessionId) {
      const file = mountLockFile(dataDir, sessionId);
      mkdirSync(dir, { recursive: true });
      // Taken under another name, then renamed: the file appears under its session's name already
      // held, so removeFree (another process's start) never finds it free between its creation and its lock.
      const taking = join(dir, `${sessionId}${TAKING_SUFFIX}`);
      // And the guard, held from before that file is made until it is locked, keeps removeLeftovers
      // from finding it free meanwhile. Others hold it SHARED too: only a removal makes this wait.
      const lock = underGuard(() => tryLock(taking, 'exclusive'));
      // A new session id's file: nobody else knows its name yet.
      if (lock === null) throw new MnemoError('conflict', `the lock file ${taking} is held by another process`);
      try {
        renameSync(taking, file);
      } catch (err) {
        rmSync(taking, { force: true });
        lock.release();
        throw err;
      }
      return {
        release() {
          rmSync(file, { force: true });
          lock.release();
        },
      };
    },
    held(sessionId) {
      const seen = probe(mountLockFile(dataDir, sessionId));
      if (seen === 'absent' || seen === 'unknown') return null;
      return seen === 'held';
    },
    removeFree(keep) {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        return [];
      }
      const removed: string[] = [];
      for (const name of names) {
        if (!name.endsWith(LOCK_SUFFIX)) continue;
        const sessionId = name.slice(0, -LOCK_SUFFIX.length);
        if (keep.has(sessionId)) continue;
        if (probe(join(dir, name)) === 'removed') removed.push(sessionId);
      }
      return removed;
    },
    removeLeftovers() {
      let names: string[];
      try {
        names = readdirSync(dir).filter((name) => name.endsWith(TAKING_SUFFIX));
      } catch {
        return [];
      }
      if (names.length === 0) return [];
      let guard: HeldLock | null;
      try {
        guard = tryLock(guardFile, 'exclusive');
      } catch {
        // Not to be opened by this process (another user's directory): nothing can be told.
        return [];
      }
      // A `mnemo mount` is making its file: only those over a minute old are no live mount's now;
      // the next look removes what is left then.
      const looked = guard === null ? names.filter((name) => olderThan(join(dir, name), TAKING_STALE_MS)) : names;
      try {
        return looked.filter((name) => probe(join(dir, name)) === 'removed');
      } finally {
        guard?.release();
      }
    },
  };
}

/** Whether `file` was last modified over `ms` ago (false if it is gone or cannot be looked at). */
function olderThan(file: string, ms: number): boolean {
  try {
    return statSync(file).mtimeMs < Date.now() - ms;
  } catch {
    return false;
  }
}

/** SQLite's "unable to open database file" for a lock file, as a sentence naming it and the system's reason. */
function lockRefusal(file: string, err: unknown): unknown {
  if (!isFileRefusal(err)) return err;
  const why = (existsSync(file) ? whyNotReadable(file) : null) ?? whyNotWritable(file) ?? (err as Error).message;
  return new MnemoError('invalid_request', `cannot use the lock file ${file}: ${why}`, {}, { cause: err });
}
