/**
 * @module Idempotency-Key on mutating routes: replays a stored answer, or runs the mutation and keeps
 * its answer in the same transaction. Replays carry `idempotent-replayed: true`.
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { fingerprint, parseIdempotencyKey, type Idempotency, type IdempotentRequest, type Operations, type Reply } from '../src/index.js';
import type { AppEnv } from './env.js';
import { query, textHeader } from './request.js';

export const REPLAYED_HEADER = 'idempotent-replayed';

/**
 * The request's receipt scope and fingerprint, or null without an Idempotency-Key. `route` is the
 * method and route template; the normalised request is the path parameters, query and JSON body.
 */
export function idempotentRequest(c: Context<AppEnv>, route: string, body: unknown): IdempotentRequest | null {
  const raw = textHeader(c, 'idempotency-key', 'Idempotency-Key');
  if (raw === undefined) return null;
  const key = parseIdempotencyKey(raw);
  const caller = c.var.caller;
  const apiKeyId = caller.actor.type === 'api_actor' ? caller.actor.apiKeyId : caller.actor.sessionId;
  return {
    scope: { workspaceId: caller.workspaceId, apiKeyId, route, key },
    fingerprint: fingerprint({ route, params: c.req.param(), query: query(c), body }),
  };
}

export function respond(c: Context<AppEnv>, reply: Reply, replayed: boolean) {
  if (replayed) c.header(REPLAYED_HEADER, 'true');
  return c.json(reply.body as object, reply.status as ContentfulStatusCode);
}

/**
 * A mutation: replay, or run it and record its reply atomically, in a group commit. `run` gets the
 * service's operations on that transaction and must make its writes through them. `fresh`, when
 * given, adds to a reply that is not a replay, after the commit and outside the receipt.
 */
export async function mutation(
  c: Context<AppEnv>,
  idem: Idempotency,
  route: string,
  body: unknown,
  run: (ops: Operations) => Promise<Reply>,
  fresh?: (reply: Reply) => Promise<Reply>,
) {
  const req = idempotentRequest(c, route, body);
  const { reply, replayed } = await idem.settle(req, run);
  return respond(c, replayed || !fresh ? reply : await fresh(reply), replayed);
}

/** An async mutation (sessions): concurrent retries wait for the first, then replay its answer. */
export async function asyncMutation(
  c: Context<AppEnv>,
  idem: Idempotency,
  route: string,
  body: unknown,
  run: (req: IdempotentRequest | null) => Promise<Reply>,
) {
  const req = idempotentRequest(c, route, body);
  return idem.exclusive(req, async () => {
    const found = req && (await idem.find(req));
    if (found) return respond(c, found, true);
    return respond(c, await run(req), false);
  });
}

export const ok = (body: unknown, refs: Omit<Reply, 'status' | 'body'> = {}): Reply => ({ status: 200, body, ...refs });
