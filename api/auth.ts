/** @module x-api-key / Authorization: Bearer authentication and the workspace header; sets c.var.caller. */
import type { MiddlewareHandler } from 'hono';
import { grantOf, type ApiKey, type Caller, type Keys } from '../src/index.js';
import type { AppEnv } from './env.js';
import { header as requestHeader, textHeader } from './request.js';

export function auth(keys: Keys): MiddlewareHandler<AppEnv> {
  return async function authMiddleware(c, next) {
    const header = requestHeader(c, 'x-api-key');
    const bearer = /^Bearer\s+(.+)$/i.exec(requestHeader(c, 'authorization') ?? '')?.[1];
    const key = await keys.authenticate(header ?? bearer?.trim() ?? null);
    const workspaceId = await keys.actingWorkspace(key, textHeader(c, 'anthropic-workspace-id'));
    c.set('apiKey', key);
    c.set('caller', callerFor(key, workspaceId));
    await next();
  };
}

/** Who a key acts as in a workspace: the API's callers and the web console's are made here alike. */
export function callerFor(key: ApiKey, workspaceId: string): Caller {
  return {
    workspaceId,
    actor: { type: 'api_actor', apiKeyId: key.id },
    grant: grantOf(key),
  };
}
