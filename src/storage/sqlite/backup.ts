/**
 * @module Online backups and restores of the SQLite file. A backup uses SQLite's backup API in one
 * step, so it is a consistent copy that finishes while the server writes; a restore checks the copy
 * before it replaces the file.
 */
import { closeSync, copyFileSync, existsSync, fsyncSync, openSync, readSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { MnemoError } from '../../domain/errors.js';
import { journalFileOf } from './journal.js';
import { fileRefusal, isFileRefusal, openDatabaseFile } from './open-file.js';
import { whyNotReadable } from '../common/file-reasons.js';
import { SCHEMA_VERSION } from './schema/migrations.js';

export async function backupDatabase(dbFile: string, dest: string): Promise<void> {
  if (!existsSync(dbFile)) throw new MnemoError('not_found', `no database at ${dbFile}`);
  if (existsSync(dest)) throw new MnemoError('conflict', `${dest} already exists; back up into a new file`);
  const parent = dirname(dest);
  if (!existsSync(parent)) throw new MnemoError('not_found', `cannot write ${dest}: the directory ${parent} does not exist`);
  if (!statSync(parent).isDirectory()) throw new MnemoError('invalid_request', `cannot write ${dest}: ${parent} is not a directory`);
  // Read-only: a backup only reads the source, and so works on a file this user may not write.
  const db = openDatabaseFile(dbFile, { readOnly: true });
  try {
    db.pragma('busy_timeout = 5000');
    let stalled: Error | null = null;
    try {
      await db.backup(dest, { progress: stallGuard(dbFile, (err) => (stalled = err)) });
    } catch (err) {
      throw stalled ?? err;
    }
    if (stalled) throw stalled;
    // better-sqlite3 ends a backup whose first step was refused as if it were done: check the copy
    // by its own header (the source may have grown since, as the server goes on writing).
    if (!wholeCopy(dest)) {
      throw new MnemoError('invalid_request', `cannot read ${dbFile}: SQLite could not take a read lock on it (is its -wal/-shm writable?)`);
    }
  } catch (err) {
    // existsSync first: rmSync's force does not cover a name too long (ENAMETOOLONG from its lstat).
    for (const f of [dest, `${dest}-journal`]) if (existsSync(f)) rmSync(f, { force: true });
    if (err instanceof MnemoError) throw err;
    if (isFileRefusal(err) && whyNotReadable(dbFile) !== null) throw fileRefusal(dbFile, false, err);
    throw new MnemoError('invalid_request', `cannot write the backup to ${dest}: ${whyNotWritten(dest, err)}`, {}, { cause: err });
  } finally {
    db.close();
  }
}

/**
 * Whether `file` holds a whole mnemo database by its own header: SQLite's magic, a schema version
 * (user_version) set, and as many bytes as its page count says. Read as bytes: opening the copy
 * with SQLite would leave -wal/-shm files beside it.
 */
function wholeCopy(file: string): boolean {
  const header = Buffer.alloc(100);
  const fd = openSync(file, 'r');
  let read: number;
  try {
    read = readSync(fd, header, 0, 100, 0);
  } finally {
    closeSync(fd);
  }
  if (read < 100 || header.toString('latin1', 0, 16) !== 'SQLite format 3\0') return false;
  const pageSize = header.readUInt16BE(16) === 1 ? 65536 : header.readUInt16BE(16);
  const pages = header.readUInt32BE(28);
  return header.readInt32BE(60) >= 1 && pages > 0 && statSync(file).size >= pages * pageSize;
}

/** How long a backup may go without copying a page before it gives up (the source's busy_timeout is 5 s). */
const STALL_MS = 15_000;

/** Every page in one step: SQLite's ceiling on a step's page count (better-sqlite3 clamps to it). */
const ALL_PAGES = 0x7fffffff;

/**
 * Copies every page in one step. SQLite's backup API starts over from the first page when another
 * connection (the server) commits between two steps: at 100 pages a step, a copy of a few thousand
 * pages never got through a steady trickle of saves. One step reads one WAL snapshot, which takes no
 * lock a writer waits on, so the server goes on saving; only the WAL cannot be checkpointed past that
 * snapshot until the step ends (better-sqlite3's first step copies no page: the second copies all).
 *
 * better-sqlite3 steps a backup again and again while SQLite answers SQLITE_BUSY, forever: a source
 * whose -wal/-shm this process cannot write, or whose WAL it cannot recover, answers busy on every
 * step, and the command spun at full CPU with a 0-byte copy and its -journal left behind. This
 * progress callback stops it (throwing ends the backup) once no page was copied for STALL_MS.
 */
function stallGuard(dbFile: string, fail: (err: Error) => void): (p: { totalPages: number; remainingPages: number }) => number {
  let remaining = Infinity;
  let since = performance.now();
  return (p) => {
    const now = performance.now();
    if (p.remainingPages < remaining) {
      remaining = p.remainingPages;
      since = now;
    } else if (now - since > STALL_MS) {
      // With every page in one step, no page copied means SQLite refused the read snapshot itself.
      const err = new MnemoError('invalid_request', `cannot read ${dbFile}: SQLite stayed busy for ${STALL_MS / 1000} s without copying a page (another process holds a lock that keeps readers out, or its -wal/-shm files cannot be written)`);
      fail(err);
      throw err;
    }
    return ALL_PAGES;
  };
}

/**
 * Why a backup could not be written. SQLite says only "unable to open database file" (in /proc, a
 * name too long, no permission), so the file is created here to learn the system's reason; else
 * SQLite's own words. What a failed backup left is removed: it writes a new file or nothing.
 */
function whyNotWritten(dest: string, err: unknown): string {
  for (const f of [dest, `${dest}-journal`]) if (existsSync(f)) rmSync(f, { force: true });
  try {
    closeSync(openSync(dest, 'wx'));
    rmSync(dest, { force: true });
  } catch (e) {
    const { code, message } = e as NodeJS.ErrnoException;
    // "EACCES: permission denied, open '/x'" → "permission denied (EACCES)": the path is said once, before.
    if (typeof code === 'string') return `${message.replace(/^\w+: /, '').replace(/, \w+ '.*'$/s, '')} (${code})`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** Problems that make `file` unfit to restore (not SQLite, damaged, or from a newer mnemo). */
export function inspectBackup(file: string): string[] {
  let db: Database.Database | null = null;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version < 1) return [`${file} is not a mnemo database (schema version ${version})`];
    if (version > SCHEMA_VERSION) return [`${file} has schema version ${version}, newer than this mnemo (${SCHEMA_VERSION})`];
    const rows = db.pragma('integrity_check') as { integrity_check: string }[];
    return rows.map((r) => r.integrity_check).filter((m) => m !== 'ok');
  } catch (err) {
    return [`${file} cannot be read as SQLite: ${(err as Error).message}`];
  } finally {
    db?.close();
  }
}

/** Refuses a backup path that is missing or not a file, with a sentence naming it. */
export function requireBackupFile(backup: string): void {
  if (!existsSync(backup)) throw new MnemoError('not_found', `refusing to restore: the backup file ${backup} does not exist`);
  if (!statSync(backup).isFile()) throw new MnemoError('invalid_request', `refusing to restore: ${backup} is not a file`);
}

/**
 * Replaces `dbFile` with a checked copy of `backup`. The caller holds the data dir's restore locks.
 * The copy is made first and the check runs on the copy: opening the backup itself (a WAL-mode file)
 * would leave `-wal`/`-shm` files beside it, and the backup stays byte-for-byte as it was.
 */
export function restoreDatabase(backup: string, dbFile: string): void {
  requireBackupFile(backup);
  const tmp = `${dbFile}.restoring`;
  const removeTmp = () => {
    for (const f of [tmp, `${tmp}-wal`, `${tmp}-shm`, `${tmp}-journal`]) rmSync(f, { force: true });
  };
  removeTmp();
  copyFileSync(backup, tmp);
  try {
    const problems = inspectBackup(tmp).map((p) => p.split(tmp).join(backup));
    if (problems.length > 0) throw new MnemoError('invalid_request', `refusing to restore: ${problems.join('; ')}`);
    // The check may have left the copy's own -wal/-shm; they are empty after a clean close.
    for (const f of [`${tmp}-wal`, `${tmp}-shm`]) rmSync(f, { force: true });
    const fd = openSync(tmp, 'r+');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    // The old file's WAL, and its journal of mount writes, must not be replayed onto the restored one.
    rmSync(`${dbFile}-wal`, { force: true });
    rmSync(`${dbFile}-shm`, { force: true });
    rmSync(journalFileOf(dbFile), { force: true });
    renameSync(tmp, dbFile);
  } catch (err) {
    removeTmp();
    throw err;
  }
}
