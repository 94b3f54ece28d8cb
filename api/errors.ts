/** @module ErrorCode → HTTP status and envelope type, and the one place errors become responses. */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { MnemoError, databaseBusy, diskFull, isDatabaseBusy, isDiskFull, type ErrorCode } from '../src/index.js';
import type { AppEnv } from './env.js';
import { bodyUnfinished, clientAborted } from './inflight.js';
import { routeTemplate } from './log.js';

export const HTTP_ERRORS: Record<ErrorCode, { status: ContentfulStatusCode; type: string }> = {
  invalid_request: { status: 400, type: 'invalid_request_error' },
  invalid_path: { status: 400, type: 'invalid_request_error' },
  path_too_long: { status: 400, type: 'invalid_request_error' },
  name_too_long: { status: 400, type: 'invalid_request_error' },
  content_too_large: { status: 400, type: 'invalid_request_error' },
  invalid_utf8: { status: 400, type: 'invalid_request_error' },
  unauthenticated: { status: 401, type: 'authentication_error' },
  forbidden: { status: 403, type: 'permission_error' },
  read_only: { status: 403, type: 'permission_error' },
  not_found: { status: 404, type: 'not_found_error' },
  // The anchor API has no 405 type; the request is malformed, like any other invalid_request_error.
  method_not_allowed: { status: 405, type: 'invalid_request_error' },
  path_conflict: { status: 409, type: 'memory_path_conflict_error' },
  precondition_failed: { status: 409, type: 'memory_precondition_failed_error' },
  conflict: { status: 409, type: 'conflict_error' },
  idempotency_conflict: { status: 409, type: 'idempotency_conflict' },
  archived: { status: 409, type: 'conflict_error' },
  request_too_large: { status: 413, type: 'request_too_large' },
  // RFC 9110's answer to a content-coding the server does not take; the request is at fault.
  unsupported_encoding: { status: 415, type: 'invalid_request_error' },
  // The anchor API has no timeout type; like Node's own 408, the request is at fault.
  request_timeout: { status: 408, type: 'invalid_request_error' },
  budget_exceeded: { status: 400, type: 'invalid_request_error' },
  limit_exceeded: { status: 413, type: 'request_too_large' },
  // The Anthropic API's type for "try again shortly"; 503 rather than its 529, which proxies do not know.
  overloaded: { status: 503, type: 'overloaded_error' },
  // The database is down, not mnemo busy: a server error, and one the client may retry later.
  unavailable: { status: 503, type: 'api_error' },
  // Another process holds SQLite's write lock: the same as a database that cannot be reached, for a client.
  database_locked: { status: 503, type: 'api_error' },
  // The host cannot mount now (the operator's to fix, the server log says why): a server error, not a crash.
  mount_failed: { status: 503, type: 'api_error' },
  // WebDAV's 507 Insufficient Storage: the server cannot store it now; the same request works once space is freed.
  storage_full: { status: 507, type: 'api_error' },
  internal: { status: 500, type: 'api_error' },
};

export function errorBody(err: MnemoError, requestId: string) {
  const { type } = HTTP_ERRORS[err.code];
  const error: Record<string, string | number> = { type, message: err.message };
  if (err.code === 'path_conflict') {
    error['conflicting_path'] = err.details.conflicting_path ?? '';
    error['conflicting_memory_id'] = err.details.conflicting_memory_id ?? '';
  }
  if (err.code === 'budget_exceeded' && err.details.needed_bytes !== undefined) error['needed_bytes'] = err.details.needed_bytes;
  // A fork request whose build was deleted while it ran: by a redaction or by the sweep of forks a crash cut short.
  if (err.code === 'conflict' && err.details.abandoned_by !== undefined) error['abandoned_by'] = err.details.abandoned_by;
  return { type: 'error', error, request_id: requestId };
}

/**
 * app.onError: MnemoErrors render by the table; anything else is logged and becomes a bare 500.
 * A client that hung up mid-body is not a fault of ours: one `warn` line, no stack. `log` takes
 * the 500s (the app passes the logger's error level when there is one).
 */
export function onError(log: (line: string) => void, warn: (line: string) => void = log) {
  return function renderError(err: Error, c: Context<AppEnv>) {
    const requestId = c.get('requestId') ?? 'req_unknown';
    const mnemo = toMnemoError(err, c, log, warn);
    c.header('request-id', requestId);
    if (mnemo.details.allow) c.header('allow', mnemo.details.allow.join(', '));
    // overloaded: the work that refused this (search indexing, other uploads) ends soon; 1 s is enough.
    if (mnemo.code === 'overloaded') c.header('retry-after', '1');
    // RFC 9110 §12.5.3: a 415 for a content-coding names the codings the server does take.
    if (mnemo.code === 'unsupported_encoding') c.header('accept-encoding', 'identity');
    // unavailable: the database is restarting or unreachable; a restart takes seconds, not one.
    if (mnemo.code === 'unavailable' || mnemo.code === 'database_locked') c.header('retry-after', '2');
    // The SDKs retry every 409 unless told not to; ours say what is, and the same request meets it again.
    if (HTTP_ERRORS[mnemo.code].status === 409 && !mnemo.details.transient) c.header('x-should-retry', 'false');
    closeIfBodyUnread(c);
    return c.json(errorBody(mnemo, requestId), HTTP_ERRORS[mnemo.code].status);
  };
}

/**
 * Any error as the MnemoError it is answered with, for every face that renders HTTP (the API's
 * envelope, the console's pages). Only a failure of ours is logged with its stack, through `log`.
 */
export function toMnemoError(err: Error, c: Context, log: (line: string) => void, warn: (line: string) => void): MnemoError {
  if (err instanceof MnemoError) return err;
  const requestId = c.get('requestId') ?? 'req_unknown';
  if (c.get('bodyTimedOut')) {
    // Its 408 is answered already (inflight.ts): this is the handler's read failing as the connection closes.
    return new MnemoError('request_timeout', 'request body incomplete', {}, { cause: err });
  }
  if (clientAborted(c)) {
    warn(`request ${requestId} aborted: the client closed the connection before its body was complete (${c.req.method} ${routeTemplate(c)})`);
    return new MnemoError('invalid_request', 'request body incomplete: the client closed the connection', {}, { cause: err });
  }
  if (isDiskFull(err)) {
    // SQLite's SQLITE_FULL, PostgreSQL's 53100, ENOSPC: nothing was written (storage/common/disk-full.ts).
    warn(`request ${requestId} refused: ${err.message}: the disk holding the database is full`);
    return diskFull(err);
  }
  if (isDatabaseBusy(err)) {
    // Another process held SQLite's write lock past the busy timeout: temporary, and no stack to show.
    warn(`request ${requestId} refused: ${err.message}: another process held the database's write lock for over 5 s`);
    return databaseBusy(err);
  }
  log(`request ${requestId} failed: ${err.stack ?? err.message}`);
  return new MnemoError('internal', 'internal server error', {}, { cause: err });
}

/**
 * Refused before its body arrived (a 401, a 503, a 408): close rather than read the rest to keep
 * the connection, so a client that never finishes costs nothing more.
 */
export function closeIfBodyUnread(c: Context): void {
  if (bodyUnfinished(c)) c.header('connection', 'close');
}
