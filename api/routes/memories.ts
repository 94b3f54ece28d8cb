/** @module /v1/memory_stores/:store/memories: create, list, retrieve, update, delete. */
import { Hono } from 'hono';
import {
  parseMemoryCreate,
  parseMemoryListQuery,
  parseMemoryUpdate,
  parseSha256,
  parseView,
  type Service,
} from '../../src/index.js';
import type { AppEnv } from '../env.js';
import { jsonBody, query } from '../request.js';
import { toWireListItem, toWireMemory, toWirePage } from '../wire.js';

export function memoryRoutes(service: Service) {
  const app = new Hono<AppEnv>();

  app.post('/:store/memories', async (c) => {
    const view = parseView(query(c)['view'], 'basic');
    const input = parseMemoryCreate(await jsonBody(c));
    return c.json(toWireMemory(service.createMemory(c.var.caller, c.req.param('store'), input), view));
  });

  app.get('/:store/memories', (c) => {
    const q = parseMemoryListQuery(query(c));
    const page = service.listMemories(c.var.caller, c.req.param('store'), q);
    return c.json(toWirePage(page, (item) => toWireListItem(item, q.view)));
  });

  app.get('/:store/memories/:memory', (c) => {
    const view = parseView(query(c)['view'], 'full');
    const memory = service.getMemory(c.var.caller, c.req.param('store'), c.req.param('memory'));
    return c.json(toWireMemory(memory, view));
  });

  app.post('/:store/memories/:memory', async (c) => {
    const view = parseView(query(c)['view'], 'basic');
    const write = parseMemoryUpdate(await jsonBody(c));
    const memory = service.updateMemory(c.var.caller, c.req.param('store'), c.req.param('memory'), write);
    return c.json(toWireMemory(memory, view));
  });

  app.delete('/:store/memories/:memory', (c) => {
    const raw = query(c)['expected_content_sha256'];
    const expected = raw === undefined ? undefined : parseSha256(raw, 'expected_content_sha256');
    const id = c.req.param('memory');
    service.deleteMemory(c.var.caller, c.req.param('store'), id, expected);
    return c.json({ id, type: 'memory_deleted' as const });
  });

  return app;
}
