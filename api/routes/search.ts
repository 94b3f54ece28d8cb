/** @module GET /v1/memory_stores/:store/search (a mnemo extension): FTS5 or substring search over current memories. */
import { Hono } from 'hono';
import { parseSearchQuery, type Service } from '../../src/index.js';
import type { AppEnv } from '../env.js';
import { query } from '../request.js';
import { toWireSearchPage } from '../wire-continuity.js';

export function searchRoutes(service: Service) {
  const app = new Hono<AppEnv>();
  app.get('/:store/search', async (c) => {
    const q = parseSearchQuery(query(c));
    return c.json(toWireSearchPage(await service.searchMemories(c.var.caller, c.req.param('store'), q)));
  });
  return app;
}
