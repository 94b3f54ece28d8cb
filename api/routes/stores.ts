/** @module /v1/memory_stores: create, list, retrieve, update, archive, delete. */
import { Hono } from 'hono';
import { parseStoreCreate, parseStoreListQuery, parseStoreUpdate, type Service } from '../../src/index.js';
import type { AppEnv } from '../env.js';
import { jsonBody, query } from '../request.js';
import { toWirePage, toWireStore } from '../wire.js';

export function storeRoutes(service: Service) {
  const app = new Hono<AppEnv>();

  app.post('/', async (c) => {
    const input = parseStoreCreate(await jsonBody(c));
    return c.json(toWireStore(service.createStore(c.var.caller, input)));
  });

  app.get('/', (c) => {
    const page = service.listStores(c.var.caller, parseStoreListQuery(query(c)));
    return c.json(toWirePage(page, toWireStore));
  });

  app.get('/:store', (c) => c.json(toWireStore(service.getStore(c.var.caller, c.req.param('store')))));

  app.post('/:store', async (c) => {
    const patch = parseStoreUpdate(await jsonBody(c));
    return c.json(toWireStore(service.updateStore(c.var.caller, c.req.param('store'), patch)));
  });

  app.post('/:store/archive', (c) => c.json(toWireStore(service.archiveStore(c.var.caller, c.req.param('store')))));

  app.delete('/:store', (c) => {
    const id = c.req.param('store');
    service.deleteStore(c.var.caller, id);
    return c.json({ id, type: 'memory_store_deleted' as const });
  });

  return app;
}
