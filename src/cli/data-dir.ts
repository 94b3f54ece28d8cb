/**
 * @module What each command may do with the data directory. `serve` creates it and owns it (one
 * server per directory); every other command needs a mnemo database already there, so a mistyped
 * `--data-dir` is an error naming the path instead of a new, empty database; `restore` may also
 * fill an empty or new directory. The locks themselves are in storage/sqlite/lock.ts.
 */
import { accessSync, chownSync, constants, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import type { Config } from './config.js';
import { MnemoError } from '../domain/errors.js';
import { PID_FILE, runningServerPid } from './pidfile.js';
import { reasonOf } from './system-errors.js';
import { whyNotWritable } from '../storage/common/file-reasons.js';
import { journalFileOf, readJournal } from '../storage/sqlite/journal.js';
import { olderSchemaRefusal } from '../storage/sqlite/open.js';
import { MOUNT_LOCKS_DIR, serverLockFile, SERVER_LOCK_FILE, tryLock, usersLockFile, USERS_LOCK_FILE, type HeldLock } from '../storage/sqlite/lock.js';

/** Files mnemo itself leaves in a data dir that holds no database (after a refused restore, say). */
const OWN_FILES = new Set([SERVER_LOCK_FILE, USERS_LOCK_FILE, PID_FILE, MOUNT_LOCKS_DIR]);

function kindOf(path: string): 'missing' | 'file' | 'dir' | 'other' {
  try {
    const st = statSync(path);
    return st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw err;
  }
}

/** Refuses (creating nothing) unless the data dir holds a mnemo database. */
export function requireDatabase(config: Config): void {
  const dir = kindOf(config.dataDir);
  if (dir === 'missing') {
    throw new MnemoError('not_found', `no mnemo database: the data directory ${config.dataDir} does not exist (check --data-dir or MNEMO_DATA_DIR)`);
  }
  if (dir !== 'dir') throw new MnemoError('invalid_request', `the data directory ${config.dataDir} is not a directory`);
  if (kindOf(config.dbFile) !== 'file') {
    throw new MnemoError('not_found', `no mnemo database in ${config.dataDir} (${config.dbFile} does not exist; check --data-dir or MNEMO_DATA_DIR)`);
  }
}

/** A command that reads or writes the database beside a server: needs the database, holds the shared lock. */
export function useDatabase(config: Config, { readOnly = false }: { readOnly?: boolean } = {}): HeldLock {
  requireDatabase(config);
  const file = usersLockFile(config.dataDir);
  let lock: HeldLock | null;
  try {
    lock = tryLock(file, 'shared');
  } catch (err) {
    // A reader that cannot make or open the lock file (a read-only file system, another user's
    // directory) runs without it: a restore, which must write there, cannot be replacing the file.
    if (readOnly && whyNotWritable(file) !== null) return { release() {} };
    throw err;
  }
  if (lock === null) throw new MnemoError('conflict', `a restore is replacing the database in ${config.dataDir}; try again when it is done`);
  return lock;
}

/**
 * `mount` and `mcp` on SQLite: when a crashed server left mount writes in the journal (acknowledged,
 * never committed) and no server owns the data dir now, takes the server lock, so that this process
 * replays them before it writes (a server starting meanwhile is refused, naming no pid, for that
 * moment); release it once the database is open. Null when there is nothing to replay, or when a
 * server runs (the journal is its own, live).
 */
export function claimLeftJournal(config: Config): HeldLock | null {
  if (!hasJournal(config.dbFile)) return null;
  return tryLock(serverLockFile(config.dataDir), 'exclusive');
}

/**
 * `check` and `backup`: how many mount writes a crashed server left in the journal, acknowledged and
 * not in the database (0 while a server runs: its journal is live).
 */
export function leftJournalWrites(config: Config): number {
  if (!hasJournal(config.dbFile) || runningServerPid(config.dataDir, 'sqlite') !== null) return 0;
  try {
    return readJournal(journalFileOf(config.dbFile)).length;
  } catch {
    // One this user may not read (a read-only check of another user's copy): nothing to tell.
    return 0;
  }
}

/**
 * `mount` and `mcp` on SQLite: they migrate an older file as `serve` does, but only while no server
 * holds the data dir: a running server of the older release would go on writing a schema it does
 * not know, and could not start again on it. The server lock is held while the file migrates.
 */
export function migrateUnlessServed(config: Config): (from: number, to: number) => HeldLock {
  return (from, to) => {
    const server = tryLock(serverLockFile(config.dataDir), 'exclusive');
    if (server === null) throw servedOlderSchema(config, from, to, '');
    return server;
  };
}

/**
 * The admin commands (`keys`, `workspaces`, `check`) never migrate, whether they write or only read:
 * an older file is refused alike, naming the server that holds it if one does.
 */
export function refuseMigration(config: Config): (from: number, to: number) => never {
  return (from, to) => {
    let server: HeldLock | null;
    try {
      server = tryLock(serverLockFile(config.dataDir), 'exclusive');
    } catch {
      // A lock file this user cannot open (a read-only check of another user's copy): no server to name.
      throw olderSchemaRefusal(config.dbFile, from);
    }
    if (server === null) throw servedOlderSchema(config, from, to, ', then run this again');
    server.release();
    throw olderSchemaRefusal(config.dbFile, from);
  };
}

function servedOlderSchema(config: Config, from: number, to: number, then: string): MnemoError {
  const pid = runningServerPid(config.dataDir);
  return new MnemoError(
    'conflict',
    `${config.dbFile} has schema version ${from}, older than this mnemo's (${to}), and a mnemo server${pid === null ? '' : ` (pid ${pid})`} of an older release is running on it: refusing to migrate it under that server; stop it first, then start this release's mnemo serve, which migrates it${then}`,
  );
}

function hasJournal(dbFile: string): boolean {
  try {
    return statSync(journalFileOf(dbFile)).size > 0;
  } catch {
    return false;
  }
}

/** `serve`: creates the data dir if needed and takes it for this process, or refuses if another server has it. */
export function ownDataDir(config: Config): HeldLock {
  const kind = kindOf(config.dataDir);
  if (kind !== 'missing' && kind !== 'dir') throw new MnemoError('invalid_request', `the data directory ${config.dataDir} is not a directory`);
  if (kind === 'missing') makeDataDir(config.dataDir);
  // The shared lock first: only a restore holds it exclusively, so a refusal here names the restore.
  const users = tryLock(usersLockFile(config.dataDir), 'shared');
  if (users === null) throw new MnemoError('conflict', `a restore is replacing the database in ${config.dataDir}; try again when it is done`);
  const server = tryLock(serverLockFile(config.dataDir), 'exclusive');
  if (server === null) {
    users.release();
    const pid = runningServerPid(config.dataDir);
    throw new MnemoError('conflict', `another server owns ${config.dataDir}${pid === null ? '' : ` (pid ${pid})`}`);
  }
  return {
    release() {
      server.release();
      users.release();
    },
  };
}

/** Creates a new data dir; a refusal names the real reason (mkdir -p on a read-only file system says ENOENT). */
function makeDataDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    const why = whyNotWritable(dir) ?? reasonOf(err);
    throw new MnemoError('invalid_request', `cannot create the data directory ${dir}: ${why}`, {}, { cause: err });
  }
}

