/**
 * @module The Hono app built in-process over a real core (a SQLite file in a temp dir), for tests
 * that read the app itself (its route table) or call it with `app.request`. Sessions are wired so
 * their routes register; its mounter refuses, since these tests mount nothing.
 */
import { createApp } from '../../api/app.js';
import type { Mounter } from '../../src/index.js';
import { createSessions } from '../../src/sessions.js';
import { openCore, type Core } from './core.js';

/** A mounter for apps that mount nothing: sessions' routes register, and a mount is refused. */
export const noMounts: Mounter = {
  mount: () => Promise.reject(new Error('this test mounts nothing')),
  unmount: () => Promise.resolve(),
  storeChanged: () => {},
  clearStale: () => Promise.resolve(),
  unmountAll: () => Promise.resolve(),
};

export function openApp(): { app: ReturnType<typeof createApp>; core: Core; adminKey: string } {
  const core = openCore();
  const sessions = createSessions({ service: core.service, mounter: noMounts, mountRoot: `${core.dir}/mnt` });
  const { secret } = core.service.keys.createKey('app-admin', 'admin', core.caller.workspaceId);
  return { app: createApp({ service: core.service, sessions, log: () => {} }), core, adminKey: secret };
}
