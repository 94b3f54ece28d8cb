/** @module The one domain error: a code union, a message and optional structured details. */

/** Every reason the domain refuses something. Faces map these once: api/errors.ts, fs/errno.ts. */
export const ERROR_CODES = [
  'invalid_request',
  'invalid_path',
  'path_too_long',
  'name_too_long',
  'content_too_large',
  'invalid_utf8',
  'not_found',
  'method_not_allowed',
  'path_conflict',
  'precondition_failed',
  'conflict',
  'idempotency_conflict',
  'archived',
  'read_only',
  'unauthenticated',
  'forbidden',
  'request_too_large',
  /** A request body in a content-coding other than identity (gzip, br…): 415, never decoded. */
  'unsupported_encoding',
  /** A request body that stopped arriving (the HTTP face's body timeout): 408. */
  'request_timeout',
  'budget_exceeded',
  /** A store or workspace limit (src/service/limits.ts): 413 over HTTP, ENOSPC on a mount. */
  'limit_exceeded',
  'overloaded',
  /** The database cannot be reached (PostgreSQL stopped, restarting, network gone): 503 over HTTP, EIO on a mount. */
  'unavailable',
  /**
   * SQLite's write lock held by another process (an operator's sqlite3 shell, a backup tool) for the
   * 5 s a write waits for it (storage/sqlite/lock-wait.ts, storage/common/database-busy.ts): 503 with
   * Retry-After over HTTP, EBUSY on a mount.
   */
  'database_locked',
  /** The host could not mount a new session's stores (its mount root unusable, FUSE gone): 503 over HTTP. */
  'mount_failed',
  /** The disk holding the database is full (storage/common/disk-full.ts): 507 over HTTP, ENOSPC on a mount. */
  'storage_full',
  'internal',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ErrorDetails {
  field?: string;
  conflicting_path?: string;
  conflicting_memory_id?: string;
  /** budget_exceeded: the smallest max_bytes that would have worked. */
  needed_bytes?: number;
  /** method_not_allowed: the methods the path does answer (the HTTP face's Allow header). */
  allow?: string[];
  /** conflict: lost a race with another process's write, so the same request may well succeed again. */
  transient?: boolean;
  /**
   * unavailable, when the database answers but not in time or not at all for now (a statement
   * timeout, PostgreSQL out of memory): what it is, for /readyz. Absent: the database is out of reach.
   */
  reason?: string;
  /**
   * not_found from a fork's build (storage/port/forks.ts): the id of its hidden store, deleted while
   * it was built (a redaction of a version it copies, or the sweep of forks a crash cut short). The
   * fork request builds it again or fails (service/forks.ts); no caller ever sees it.
   */
  abandoned_fork?: string;
  /**
   * Who deleted a fork's build while it ran, as the storage recorded it: with `abandoned_fork`, and on
   * the 409 `conflict` of a fork request whose last build was abandoned (service/forks.ts).
   */
  abandoned_by?: ForkAbandonment;
}

/**
 * Why a fork's build was deleted while it ran: `redaction`, a redaction of a version it copies (or is
 * to copy); `sweep`, the minute sweep of forks a crash cut short, which took it for one (it had been
 * building for over an hour).
 */
export type ForkAbandonment = 'redaction' | 'sweep';

export class MnemoError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MnemoError';
    this.code = code;
    this.details = details;
  }
}

export function isMnemoError(err: unknown): err is MnemoError {
  return err instanceof MnemoError;
}

/**
 * A caller's value as an error message shows it: whole up to 100 characters, else its first 100
 * and its length, so a huge one (a client's garbage) never comes back whole.
 */
export function excerpt(value: string): string {
  return value.length > 100 ? `${value.slice(0, 100)}… (${value.length} characters)` : value;
}

/** Names the id it could not find (its excerpt). */
export function notFound(what: string, id: string): MnemoError {
  return new MnemoError('not_found', `${what} not found: ${excerpt(id)}`);
}

/**
 * A fork's build whose hidden store `storeId` is no longer there to build: deleted while it was
 * built, by `by` (storage/port/forks.ts). Reads as the not_found it is; `forkAbandonedBy` tells it by its details.
 */
export function abandonedFork(storeId: string, by: ForkAbandonment): MnemoError {
  return new MnemoError('not_found', notFound('memory store', storeId).message, { abandoned_fork: storeId, abandoned_by: by });
}

/** Who abandoned the build of the fork `storeId` when `err` says so (`abandonedFork`); null for any other error. */
export function forkAbandonedBy(err: unknown, storeId: string): ForkAbandonment | null {
  if (!isMnemoError(err) || err.code !== 'not_found' || err.details.abandoned_fork !== storeId) return null;
  return err.details.abandoned_by ?? null;
}
