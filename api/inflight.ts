/**
 * @module A cap on request bodies being read at once (MNEMO_MAX_INFLIGHT_BODIES): past it, 503
 * overloaded_error with Retry-After, before a byte of the body is read. Runs after authentication,
 * so only known keys can hold a slot; a slot is freed when its body has been read, the client goes
 * away, or the request ends, whichever comes first.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { MnemoError } from '../src/index.js';
import type { AppEnv } from './env.js';
import { header } from './request.js';

export function inflightBodies(max: number): MiddlewareHandler<AppEnv> {
  let inflight = 0;
  return async function inflightBodiesMiddleware(c, next) {
    if (!hasBody(c)) return next();
    if (inflight >= max) {
      // The error handler adds Retry-After to every `overloaded` answer.
      throw new MnemoError('overloaded', `the server is reading ${max} request bodies already (MNEMO_MAX_INFLIGHT_BODIES); retry shortly`);
    }
    inflight++;
    let held = true;
    const incoming = c.env?.incoming;
    const release = () => {
      if (!held) return;
      held = false;
      inflight--;
      incoming?.off('end', release);
      incoming?.off('close', release);
    };
    incoming?.once('end', release);
    incoming?.once('close', release);
    try {
      await next();
    } finally {
      release();
    }
  };
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
