/**
 * @module /v1/api_keys and /v1/workspaces (our extension): admin-only key management. Secrets are
 * shown once, on creation; lists never carry them. Who may do what is decided in src/service/keys.ts: the
 * routes only translate.
 */
import { Hono } from 'hono';
import { parseKeyCreate, parsePageQuery, parseWorkspaceCreate, type Service } from '../../src/index.js';
import type { AppEnv } from '../env.js';
import { jsonBody, noBody, query } from '../request.js';
import { toWireApiKey, toWirePage, toWireWorkspace } from '../wire.js';

export function keyRoutes(service: Service) {
  const app = new Hono<AppEnv>();
  const { keys } = service;

  app.post('/', async (c) => {
    const input = parseKeyCreate(await jsonBody(c));
    const minted = await keys.issueKey(c.var.caller, input);
    return c.json({ ...toWireApiKey(minted.key), secret: minted.secret });
  });

  app.get('/', async (c) => c.json(toWirePage(await keys.listKeyPage(c.var.caller, parsePageQuery(query(c))), toWireApiKey)));

  app.get('/:key', async (c) => c.json(toWireApiKey(await keys.getKey(c.var.caller, c.req.param('key')))));

  app.post('/:key/revoke', async (c) => {
    await noBody(c);
    return c.json(toWireApiKey(await keys.revokeKey(c.var.caller, c.req.param('key'))));
  });

  return app;
}

export function workspaceRoutes(service: Service) {
  const app = new Hono<AppEnv>();

  app.post('/', async (c) => {
    const { name } = parseWorkspaceCreate(await jsonBody(c));
    return c.json(toWireWorkspace(await service.keys.createWorkspaceFor(c.var.caller, name)));
  });

  app.get('/', async (c) => c.json(toWirePage(await service.keys.listWorkspacePage(c.var.caller, parsePageQuery(query(c))), toWireWorkspace)));

  return app;
}
