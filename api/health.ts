/**
 * @module GET /healthz (the process answers) and GET /readyz (the database answers and every
 * active session is mounted), both without a key: load balancers and orchestrators probe them.
 * Being unauthenticated, they say how many mounts are missing, never which: a host path names a
 * session of some workspace.
 */
import { Hono } from 'hono';
import type { Readiness } from '../src/index.js';
import type { AppEnv } from './env.js';

export function healthRoutes(readiness: () => Promise<Readiness>) {
  const app = new Hono<AppEnv>();
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const r = await readiness();
    const body = {
      status: r.ready ? 'ready' : 'not_ready',
      checks: {
        database: r.database,
        mounts: r.unmounted.length === 0 ? 'ok' : `${r.unmounted.length} of the active sessions' mounts are not mounted`,
      },
      active_sessions: r.activeSessions,
      mounts: r.mounts,
    };
    return c.json(body, r.ready ? 200 : 503);
  });
  return app;
}
