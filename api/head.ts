/**
 * @module HEAD requests: Hono answers one by running the GET route and dropping the body it made
 * without reading it. A body that is a stream (the change feed's events) would then never learn that
 * nobody reads it, and would follow its store until the server stops. Cancelling the body ends it
 * as a client hanging up does.
 */
import type { MiddlewareHandler } from 'hono';

export function headCancelsBody(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    if (c.req.method === 'HEAD' && c.res.body && !c.res.bodyUsed) await c.res.body.cancel().catch(() => {});
  };
}
