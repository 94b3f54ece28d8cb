/**
 * @module A cap on request bodies being read at once (MNEMO_MAX_INFLIGHT_BODIES): past it, 503
 * overloaded_error with Retry-After, before a byte of the body is read. Runs after authentication
 * (an API key, or a console session: the console's forms take the same slots), so only known keys
 * can hold a slot. Two reserves, each an eighth of the slots (SHARE, at least one), keep one holder's
 * stalled uploads from locking the others out: a workspace (the unit of tenancy: its admins mint
 * keys at will) that holds an eighth takes none of the last eighth, which stay for other workspaces;
 * a key that holds an eighth takes none of the last quarter, so the other keys of its workspace keep
 * an eighth too. Operator keys count as a tenant of their own, so no workspace starves the operator.
 * One orchestrator's burst of writes may still use three quarters of the slots (48 of the default 64),
 * one workspace's keys seven eighths. A slot is freed when its body has been read, the client goes
 * away, the request ends, the body stops arriving for MNEMO_BODY_TIMEOUT_SECONDS, or it has not all
 * arrived after BODY_DEADLINE_PERIODS of them (408, and the connection closed), whichever comes first.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { MnemoError } from '../src/index.js';
import type { AppEnv } from './env.js';
import { header } from './request.js';

/** The part of the slots kept for other workspaces once one holds that many, and again for other keys (at least one). */
export const SHARE = 1 / 8;

/**
 * A whole body must arrive within this many MNEMO_BODY_TIMEOUT_SECONDS of the server waiting on it
 * (60 s by default): the default 1 MiB body limit then asks for about 17 KiB/s, below any real link,
 * while a client that trickles a byte per period no longer keeps a slot for ever. An operator who
 * allows larger bodies over slow links raises MNEMO_BODY_TIMEOUT_SECONDS.
 */
export const BODY_DEADLINE_PERIODS = 6;

export interface InflightOptions {
  /** Bodies read at once (MNEMO_MAX_INFLIGHT_BODIES). */
  max: number;
  /** How long a body may go without a byte while the server waits for it (MNEMO_BODY_TIMEOUT_SECONDS). */
  idleMs: number;
}

export function inflightBodies({ max, idleMs }: InflightOptions): MiddlewareHandler<AppEnv> {
  const share = Math.max(1, Math.floor(max * SHARE));
  let inflight = 0;
  const byKey = new Map<string, number>();
  const byTenant = new Map<string, number>();
  return async function inflightBodiesMiddleware(c, next) {
    if (!hasBody(c)) return next();
    // The error handler adds Retry-After to every `overloaded` answer.
    if (inflight >= max) {
      throw new MnemoError('overloaded', `the server is reading ${max} request bodies already (MNEMO_MAX_INFLIGHT_BODIES); retry shortly`);
    }
    const apiKey = c.var.apiKey;
    const key = apiKey?.id ?? '';
    // Whose slots these are: the key's home workspace, or the operator's for an operator key (its
    // uploads for another workspace are still the operator's).
    const tenant = apiKey === undefined ? '' : apiKey.allWorkspaces ? '*operator' : apiKey.workspaceId;
    const mine = byKey.get(key) ?? 0;
    const ours = byTenant.get(tenant) ?? 0;
    // Past its share a holder still takes free slots (one orchestrator's burst of writes), but never
    // the last of them: the last `share` stay for other workspaces, the `share` before for other keys.
    if (ours >= share && inflight >= max - share) {
      throw new MnemoError(
        'overloaded',
        `this workspace is sending ${ours} request bodies already; the last ${share} of MNEMO_MAX_INFLIGHT_BODIES=${max} are kept for other workspaces; retry shortly`,
      );
    }
    if (mine >= share && inflight >= max - 2 * share) {
      throw new MnemoError(
        'overloaded',
        `this API key is sending ${mine} request bodies already; the last ${Math.min(max, 2 * share)} of MNEMO_MAX_INFLIGHT_BODIES=${max} are kept for other keys; retry shortly`,
      );
    }
    inflight++;
    byKey.set(key, mine + 1);
    byTenant.set(tenant, ours + 1);
    let held = true;
    const incoming = c.env?.incoming;
    const release = () => {
      if (!held) return;
      held = false;
      inflight--;
      drop(byKey, key);
      drop(byTenant, tenant);
      incoming?.off('end', release);
      incoming?.off('close', release);
    };
    incoming?.once('end', release);
    incoming?.once('close', release);
    try {
      await withinBodyTimeout(c, next, idleMs);
    } finally {
      release();
    }
  };
}

function drop(counts: Map<string, number>, name: string): void {
  const left = (counts.get(name) ?? 1) - 1;
  if (left > 0) counts.set(name, left);
  else counts.delete(name);
}

