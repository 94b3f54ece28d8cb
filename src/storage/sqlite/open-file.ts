/**
 * @module Opening the SQLite file with the operating system's reason when it cannot be: a sentence
 * naming the path (`cannot write the database file /ro/d/mnemo.db: read-only file system (EROFS)`)
 * instead of SQLite's "unable to open database file" or "attempt to write a readonly database".
 */
import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { MnemoError } from '../../domain/errors.js';
import { isDiskFull } from '../common/disk-full.js';
import { whyNotReadable, whyNotWritable } from '../common/file-reasons.js';

/** SQLite's codes for a file it cannot open, create beside (-wal, -shm, -journal) or write. */
export function isFileRefusal(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(CANTOPEN|READONLY|PERM|AUTH)/.test(code);
}

/** The sentence for a refusal of `file`, probing the system for its reason; `write`: the caller needed to write. */
export function fileRefusal(file: string, write: boolean, err: unknown): MnemoError {
  const unreadable = whyNotReadable(file);
  if (unreadable !== null) return new MnemoError('invalid_request', `cannot read the database file ${file}: ${unreadable}`, {}, { cause: err });
  if (write) {
    const unwritable = whyNotWritable(file) ?? whyNotWritable(dirname(file));
    if (unwritable !== null) return new MnemoError('invalid_request', `cannot write the database file ${file}: ${unwritable}`, {}, { cause: err });
  }
  // Readable, but SQLite still cannot use it: in WAL mode a reader needs the -shm and -wal files beside it.
  const beside = whyNotWritable(`${file}-shm`) ?? whyNotWritable(`${file}-wal`);
  if (beside !== null) {
    return new MnemoError('invalid_request', `cannot read the database file ${file}: its -wal/-shm files cannot be made or written beside it (${beside})`, {}, { cause: err });
  }
  return new MnemoError('invalid_request', `cannot ${write ? 'write' : 'read'} the database file ${file}: ${(err as Error).message}`, {}, { cause: err });
}

/**
 * Opens `file` (which must exist unless `create`) and reads its header, so a file SQLite cannot use
 * fails here with a sentence. `readOnly` opens it read-only: a command that only reads never writes
 * the file (SQLite may still make its -wal/-shm where it can).
 */
export function openDatabaseFile(file: string, { readOnly = false, create = false }: { readOnly?: boolean; create?: boolean } = {}): Database.Database {
  if (!readOnly && file !== ':memory:') {
    // SQLite would open a file it cannot write read-only, and fail at the first write with its own words.
    const unwritable = whyNotWritable(file);
    if (unwritable !== null) throw new MnemoError('invalid_request', `cannot write the database file ${file}: ${unwritable}`);
  }
  let db: Database.Database | null = null;
  try {
    db = new Database(file, { readonly: readOnly, fileMustExist: readOnly || !create });
    db.pragma('user_version', { simple: true });
    return db;
  } catch (err) {
    db?.close();
    if (isFileRefusal(err)) throw fileRefusal(file, !readOnly, err);
    throw refusedForSpace(file, err);
  }
}

/**
 * Free bytes under which an I/O error while opening is put down to a full disk: SQLite says only
 * "disk I/O error" (SQLITE_IOERR_SHMSIZE) when it cannot grow the -shm file beside an existing database.
 */
const NEARLY_FULL_BYTES = 1024 * 1024;

/**
 * What opening, setting up or migrating `file` threw, as a sentence naming the data directory when
 * its disk is full (SQLITE_FULL, ENOSPC, or an I/O error with almost no space left); else `err` itself.
 */
export function refusedForSpace(file: string, err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return err;
  const ioError = code.startsWith('SQLITE_IOERR');
  if (!isDiskFull(err) && !(ioError && freeBytes(dirname(file)) < NEARLY_FULL_BYTES)) return err;
  const reason = `${code}: ${(err as Error).message}`;
  return new MnemoError('storage_full', `cannot open the database in the data directory ${dirname(file)}: the disk holding it is full (${reason}); free space on it, then start again`, {}, { cause: err });
}

function freeBytes(dir: string): number {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return Infinity;
  }
}
