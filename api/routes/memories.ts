/** @module /v1/memory_stores/:store/memories: create, list, retrieve, update, delete. */
import { Hono } from 'hono';
import {
  parseMemoryCreate,
  parseMemoryListQuery,
  parseMemoryUpdate,
  parseSha256,
  parseView,
  type Idempotency,
  type Service,
} from '../../src/index.js';
import type { AppEnv } from '../env.js';
import { mutation, ok } from '../idempotency.js';
import { jsonBody, noBody, query } from '../request.js';
import { toWireListItem, toWireMemory, toWirePage } from '../wire.js';

export function memoryRoutes(service: Service, idem: Idempotency) {
  const app = new Hono<AppEnv>();

  app.post('/:store/memories', async (c) => {
    const view = parseView(query(c)['view'], 'basic');
    const body = await jsonBody(c);
    const input = parseMemoryCreate(body);
    const storeId = c.req.param('store');
    return mutation(c, idem, 'POST /v1/memory_stores/{id}/memories', body, async (ops) => {
      const m = await ops.createMemory(c.var.caller, storeId, input);
      return ok(toWireMemory(m, view), { storeId, versionId: m.versionId });
    });
  });

  app.get('/:store/memories', async (c) => {
    const q = parseMemoryListQuery(query(c));
    const page = await service.listMemories(c.var.caller, c.req.param('store'), q);
    return c.json(toWirePage(page, (item) => toWireListItem(item, q.view)));
  });

  app.get('/:store/memories/:memory', async (c) => {
    const view = parseView(query(c)['view'], 'full');
    const memory = await service.getMemory(c.var.caller, c.req.param('store'), c.req.param('memory'));
    return c.json(toWireMemory(memory, view));
  });

  app.post('/:store/memories/:memory', async (c) => {
    const view = parseView(query(c)['view'], 'basic');
    const body = await jsonBody(c);
    const write = parseMemoryUpdate(body);
    const storeId = c.req.param('store');
    return mutation(c, idem, 'POST /v1/memory_stores/{id}/memories/{memory_id}', body, async (ops) => {
      const m = await ops.updateMemory(c.var.caller, storeId, c.req.param('memory'), write);
      return ok(toWireMemory(m, view), { storeId, versionId: m.versionId });
    });
  });

  app.delete('/:store/memories/:memory', async (c) => {
    await noBody(c);
    const raw = query(c)['expected_content_sha256'];
    const expected = raw === undefined ? undefined : parseSha256(raw, 'expected_content_sha256');
    const id = c.req.param('memory');
    const storeId = c.req.param('store');
    return mutation(c, idem, 'DELETE /v1/memory_stores/{id}/memories/{memory_id}', null, async (ops) => {
      await ops.deleteMemory(c.var.caller, storeId, id, expected);
      // Names its store, as every answer about a store's contents does: its receipt goes when the store is deleted.
      return ok({ id, type: 'memory_deleted' as const }, { storeId });
    });
  });

  return app;
}
