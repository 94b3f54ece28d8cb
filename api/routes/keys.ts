/**
 * @module /v1/api_keys and /v1/workspaces (our extension): admin-only key management. Secrets are
 * shown once, on creation; lists never carry them. Workspaces are created by operator keys only.
 */
import { Hono } from 'hono';
import { assertAllowed, MnemoError, parseKeyCreate, parseWorkspaceCreate, type Service } from '../../src/index.js';
import type { AppEnv } from '../env.js';
import { jsonBody } from '../request.js';
import { toWireApiKey, toWireWorkspace } from '../wire.js';

export function keyRoutes(service: Service) {
  const app = new Hono<AppEnv>();
  const { keys } = service;

  app.post('/', async (c) => {
    assertAllowed(c.var.caller, 'manage_keys');
    const input = parseKeyCreate(await jsonBody(c));
    const ws = c.var.caller.workspaceId;
    for (const id of input.storeIds ?? []) service.getStore(c.var.caller, id);
    const minted = keys.createKey(input.name, input.role, ws, { storeIds: input.storeIds });
    return c.json({ ...toWireApiKey(minted.key), secret: minted.secret });
  });

  // Who may see and revoke which key is decided in src/keys.ts; the routes only translate.
  app.get('/', (c) => c.json({ data: keys.listKeys(c.var.caller).map(toWireApiKey), next_page: null }));

  app.get('/:key', (c) => c.json(toWireApiKey(keys.getKey(c.var.caller, c.req.param('key')))));

  app.post('/:key/revoke', (c) => c.json(toWireApiKey(keys.revokeKey(c.var.caller, c.req.param('key')))));

  return app;
}

export function workspaceRoutes(service: Service) {
  const app = new Hono<AppEnv>();

  app.post('/', async (c) => {
    assertAllowed(c.var.caller, 'manage_keys');
    if (!c.var.apiKey.allWorkspaces) throw new MnemoError('forbidden', 'only an operator key (all workspaces) can create workspaces');
    const { name } = parseWorkspaceCreate(await jsonBody(c));
    return c.json(toWireWorkspace(service.keys.createWorkspace(name)));
  });

  app.get('/', (c) => {
    assertAllowed(c.var.caller, 'manage_keys');
    const all = service.storage.listWorkspaces();
    const visible = c.var.apiKey.allWorkspaces ? all : all.filter((w) => w.id === c.var.apiKey.workspaceId);
    return c.json({ data: visible.map(toWireWorkspace), next_page: null });
  });

  return app;
}
