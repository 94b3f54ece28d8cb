/** @module /v1/memory_stores/:store/memory_versions: list, retrieve, redact. */
import { Hono } from 'hono';
import { parseVersionListQuery, parseView, type Idempotency, type MemoryVersion, type Service } from '../../src/index.js';
import type { AppEnv } from '../env.js';
import { mutation, ok } from '../idempotency.js';
import { noBody, query } from '../request.js';
import { toWirePage, toWireRedactionHolders, toWireVersion } from '../wire.js';

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
    let redacted: MemoryVersion | null = null;
    return mutation(c, idem, 'POST /v1/memory_stores/{id}/memory_versions/{version_id}/redact', null, async (ops) => {
      const version = await ops.redactVersion(c.var.caller, storeId, c.req.param('version'));
      redacted = version;
      return ok(toWireVersion(version, 'full'), { storeId, versionId: version.id });
    }, async (reply) => {
      // Read once the redaction has committed (they grow with the holders: never in its write
      // transaction), so kept out of its receipt, which is written in it: a replay answers with the
      // version alone (and the paths listed may be redacted later: a receipt must not keep them).
      const holders = redacted && (await service.textHolders(c.var.caller, redacted));
      return holders ? { ...reply, body: { ...(reply.body as object), ...toWireRedactionHolders(holders) } } : reply;
    });
  });

  return app;
}
