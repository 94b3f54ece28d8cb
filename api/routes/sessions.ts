/** @module /v1/sessions: mount sessions (our extension, shaped like the SDK's memory_store resources). */
import { Hono } from 'hono';
import { parseLimit, parseSessionCreate, type Caller, type Page, type Session, type SessionRequest } from '../../src/index.js';
import type { AppEnv } from '../env.js';
import { jsonBody, query } from '../request.js';
import { toWirePage, toWireSession } from '../wire.js';

/** What the routes need from the sessions service (wired in src/main.ts). */
export interface SessionsApi {
  createSession(caller: Caller, req: SessionRequest): Promise<Session>;
  getSession(caller: Caller, id: string): Session;
  listSessions(caller: Caller, limit: number, page: string | null): Page<Session>;
  endSession(caller: Caller, id: string): Promise<Session>;
  systemPrompt(session: Session): string;
}

export function sessionRoutes(sessions: SessionsApi) {
  const app = new Hono<AppEnv>();
  const wire = (s: Session) => toWireSession(s, sessions.systemPrompt(s));

  app.post('/', async (c) => {
    const req = parseSessionCreate(await jsonBody(c));
    return c.json(wire(await sessions.createSession(c.var.caller, req)));
  });

  app.get('/', (c) => {
    const q = query(c);
    const page = sessions.listSessions(c.var.caller, parseLimit(q['limit']), q['page'] || null);
    return c.json(toWirePage(page, wire));
  });

  app.get('/:session', (c) => c.json(wire(sessions.getSession(c.var.caller, c.req.param('session')))));

  app.delete('/:session', async (c) => {
    const s = await sessions.endSession(c.var.caller, c.req.param('session'));
    return c.json({ id: s.id, type: 'session_deleted' as const });
  });

  return app;
}
