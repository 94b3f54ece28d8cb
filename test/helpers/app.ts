/**
 * @module The Hono app built in-process over a real core (a SQLite file in a temp dir), for tests
 * that read the app itself (its route table) or call it with `app.request`. Its service's mounter
 * refuses (src/service/mounts.ts NO_MOUNTS), since these tests mount nothing.
 */
import { createApp } from '../../api/app.js';
import { openCore, type Core } from './core.js';

export async function openApp(): Promise<{ app: ReturnType<typeof createApp>; core: Core; adminKey: string }> {
  const core = await openCore();
  const { secret } = await core.service.keys.createKey('app-admin', 'admin', core.caller.workspaceId);
  return { app: createApp({ service: core.service, log: () => {} }), core, adminKey: secret };
}
