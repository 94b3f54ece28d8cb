/** @module /v1/memory_stores: create, list, retrieve, update, archive, delete. */
import { Hono } from 'hono';
import { parseStoreCreate, parseStoreFork, parseStoreListQuery, parseStoreUpdate, type Idempotency, type Service, type Store } from '../../src/index.js';
import type { AppEnv } from '../env.js';
import { asyncMutation, mutation, ok } from '../idempotency.js';
import { jsonBody, noBody, query } from '../request.js';
import { toWirePage, toWireStore } from '../wire.js';

export function storeRoutes(service: Service, idem: Idempotency) {
  const app = new Hono<AppEnv>();

  app.post('/', async (c) => {
    const body = await jsonBody(c);
    const input = parseStoreCreate(body);
    return mutation(c, idem, 'POST /v1/memory_stores', body, async (ops) => {
      const s = await ops.createStore(c.var.caller, input);
      return ok(toWireStore(s), { storeId: s.id });
    });
  });

  app.get('/', async (c) => {
    const page = await service.listStores(c.var.caller, parseStoreListQuery(query(c)));
    return c.json(toWirePage(page, toWireStore));
  });

  app.get('/:store', async (c) => c.json(toWireStore(await service.getStore(c.var.caller, c.req.param('store')))));

  app.post('/:store', async (c) => {
    const body = await jsonBody(c);
    const patch = parseStoreUpdate(body);
    const id = c.req.param('store');
    return mutation(c, idem, 'POST /v1/memory_stores/{id}', body, async (ops) => ok(toWireStore(await ops.updateStore(c.var.caller, id, patch)), { storeId: id }));
  });

  app.post('/:store/archive', async (c) => {
    await noBody(c);
    const id = c.req.param('store');
    return mutation(c, idem, 'POST /v1/memory_stores/{id}/archive', null, async (ops) => ok(toWireStore(await ops.archiveStore(c.var.caller, id)), { storeId: id }));
  });

  // mnemo's fork extension (issue 15). Not a `mutation`: the fork is built in batches outside any one
  // transaction (src/service/forks.ts); its receipt commits with the publishing transaction.
  app.post('/:store/fork', async (c) => {
    const body = await jsonBody(c);
    const input = parseStoreFork(body);
    const id = c.req.param('store');
    return asyncMutation(c, idem, 'POST /v1/memory_stores/{id}/fork', body, async (req) => {
      const hooks = req && idem.hooks(req, (s: Store) => ok(toWireStore(s), { storeId: s.id }));
      const s = await service.forkStore(c.var.caller, id, input, hooks ?? undefined);
      return ok(toWireStore(s), { storeId: s.id });
    });
  });

  app.delete('/:store', async (c) => {
    await noBody(c);
    const id = c.req.param('store');
    return mutation(c, idem, 'DELETE /v1/memory_stores/{id}', null, async (ops) => {
      await ops.deleteStore(c.var.caller, id);
      return ok({ id, type: 'memory_store_deleted' as const });
    });
  });

  return app;
}
