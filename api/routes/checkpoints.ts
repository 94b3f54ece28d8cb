/**
 * @module /v1/memory_stores/:store/checkpoints (a mnemo extension): save, read, delete and restore
 * checkpoints; the latest per (agent, session) under checkpoints/sessions/:agent/:session.
 */
import { Hono } from 'hono';
import { assertScopeId, parseRestore, type Idempotency, type Service } from '../../src/index.js';
import type { AppEnv } from '../env.js';
import { mutation, ok } from '../idempotency.js';
import { jsonBody, noBody } from '../request.js';
import { restoreWireBytes, toWireCheckpoint, toWireRestore } from '../wire-continuity.js';

export function checkpointRoutes(service: Service, idem: Idempotency) {
  const app = new Hono<AppEnv>();
  const ckpt = service.checkpoints;

  app.post('/:store/checkpoints', async (c) => {
    const body = await jsonBody(c);
    const req = ckpt.parse(body);
    const storeId = c.req.param('store');
    return mutation(c, idem, 'POST /v1/memory_stores/{id}/checkpoints', body, async (ops) =>
      ok(toWireCheckpoint(await ops.checkpoints.create(c.var.caller, storeId, req)), { storeId }),
    );
  });

  app.get('/:store/checkpoints/sessions/:agent/:session/latest', async (c) => {
    const { agent, session } = scope(c.req.param('agent'), c.req.param('session'));
    return c.json(toWireCheckpoint(await ckpt.latest(c.var.caller, c.req.param('store'), agent, session)));
  });

  app.post('/:store/checkpoints/sessions/:agent/:session/restore', async (c) => {
    const { maxBytes } = parseRestore(await jsonBody(c));
    const { agent, session } = scope(c.req.param('agent'), c.req.param('session'));
    const restored = await ckpt.restore(c.var.caller, c.req.param('store'), { agentId: agent, sessionId: session }, maxBytes, restoreWireBytes);
    return c.json(toWireRestore(restored));
  });

  app.get('/:store/checkpoints/:checkpoint', async (c) => {
    return c.json(toWireCheckpoint(await ckpt.get(c.var.caller, c.req.param('store'), c.req.param('checkpoint'))));
  });

  app.post('/:store/checkpoints/:checkpoint/restore', async (c) => {
    const { maxBytes } = parseRestore(await jsonBody(c));
    const restored = await ckpt.restore(c.var.caller, c.req.param('store'), { checkpointId: c.req.param('checkpoint') }, maxBytes, restoreWireBytes);
    return c.json(toWireRestore(restored));
  });

  app.delete('/:store/checkpoints/:checkpoint', async (c) => {
    await noBody(c);
    const id = c.req.param('checkpoint');
    const storeId = c.req.param('store');
    return mutation(c, idem, 'DELETE /v1/memory_stores/{id}/checkpoints/{checkpoint_id}', null, async (ops) => {
      await ops.checkpoints.delete(c.var.caller, storeId, id);
      return ok({ id, type: 'checkpoint_deleted' as const }, { storeId });
    });
  });

  return app;
}

function scope(agent: string, session: string) {
  return { agent: assertScopeId(agent, 'agent_id'), session: assertScopeId(session, 'session_id') };
}
