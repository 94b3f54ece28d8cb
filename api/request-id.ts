/** @module Gives every request an id, echoed in the `request-id` header and in error bodies. */
import type { MiddlewareHandler } from 'hono';
import { newId } from '../src/index.js';
import type { AppEnv } from './env.js';

export function requestId(): MiddlewareHandler<AppEnv> {
  return async function requestIdMiddleware(c, next) {
    const id = newId('request');
    c.set('requestId', id);
    // On Node's response when there is one: setting it on `c.res` afterwards turned the response's
    // plain header object into a web `Headers`, which @hono/node-server then converted back.
    const outgoing = c.env?.outgoing;
    outgoing?.setHeader('request-id', id);
    await next();
    if (!outgoing) c.res.headers.set('request-id', id);
  };
}
