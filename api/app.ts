/** @module createApp: middleware order, route mounting, the error envelope for everything else. */
import { Hono } from 'hono';
import { MnemoError, type Service } from '../src/index.js';
import { adminRoutes } from './admin/index.js';
import { auth } from './auth.js';
import { bodyLimit } from './body-limit.js';
import type { AppEnv } from './env.js';
import { onError } from './errors.js';
import { headCancelsBody } from './head.js';
import { healthRoutes } from './health.js';
import { inflightBodies } from './inflight.js';
import { requestLog, type ApiLogger } from './log.js';
import { metricsRoutes, type Metrics } from './metrics.js';
import { docsRoutes } from './openapi/routes.js';
import { mcpRoutes } from './mcp/http.js';
import { requestId } from './request-id.js';
import { methodsByPath, routeTable } from './route-table.js';
import { adminActionRoutes } from './routes/admin-actions.js';
import { checkpointRoutes } from './routes/checkpoints.js';
import { historyRoutes, type HistoryRouteOptions } from './routes/history.js';
import { keyRoutes, workspaceRoutes } from './routes/keys.js';
import { memoryRoutes } from './routes/memories.js';
import { searchRoutes } from './routes/search.js';
import { sessionRoutes } from './routes/sessions.js';
import { storeRoutes } from './routes/stores.js';
import { versionRoutes } from './routes/versions.js';

export interface AppDeps {
  service: Service;
  maxBodyBytes?: number;
  log?: (line: string) => void;
  /** Structured logs: one line per request, warnings (aborted uploads). None: no request lines. */
  logger?: ApiLogger;
  /** Request bodies read at once; past it 503 overloaded_error (MNEMO_MAX_INFLIGHT_BODIES). */
  maxInflightBodies?: number;
  /** A body that goes this long without a byte, or six times this in all, is answered 408 (MNEMO_BODY_TIMEOUT_SECONDS). */
  bodyTimeoutMs?: number;
  /** Prometheus metrics; GET /metrics is served when given. */
  metrics?: Metrics;
  /** MNEMO_METRICS_PUBLIC=1: /metrics without a key. */
  metricsPublic?: boolean;
  /** The change feed's event streams: heartbeat interval and timer (tests shorten and count them). */
  feed?: HistoryRouteOptions;
}

export function createApp({
  service, maxBodyBytes = 1024 * 1024, log = console.error,
  logger, maxInflightBodies = 64, bodyTimeoutMs = 10_000, metrics, metricsPublic = false, feed = {},
}: AppDeps) {
  const idem = service.idempotency;
  const app = new Hono<AppEnv>();
  let allowFor: ((path: string) => string[]) | undefined;
  // Unexpected errors (a stack, a bare 500) at error level wherever they are caught: the API's
  // handler, the console's and MCP's tools. `log` is the info-level line log.
  const fault = logger ? (line: string) => logger.error({}, line) : log;
  const warn = logger ? (line: string) => logger.warn({}, line) : log;
  const renderError = onError(fault, warn);
  app.onError(renderError);
  app.use('*', requestId());
  app.use('*', headCancelsBody());
  if (logger) app.use('*', requestLog(logger));
  if (metrics) app.use('*', metrics.requests());
  // Authentication first, from the headers alone: an unknown caller is refused before a byte of
  // its body is read, and only known keys can hold one of the in-flight body slots.
  const inflight = inflightBodies({ max: maxInflightBodies, idleMs: bodyTimeoutMs });
  app.use('/v1/*', auth(service.keys));
  app.use('/v1/*', inflight);
  app.use('/v1/*', bodyLimit(maxBodyBytes));
  // MCP over Streamable HTTP: the same keys, limits and grants as /v1.
  app.use('/mcp', auth(service.keys));
  app.use('/mcp', inflight);
  app.use('/mcp', bodyLimit(maxBodyBytes));
  app.route('/mcp', mcpRoutes(service, fault));

  app.route('/v1/memory_stores', storeRoutes(service, idem));
  app.route('/v1/memory_stores', memoryRoutes(service, idem));
  app.route('/v1/memory_stores', versionRoutes(service, idem));
  app.route('/v1/memory_stores', historyRoutes(service, feed));
  app.route('/v1/memory_stores', checkpointRoutes(service, idem));
  app.route('/v1/memory_stores', searchRoutes(service));
  app.route('/v1/sessions', sessionRoutes(service.sessions, idem));
  app.route('/v1/api_keys', keyRoutes(service));
  app.route('/v1/workspaces', workspaceRoutes(service));
  app.route('/v1/admin_actions', adminActionRoutes(service));

  app.get('/health', (c) => c.json({ status: 'ok' }));
  app.route('/', healthRoutes(service.readiness));
  if (metrics) app.route('/metrics', metricsRoutes(metrics, service.keys, { open: metricsPublic }));
  app.route('/', docsRoutes());
  // The web console: its own sign-in sessions and CSRF checks, no CORS (api/admin/); its form
  // bodies take the API's slots once the session is known.
  app.route('/admin', adminRoutes(service, { fault, warn, bodySlots: inflight, bodyTimeoutMs }));
  app.notFound((c) => {
    const path = new URL(c.req.url).pathname;
    // Read once, on the first miss: by then every route is registered. /v1 misses pass auth first.
    allowFor ??= methodsByPath(routeTable(app));
    const allow = allowFor(path);
    // Rendered here, not thrown: Hono calls notFound outside its handlers' error handling, so a
    // throw skipped the request's metrics (and its log line) on the way out.
    if (allow.length) return renderError(new MnemoError('method_not_allowed', `${c.req.method} is not allowed on ${path} (allowed: ${allow.join(', ')})`, { allow }), c);
    return renderError(new MnemoError('not_found', `no route for ${c.req.method} ${path}`), c);
  });
  return app;
}
