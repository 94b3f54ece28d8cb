/** @module Gives every request an id, echoed in the `request-id` header and in error bodies. */
import type { MiddlewareHandler } from 'hono';
import { newId } from '../src/index.js';
import type { AppEnv } from './env.js';

export function requestId(): MiddlewareHandler<AppEnv> {
  return async function requestIdMiddleware(c, next) {
    const id = newId('request');
    c.set('requestId', id);
    await next();
    c.res.headers.set('request-id', id);
  };
}
