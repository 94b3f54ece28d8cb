/** @module The one table from domain error codes to FUSE errnos, and the Node-style log line for a failed op. */
import Fuse from './binding/fuse.js';
import { isDatabaseBusy, isDiskFull, isMnemoError, type ErrorCode } from '../src/index.js';

/** Every ErrorCode has a row, so a new code without a mapping fails to compile (and the pinned test). */
export const ERRNO_BY_CODE: Readonly<Record<ErrorCode, number>> = Object.freeze({
  invalid_request: Fuse.EINVAL,
  invalid_path: Fuse.EINVAL,
  path_too_long: Fuse.ENAMETOOLONG,
  name_too_long: Fuse.ENAMETOOLONG,
  content_too_large: Fuse.EFBIG,
  invalid_utf8: Fuse.EILSEQ,
  not_found: Fuse.ENOENT,
  // An HTTP routing refusal; mounts have no methods. Listed so every code has an errno.
  method_not_allowed: Fuse.EINVAL,
  path_conflict: Fuse.EEXIST,
  // A mount sends no precondition that can fail: an append is kept after the newest text under the
  // store's lock (fs/save-points.ts). Listed so every code has an errno: busy, and retrying is right.
  precondition_failed: Fuse.EBUSY,
  conflict: Fuse.EBUSY,
  // Mounts send no Idempotency-Key; listed so every code has an errno.
  idempotency_conflict: Fuse.EBUSY,
  archived: Fuse.EROFS,
  read_only: Fuse.EROFS,
  unauthenticated: Fuse.EACCES,
  forbidden: Fuse.EACCES,
  request_too_large: Fuse.EFBIG,
  // Only the HTTP face reads request bodies. Listed so every code has an errno.
  unsupported_encoding: Fuse.EINVAL,
  // Only the HTTP face reads request bodies. Listed so every code has an errno.
  request_timeout: Fuse.ETIMEDOUT,
  // Only checkpoint restores have a byte budget; mounts never restore. Listed so every code has an errno.
  budget_exceeded: Fuse.EFBIG,
  // A store limit: the device is full as far as this store is concerned.
  limit_exceeded: Fuse.ENOSPC,
  // Only the HTTP face sheds load (a search behind its indexing, too many request bodies at once).
  // Listed so every code has an errno: retrying later is right.
  overloaded: Fuse.EAGAIN,
  // The database cannot be reached: an I/O error, as a disk that stopped answering gives.
  unavailable: Fuse.EIO,
  // Another process holds SQLite's write lock past the busy timeout: EBUSY ("resource busy or
  // locked"), as for the other conflicts here, not EAGAIN, which a program reads as "this
  // non-blocking descriptor would block" (some poll and retry at once, without end) and which
  // cp, sed and editors report as "Resource temporarily unavailable", naming no lock.
  database_locked: Fuse.EBUSY,
  // Only session creation mounts; listed so every code has an errno.
  mount_failed: Fuse.EIO,
  // The disk under the database is full: what a full local disk answers a write.
  storage_full: Fuse.ENOSPC,
  internal: Fuse.EIO,
});

/** A refusal that is already an errno (the FUSE face's own checks: ENOTDIR, EISDIR, ENOTEMPTY…). */
export class FsError extends Error {
  readonly errno: number;
  constructor(errno: number, message: string) {
    // A refusal is an answer, not a fault: capturing a stack was a third of a missing-file lookup.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'FsError';
    this.errno = errno;
  }
}

export function fsError(errno: number, message = ''): FsError {
  return new FsError(errno, message);
}

/** Errors already logged where they happened (a failed save's warning), so the op's reply logs nothing more. */
const reported = new WeakSet<object>();

export function markReported(err: unknown): void {
  if (typeof err === 'object' && err !== null) reported.add(err);
}

export function wasReported(err: unknown): boolean {
  return typeof err === 'object' && err !== null && reported.has(err);
}

/** The negative errno for anything a handler throws; unknown errors become EIO. */
export function toErrno(err: unknown): number {
  if (err instanceof FsError) return err.errno;
  if (isMnemoError(err)) return ERRNO_BY_CODE[err.code] ?? Fuse.EIO;
  // The disk holding the database is full (storage/common/disk-full.ts): a save's ENOSPC, not EIO.
  if (isDiskFull(err)) return ERRNO_BY_CODE.storage_full ?? Fuse.ENOSPC;
  // Another process held SQLite's write lock past the busy timeout (storage/common/database-busy.ts).
  if (isDatabaseBusy(err)) return ERRNO_BY_CODE.database_locked ?? Fuse.EBUSY;
  return Fuse.EIO;
}

const NAMES: Record<number, [string, string]> = {
  [Fuse.EPERM]: ['EPERM', 'operation not permitted'],
  [Fuse.ENOENT]: ['ENOENT', 'no such file or directory'],
  [Fuse.EIO]: ['EIO', 'i/o error'],
  [Fuse.EBADF]: ['EBADF', 'bad file descriptor'],
  [Fuse.EACCES]: ['EACCES', 'permission denied'],
  [Fuse.EBUSY]: ['EBUSY', 'resource busy or locked'],
  [Fuse.EEXIST]: ['EEXIST', 'file already exists'],
  [Fuse.ENOTDIR]: ['ENOTDIR', 'not a directory'],
  [Fuse.EISDIR]: ['EISDIR', 'illegal operation on a directory'],
  [Fuse.EINVAL]: ['EINVAL', 'invalid argument'],
  [Fuse.EFBIG]: ['EFBIG', 'file too large'],
  [Fuse.ENOSPC]: ['ENOSPC', 'no space left on device'],
  [Fuse.EROFS]: ['EROFS', 'read-only file system'],
  [Fuse.ENAMETOOLONG]: ['ENAMETOOLONG', 'name too long'],
  [Fuse.ENOTEMPTY]: ['ENOTEMPTY', 'directory not empty'],
  [Fuse.EILSEQ]: ['EILSEQ', 'illegal byte sequence'],
  [Fuse.ESTALE]: ['ESTALE', 'stale file handle'],
};

/** Reads like Node's errors: `EROFS: read-only file system, write '/notes/a.md'`. */
export function errnoLine(errno: number, op: string, path: string, err?: unknown): string {
  const [name, text] = NAMES[errno] ?? [`E${-errno}`, 'error'];
  const why = err instanceof Error && err.message ? ` (${err.message})` : '';
  return `${name}: ${text}, ${op} '${path}'${why}`;
}