/**
 * The body timeouts alone, without a slot: for the one body read before a key is known (the
 * console's sign-in form, at most 1 KiB), where a slot would let unknown callers take them.
 */
export function bodyTimeout(idleMs: number): MiddlewareHandler<AppEnv> {
  return async function bodyTimeoutMiddleware(c, next) {
    if (!hasBody(c)) return next();
    await withinBodyTimeout(c, next, idleMs);
  };
}

async function withinBodyTimeout(c: Context<AppEnv>, next: () => Promise<void>, idleMs: number): Promise<void> {
  const watch = watchBody(c, idleMs);
  try {
    if (!watch) return await next();
    const handled = next();
    // Past a timeout the handler's read fails once the connection closes; the 408 answered for it.
    handled.catch(() => {});
    await Promise.race([handled, watch.stalled]);
  } finally {
    watch?.stop();
  }
}

/**
 * Timers on a body still arriving: `stalled` rejects with request_timeout once no byte of it came
 * for `idleMs` while the server waited for one, or once the server has waited on it for
 * BODY_DEADLINE_PERIODS × `idleMs` in all (a client sending a byte now and then kept its slot for
 * ever). Time when bytes were received but not read yet does not count: then the server is the
 * slow one. Checked a few times per period, from the socket's byte count, so the body stream is
 * never touched.
 *
 * The server may itself stand still (a GC pause, a long synchronous piece, a process the host did
 * not run): the first turn after it runs the timers before the poll phase reads what the client sent
 * meanwhile, which still sits in the kernel's socket buffer. So a check that would time the body
 * out decides only in a `setImmediate`, once that poll phase has read it; and a late check adds at
 * most one period to the time waited on the body, the rest of the delay being the server's.
 */
function watchBody(c: Context<AppEnv>, idleMs: number): { stalled: Promise<never>; stop(): void } | null {
  const incoming = c.env?.incoming;
  const socket = incoming?.socket;
  if (!incoming || !socket || incoming.complete) return null;
  const deadlineMs = BODY_DEADLINE_PERIODS * idleMs;
  const period = Math.max(10, Math.floor(idleMs / 4));
  let timer: NodeJS.Timeout | undefined;
  let recheck: NodeJS.Immediate | undefined;
  const stop = () => {
    clearInterval(timer);
    clearImmediate(recheck);
    recheck = undefined;
  };
  const stalled = new Promise<never>((_, reject) => {
    let seen = socket.bytesRead;
    let last = Date.now();
    let quietSince = last;
    let waited = 0;
    /** Why the body is out of time now, or null: from the socket's byte count as it is at `now`. */
    const overdue = (now: number): string | null => {
      if (socket.bytesRead !== seen || incoming.readableLength > 0) {
        seen = socket.bytesRead;
        quietSince = now;
      }
      if (now - quietSince >= idleMs) return `none of it arrived for ${idleMs / 1000} s (MNEMO_BODY_TIMEOUT_SECONDS)`;
      if (waited >= deadlineMs) return `it did not all arrive within ${deadlineMs / 1000} s (${BODY_DEADLINE_PERIODS} × MNEMO_BODY_TIMEOUT_SECONDS)`;
      return null;
    };
    timer = setInterval(() => {
      if (incoming.complete) return stop();
      if (recheck !== undefined) return;
      const now = Date.now();
      // A tick later than its period was the server held up, not the client: it adds one period at most.
      if (incoming.readableLength === 0) waited += Math.min(now - last, period);
      last = now;
      if (overdue(now) === null) return;
      recheck = setImmediate(() => {
        recheck = undefined;
        if (incoming.complete) return stop();
        const why = overdue(Date.now());
        if (why === null) return;
        stop();
        c.set('bodyTimedOut', true);
        reject(new MnemoError('request_timeout', `request body incomplete: ${why}`));
      });
      recheck.unref();
    }, period);
    timer.unref();
  });
  stalled.catch(() => {});
  return { stalled, stop };
}

function hasBody(c: Context<AppEnv>): boolean {
  if (header(c, 'transfer-encoding') !== undefined) return true;
  const length = header(c, 'content-length');
  return length !== undefined && length !== '0';
}

/** True when the request's body has not all arrived yet (Node's parser sets `complete` at its end). */
export function bodyUnfinished(c: Context<AppEnv>): boolean {
  const incoming = c.env?.incoming;
  return incoming !== undefined && !incoming.complete && hasBody(c);
}

/** True when the client went away before sending its whole request (an aborted upload). */
export function clientAborted(c: Context<AppEnv>): boolean {
  const incoming = c.env?.incoming;
  if (!incoming) return false;
  return incoming.errored !== null || (incoming.destroyed && !incoming.complete);
}
