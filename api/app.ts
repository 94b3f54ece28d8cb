/** @module createApp: middleware order, route mounting, the error envelope for everything else. */
import { Hono } from 'hono';
import { createIdempotency, MnemoError, type Idempotency, type Service } from '../src/index.js';
import { auth } from './auth.js';
import { bodyLimit } from './body-limit.js';
import type { AppEnv } from './env.js';
import { onError } from './errors.js';
import { docsRoutes } from './openapi/routes.js';
import { mcpRoutes } from './mcp/http.js';
import { requestId } from './request-id.js';
import { methodsByPath, routeTable } from './route-table.js';
import { checkpointRoutes } from './routes/checkpoints.js';
import { keyRoutes, workspaceRoutes } from './routes/keys.js';
import { memoryRoutes } from './routes/memories.js';
import { searchRoutes } from './routes/search.js';
import { sessionRoutes, type SessionsApi } from './routes/sessions.js';
import { storeRoutes } from './routes/stores.js';
import { versionRoutes } from './routes/versions.js';

export interface AppDeps {
  service: Service;
  sessions?: SessionsApi;
  maxBodyBytes?: number;
  /** Idempotency-Key receipts; one with the default 24 h retention is made if not given. */
  idempotency?: Idempotency;
  log?: (line: string) => void;
}

export function createApp({ service, sessions, maxBodyBytes = 1024 * 1024, idempotency, log = console.error }: AppDeps) {
  const idem = idempotency ?? createIdempotency({ storage: service.storage, clock: service.clock });
  const app = new Hono<AppEnv>();
  let allowFor: ((path: string) => string[]) | undefined;
  app.onError(onError(log));
  app.use('*', requestId());
  app.use('/v1/*', bodyLimit(maxBodyBytes));
  app.use('/v1/*', auth(service.keys));
  // MCP over Streamable HTTP: the same keys, limits and grants as /v1.
  app.use('/mcp', bodyLimit(maxBodyBytes));
  app.use('/mcp', auth(service.keys));
  app.route('/mcp', mcpRoutes(service, log));

  app.route('/v1/memory_stores', storeRoutes(service, idem));
  app.route('/v1/memory_stores', memoryRoutes(service, idem));
  app.route('/v1/memory_stores', versionRoutes(service, idem));
  app.route('/v1/memory_stores', checkpointRoutes(service, idem));
  app.route('/v1/memory_stores', searchRoutes(service));
  if (sessions) app.route('/v1/sessions', sessionRoutes(sessions, idem));
  app.route('/v1/api_keys', keyRoutes(service));
  app.route('/v1/workspaces', workspaceRoutes(service));

  app.get('/health', (c) => c.json({ status: 'ok' }));
  app.route('/', docsRoutes());
  app.notFound((c) => {
    const path = new URL(c.req.url).pathname;
    // Read once, on the first miss: by then every route is registered. /v1 misses pass auth first.
    allowFor ??= methodsByPath(routeTable(app));
    const allow = allowFor(path);
    if (allow.length) throw new MnemoError('method_not_allowed', `${c.req.method} is not allowed on ${path} (allowed: ${allow.join(', ')})`, { allow });
    throw new MnemoError('not_found', `no route for ${c.req.method} ${path}`);
  });
  return app;
}
