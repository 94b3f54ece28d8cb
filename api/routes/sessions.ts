/** @module /v1/sessions: mount sessions (our extension, shaped like the SDK's memory_store resources). */
import { Hono } from 'hono';
import {
  parseLimit,
  parseSessionCreate,
  type Caller,
  type Idempotency,
  type Page,
  type Session,
  type SessionHooks,
  type SessionRequest,
} from '../../src/index.js';
import type { AppEnv } from '../env.js';
import { asyncMutation, ok } from '../idempotency.js';
import { jsonBody, noBody, query } from '../request.js';
import { toWirePage, toWireSession } from '../wire.js';

/** What the routes need from the sessions service (wired in src/main.ts). */
export interface SessionsApi {
  createSession(caller: Caller, req: SessionRequest, hooks?: SessionHooks): Promise<Session>;
  getSession(caller: Caller, id: string): Promise<Session>;
  listSessions(caller: Caller, limit: number, page: string | null): Promise<Page<Session>>;
  endSession(caller: Caller, id: string, hooks?: Pick<SessionHooks, 'record'>): Promise<Session>;
  systemPrompt(session: Session): string;
}

export function sessionRoutes(sessions: SessionsApi, idem: Idempotency) {
  const app = new Hono<AppEnv>();
  const wire = (s: Session) => toWireSession(s, sessions.systemPrompt(s));

  app.post('/', async (c) => {
    const body = await jsonBody(c);
    const input = parseSessionCreate(body);
    return asyncMutation(c, idem, 'POST /v1/sessions', body, async (req) => {
      // A receipt names one store (the column a store's delete hides receipts by): the session's first.
      const hooks = req && idem.hooks(req, (s: Session) => ok(wire(s), { storeId: s.resources[0]?.storeId ?? null }));
      return ok(wire(await sessions.createSession(c.var.caller, input, hooks ?? undefined)));
    });
  });

  app.get('/', async (c) => {
    const q = query(c);
    const page = await sessions.listSessions(c.var.caller, parseLimit(q['limit']), q['page'] || null);
    return c.json(toWirePage(page, wire));
  });

  app.get('/:session', async (c) => c.json(wire(await sessions.getSession(c.var.caller, c.req.param('session')))));

  app.delete('/:session', async (c) => {
    await noBody(c);
    const reply = (s: Session) => ok({ id: s.id, type: 'session_deleted' as const });
    return asyncMutation(c, idem, 'DELETE /v1/sessions/{id}', null, async (req) => {
      const hooks = req && idem.hooks(req, reply);
      return reply(await sessions.endSession(c.var.caller, c.req.param('session'), hooks ?? undefined));
    });
  });

  return app;
}
