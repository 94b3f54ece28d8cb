/** @module /admin/admin-actions: the log of admin actions (the same entries as GET /v1/admin_actions), admin keys only. */
import { Hono } from 'hono';
import type { AdminAction, Service } from '../../src/index.js';
import { frameOf, keyNames, query } from './context.js';
import type { AdminEnv } from './env.js';
import { Page } from './layout.js';
import { ActorName, Pager, qs, Time } from './ui.js';

const LABELS: Record<AdminAction['action'], string> = {
  'api_key.created': 'API key created',
  'api_key.revoked': 'API key revoked',
  'memory_version.redacted': 'Version redacted',
  'memory_store.archived': 'Store archived',
  'memory_store.deleted': 'Store deleted',
  'session.ended': 'Session ended',
};

export function adminLogRoutes(service: Service) {
  const app = new Hono<AdminEnv>();
  app.get('/', async (c) => {
    const q = query(c);
    const page = await service.adminActions.list(c.var.caller, 50, q['page'] || null);
    const names = await keyNames(service, c, page.data.map((a) => a.actor));
    const now = await service.clock();
    const root = c.var.root;
    return c.html(
      <Page title="Admin log" frame={frameOf(c)}>
        <h1>Admin log</h1>
        <p>Keys created and revoked, versions redacted, stores archived and deleted, sessions ended: through the API and this console alike. Also at <code>GET /v1/admin_actions</code>.</p>
        {page.data.length === 0 ? <p>No admin actions yet.</p> : (
          <table class="responsive">
            <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Object</th></tr></thead>
            <tbody>
              {page.data.map((a) => (
                <tr>
                  <td data-label="When"><Time at={a.createdAt} now={now} /></td>
                  <td data-label="Who"><ActorName actor={a.actor} keyNames={names} root={root} /></td>
                  <td data-label="What">{LABELS[a.action]}</td>
                  <td data-label="Object"><code>{a.targetId}</code> <span class="muted">{a.summary}</span></td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <Pager next={page.nextPage} href={(p) => `${root}/admin-actions${qs({ page: p })}`} />
      </Page>,
    );
  });
  return app;
}
