/**
 * @module Which workspace the console acts in, and /admin/workspaces, the switcher. A key acts in
 * its own workspace at /admin/…; an operator key (all_workspaces) may open any other at
 * /admin/workspaces/<id>/…, the same pages under that root, so a bookmark keeps its workspace. The
 * id in the URL goes through the API's own check (`anthropic-workspace-id`): another key naming
 * another workspace is refused 403, an unknown workspace is 404. Nothing here widens what a key sees.
 */
import { Hono, type MiddlewareHandler } from 'hono';
import { parsePageQuery, type Service, type Workspace } from '../../src/index.js';
import { callerFor } from '../auth.js';
import { frameOf, query } from './context.js';
import type { AdminEnv } from './env.js';
import { Page } from './layout.js';
import { segment } from './redirect.js';
import { Pager, qs, Time } from './ui.js';

/** Workspaces a page of the switcher lists. */
const WORKSPACES_PER_PAGE = '50';

/** The console's root for a workspace the key may act in: its own is plain /admin. */
export function rootFor(keyWorkspaceId: string, workspaceId: string): string {
  return workspaceId === keyWorkspaceId ? '/admin' : `/admin/workspaces/${segment(workspaceId)}`;
}

/**
 * For /admin/workspaces/:workspace/…: acts in the workspace the URL names, when the signed-in key
 * may (the API's rule), before any body is read. Its own workspace's id is accepted too.
 */
export function inWorkspace(service: Service): MiddlewareHandler<AdminEnv> {
  return async function inWorkspaceMiddleware(c, next) {
    const key = c.var.console.key;
    const id = await service.keys.actingWorkspace(key, c.req.param('workspace') ?? '', "this console URL's workspace");
    c.set('caller', callerFor(key, id));
    c.set('root', `/admin/workspaces/${segment(id)}`);
    await next();
  };
}

/** Names the acting workspace for the header: by name for an admin key (which may read workspaces), else by id. */
export function nameWorkspace(service: Service): MiddlewareHandler<AdminEnv> {
  return async function nameWorkspaceMiddleware(c, next) {
    const id = c.var.caller.workspaceId;
    const name = c.var.console.key.role === 'admin' ? (await service.keys.actingWorkspaceOf(c.var.caller)).name : null;
    c.set('workspace', { id, name });
    await next();
  };
}

export function workspacePages(service: Service) {
  const app = new Hono<AdminEnv>();

  app.get('/', async (c) => {
    const frame = frameOf(c);
    const key = frame.key;
    if (!key.allWorkspaces) {
      return c.html(
        <Page title="Workspace" frame={frame}>
          <h1>Workspace</h1>
          <p>This key, <strong>{key.name}</strong>, sees only its own workspace, <code>{key.workspaceId}</code>{frame.workspace.name ? <> ({frame.workspace.name})</> : null}: there is no other to switch to. Only an operator key (<code>all_workspaces</code>) may open other workspaces.</p>
          <p><a href="/admin/stores">Its stores</a></p>
        </Page>,
      );
    }
    const q = query(c);
    const page = await service.keys.listWorkspacePage(c.var.caller, parsePageQuery({ limit: WORKSPACES_PER_PAGE, ...(q['page'] ? { page: q['page'] } : {}) }));
    const now = await service.clock();
    return c.html(
      <Page title="Workspaces" frame={frame}>
        <h1>Workspaces</h1>
        <p>This is an operator key: it may act in any workspace. Open one to browse and manage its stores, sessions and keys; its pages keep the workspace in their URL (<code>/admin/workspaces/&lt;id&gt;/…</code>), so they can be bookmarked.</p>
        <table class="responsive">
          <thead><tr><th scope="col">Name</th><th scope="col">Created</th></tr></thead>
          <tbody>{page.data.map((w) => <WorkspaceRow w={w} home={key.workspaceId} now={now} />)}</tbody>
        </table>
        <Pager next={page.nextPage} href={(p) => `/admin/workspaces${qs({ page: p })}`} />
      </Page>,
    );
  });

  return app;
}

function WorkspaceRow({ w, home, now }: { w: Workspace; home: string; now: string }) {
  return (
    <tr id={w.id}>
      <td data-label="Name">
        <a href={`${rootFor(home, w.id)}/stores`}>{w.name}</a>
        {w.id === home ? <> <span class="badge">this key's own</span></> : null}
        <br /><code class="muted">{w.id}</code>
      </td>
      <td data-label="Created"><Time at={w.createdAt} now={now} /></td>
    </tr>
  );
}
