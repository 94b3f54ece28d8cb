/**
 * @module The one place the PostgreSQL adapter decides "the database cannot be reached": a failure
 * of the connection (refused, socket gone, cut, timed out) or PostgreSQL saying it is shutting down
 * or starting up becomes MnemoError `unavailable` ("database unavailable": 503 over HTTP, EIO on a
 * mount), and so does PostgreSQL out of connections or memory (class 53 but a full disk).
 * Everything else (a constraint, a syntax error, a refused login) stays what it was: a
 * client that retries a 503 must have a reason to expect a different answer later.
 */
import { MnemoError } from '../../domain/errors.js';
import { diskFull, isDiskFull } from '../common/disk-full.js';

/**
 * SQLSTATEs of a server going away or not there yet (admin_shutdown, crash_shutdown,
 * cannot_connect_now), and query_canceled: the pool's `statement_timeout` (db.ts TIMEOUTS), the
 * server's side of the bounded wait that `query_timeout` is on the client's (or an operator's
 * pg_cancel_backend), both "the database did not answer in time".
 */
const SERVER_GOING = new Set(['57P01', '57P02', '57P03', '57014']);

/**
 * Socket errors on the way to PostgreSQL or while talking to it (ENOENT: its unix socket is gone),
 * and a host name that does not resolve (ENOTFOUND, or EAI_AGAIN when the resolver did not answer):
 * a compose service not up yet, or DNS away, is as unreachable as a port that refuses.
 */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOENT', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'EPIPE', 'EAI_AGAIN', 'ENOTFOUND']);
const SOCKET_CALLS = new Set(['connect', 'read', 'write', 'getaddrinfo']);

/**
 * node-postgres's own words for a connection that ended or never came: "Connection terminated
 * [unexpectedly | due to connection timeout]", the pool's wait for a connection, `query_timeout`,
 * a client used after its connection broke, and a TLS handshake cut short.
 */
const DRIVER_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect$/,
  /^timeout expired$/,
  /^Query read timeout$/,
  /is not queryable$/,
  /^Client network socket disconnected before secure TLS connection was established$/,
];

export function isUnreachable(err: unknown): boolean {
  if (!(err instanceof Error) || err instanceof MnemoError) return false;
  const e = err as Error & { code?: unknown; syscall?: unknown };
  if (typeof e.code === 'string') {
    // A SQLSTATE from the server: class 08 is "connection exception".
    if (e.code.startsWith('08') || SERVER_GOING.has(e.code) || isOutOfResources(e.code)) return true;
    if (SOCKET_CODES.has(e.code) && typeof e.syscall === 'string' && SOCKET_CALLS.has(e.syscall)) return true;
  }
  return DRIVER_MESSAGES.some((m) => m.test(err.message));
}

/**
 * Class 53, insufficient resources: too_many_connections (53300: max_connections full, or a role's
 * or database's connection limit), out_of_memory, configuration_limit_exceeded. Waiting fixes them
 * as it fixes a restart. Not disk_full (53100): that one is `storage_full` (common/disk-full.ts).
 */
function isOutOfResources(code: string): boolean {
  return code.startsWith('53') && code !== '53100';
}

export function databaseUnavailable(cause: unknown): MnemoError {
  const reason = notOutOfReach(cause);
  return new MnemoError('unavailable', 'database unavailable', reason ? { reason } : {}, { cause });
}

/**
 * What an `unavailable` failure is when PostgreSQL answered (so it is not out of reach): a statement
 * cancelled by its timeout or an operator, the client's own wait for an answer, a class 53 shortage
 * other than connections. Null for a connection failure. Named by SQLSTATE, never by the server's
 * text: /readyz needs no key.
 */
function notOutOfReach(err: unknown): string | null {
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : '';
  if (code === '57014') return 'PostgreSQL cancelled a statement (SQLSTATE 57014: statement_timeout, a lock held too long, or an operator)';
  if (/^(timeout expired|Query read timeout)$/.test(message)) return 'PostgreSQL did not answer a statement in time (the client\'s query timeout)';
  if (typeof code === 'string' && isOutOfResources(code) && code !== '53300') return `PostgreSQL is out of resources (SQLSTATE ${code})`;
  return null;
}

/**
 * Runs port operations and turns an unreachable database's failures into `unavailable`. It logs
 * once when the database stops answering (with the driver's reason, which clients never see) and
 * once when an operation succeeds again, so an outage is two log lines, not one per request.
 */
export function createOutageGuard(log: (line: string) => void = () => {}) {
  let down = false;
  return async function guard<T>(run: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await run();
    } catch (err) {
      // PostgreSQL's disk_full (53100): the server answers, its disk does not take more (507, ENOSPC).
      if (isDiskFull(err)) throw diskFull(err);
      if (!isUnreachable(err)) throw err;
      if (!down) {
        down = true;
        log(`mnemo: PostgreSQL is unavailable (${(err as Error).message}): requests answer 503 and mounts EIO until it answers again`);
      }
      throw databaseUnavailable(err);
    }
    if (down) {
      down = false;
      log('mnemo: PostgreSQL answers again');
    }
    return result;
  };
}
