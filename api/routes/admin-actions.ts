/** @module GET /v1/admin_actions (our extension): the log of admin actions, newest first, admin keys only. */
import { Hono } from 'hono';
import { parseLimit, type Service } from '../../src/index.js';
import type { AppEnv } from '../env.js';
import { query } from '../request.js';
import { toWireAdminAction, toWirePage } from '../wire.js';

export function adminActionRoutes(service: Service) {
  const app = new Hono<AppEnv>();
  app.get('/', async (c) => {
    const q = query(c);
    const page = await service.adminActions.list(c.var.caller, parseLimit(q['limit']), q['page'] || null);
    return c.json(toWirePage(page, toWireAdminAction));
  });
  return app;
}