/**
 * `restore`: the target is a data dir with a database, an empty directory or a new one; a directory
 * holding other things is refused (it is probably not the one meant). Creates a new one and says so
 * (true), so a failed restore can take it away again.
 */
export function prepareRestoreTarget(config: Config): boolean {
  const kind = kindOf(config.dataDir);
  if (kind === 'missing') {
    makeDataDir(config.dataDir);
    return true;
  }
  if (kind !== 'dir') throw new MnemoError('invalid_request', `the data directory ${config.dataDir} is not a directory`);
  if (kindOf(config.dbFile) === 'file') return false;
  const others = readdirSync(config.dataDir).filter((n) => !OWN_FILES.has(n));
  if (others.length > 0) {
    throw new MnemoError(
      'invalid_request',
      `refusing to restore into ${config.dataDir}: it holds no mnemo database but is not empty (${others.length} entr${others.length === 1 ? 'y' : 'ies'}); name a data directory, an empty directory or a new one`,
    );
  }
  return false;
}

/** `restore`: both locks exclusively, or a refusal naming who is using the data dir. */
export function lockForRestore(config: Config): HeldLock {
  const server = tryLock(serverLockFile(config.dataDir), 'exclusive');
  if (server === null) {
    const pid = runningServerPid(config.dataDir);
    throw new MnemoError('conflict', `refusing to restore: a mnemo server${pid === null ? '' : ` (pid ${pid})`} is running on ${config.dataDir}; stop it first`);
  }
  const users = tryLock(usersLockFile(config.dataDir), 'exclusive');
  if (users === null) {
    server.release();
    throw new MnemoError('conflict', `refusing to restore: a mnemo process (mount, mcp or an admin command) is running on ${config.dataDir}; stop it first`);
  }
  return {
    release() {
      users.release();
      server.release();
    },
  };
}

/**
 * `restore` run as root: the files it made (the database, its lock files, and any -wal/-shm/journal)
 * take the data directory's owner. A server that runs as another user (Docker's `mnemo` user) could
 * not write a database left owned by root, and failed at its first write.
 */
export function giveRestoredFilesToDataDirOwner(config: Config): void {
  const me = typeof process.getuid === 'function' ? process.getuid() : -1;
  if (me !== 0) return;
  const owner = statSync(config.dataDir);
  const files = [config.dbFile, `${config.dbFile}-wal`, `${config.dbFile}-shm`, `${config.dbFile}-journal`, journalFileOf(config.dbFile), serverLockFile(config.dataDir), usersLockFile(config.dataDir)];
  for (const file of files) {
    if (!existsSync(file)) continue;
    const st = statSync(file);
    if (st.uid === me && (st.uid !== owner.uid || st.gid !== owner.gid)) chownSync(file, owner.uid, owner.gid);
  }
}

/**
 * `serve`: the mount root must be a directory this process can make session directories in, or
 * every `POST /v1/sessions` would fail. Made if missing; refused at start (naming the path and why)
 * when it is a file, cannot be made, or cannot be written.
 */
export function prepareMountRoot(root: string): void {
  const refuse = (why: string) =>
    new MnemoError('invalid_request', `cannot use the mount root ${root}: ${why}; set --mount-root or MNEMO_MOUNT_ROOT to a writable directory`);
  let kind: ReturnType<typeof kindOf>;
  try {
    kind = kindOf(root);
  } catch (err) {
    throw refuse(reasonOf(err));
  }
  if (kind === 'missing') {
    try {
      mkdirSync(root, { recursive: true });
    } catch (err) {
      throw refuse(`it cannot be created: ${reasonOf(err)}`);
    }
  } else if (kind !== 'dir') {
    throw refuse(`it is ${kind === 'file' ? 'a file' : 'not a directory'}, not a directory`);
  }
  try {
    accessSync(root, constants.W_OK | constants.X_OK);
  } catch (err) {
    throw refuse(`it is not writable: ${reasonOf(err)}`);
  }
}
