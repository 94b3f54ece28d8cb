/** @module x-api-key / Authorization: Bearer authentication; sets c.var.caller. */
import type { MiddlewareHandler } from 'hono';
import type { Keys } from '../src/index.js';
import type { AppEnv } from './env.js';

export function auth(keys: Keys): MiddlewareHandler<AppEnv> {
  return async function authMiddleware(c, next) {
    const header = c.req.header('x-api-key');
    const bearer = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1];
    const key = keys.authenticate(header ?? bearer?.trim() ?? null);
    c.set('caller', { workspaceId: key.workspaceId, actor: { type: 'api_actor', apiKeyId: key.id } });
    await next();
  };
}
