/**
 * @module One structured log line per request: method, route template, status, latency, request
 * id and key id. Never a header value, a secret or a body: nothing here reads them.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { AppEnv } from './env.js';

/** What the API logs through: pino's `logger.info(fields, message)` shape, so any pino logger fits. */
export interface ApiLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export function requestLog(logger: ApiLogger): MiddlewareHandler<AppEnv> {
  return async function requestLogMiddleware(c, next) {
    const started = performance.now();
    await next();
    logger.info(
      {
        method: c.req.method,
        route: routeTemplate(c),
        status: c.res.status,
        latency_ms: Math.round((performance.now() - started) * 1000) / 1000,
        request_id: c.get('requestId'),
        key_id: c.get('apiKey')?.id ?? null,
      },
      'request',
    );
  };
}

/**
 * The registered path that matched ("/v1/memory_stores/:memory_store_id"), never the raw URL, so
 * logs and metric labels stay bounded: middleware paths end in `*`, and a request only they
 * matched is "unmatched".
 */
export function routeTemplate(c: Context<AppEnv>): string {
  const routes = matchedRoutes(c);
  for (let i = routes.length - 1; i >= 0; i--) {
    const path = routes[i]!.path;
    if (!path.endsWith('*')) return path;
  }
  return 'unmatched';
}
