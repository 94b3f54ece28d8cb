/** @module /v1/memory_stores/:store/memory_versions: list, retrieve, redact. */
import { Hono } from 'hono';
import { parseVersionListQuery, parseView, type Idempotency, type Service } from '../../src/index.js';
import type { AppEnv } from '../env.js';
import { mutation, ok } from '../idempotency.js';
import { noBody, query } from '../request.js';
import { toWirePage, toWireVersion } from '../wire.js';

export function versionRoutes(service: Service, idem: Idempotency) {
  const app = new Hono<AppEnv>();

  app.get('/:store/memory_versions', async (c) => {
    const q = parseVersionListQuery(query(c));
    const page = await service.listVersions(c.var.caller, c.req.param('store'), q);
    return c.json(toWirePage(page, (v) => toWireVersion(v, q.view)));
  });

  app.get('/:store/memory_versions/:version', async (c) => {
    const view = parseView(query(c)['view'], 'full');
    const version = await service.getVersion(c.var.caller, c.req.param('store'), c.req.param('version'));
    return c.json(toWireVersion(version, view));
  });

  app.post('/:store/memory_versions/:version/redact', async (c) => {
    await noBody(c);
    const storeId = c.req.param('store');
    return mutation(c, idem, 'POST /v1/memory_stores/{id}/memory_versions/{version_id}/redact', null, async (ops) => {
      const version = await ops.redactVersion(c.var.caller, storeId, c.req.param('version'));
      return ok(toWireVersion(version, 'full'), { storeId, versionId: version.id });
    });
  });

  return app;
}
