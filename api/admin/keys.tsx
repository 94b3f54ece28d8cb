/** @module /admin/keys (admin keys only; the service refuses others): list, create (the secret shown once), revoke. */
import { Hono } from 'hono';
import { parseKeyCreate, parsePageQuery, type ApiKey, type Service } from '../../src/index.js';
import { exactField, field, frameOf, query, type AdminContext } from './context.js';
import type { AdminEnv } from './env.js';
import { Page } from './layout.js';
import { seeOther } from './redirect.js';
import { revealOnce, takeRevealed, type Revealed } from './reveal.js';
import { Cancel, Confirm, Csrf, Hint, Pager, qs, Time } from './ui.js';

export function keyPages(service: Service) {
  const app = new Hono<AdminEnv>();

  app.get('/', async (c) => c.html(await keysPage(service, c, takeRevealed(c))));

  app.post('/', async (c) => {
    const ids = field(c, 'memory_store_ids').split(/[\s,]+/).filter(Boolean);
    const input = parseKeyCreate({ name: exactField(c, 'name'), role: field(c, 'role'), ...(ids.length ? { memory_store_ids: ids } : {}) });
    const minted = await service.keys.issueKey(c.var.caller, input);
    // Redirected, so a reload is a GET: the secret goes along sealed in a cookie that GET clears (reveal.ts).
    revealOnce(c, { name: minted.key.name, secret: minted.secret });
    return seeOther(c, `${c.var.root}/keys#new-key-secret`);
  });

  app.post('/:key/revoke', async (c) => {
    await service.keys.revokeKey(c.var.caller, c.req.param('key'));
    return seeOther(c, `${c.var.root}/keys`);
  });

  return app;
}

/** Keys a console page shows: a workspace may hold many thousands, so they come a page at a time. */
const KEYS_PER_PAGE = '100';

async function keysPage(service: Service, c: AdminContext, minted: Revealed | null) {
  // Right after a create the first page shows (with the new secret); otherwise a GET may ask for another.
  const at = minted ? undefined : query(c)['page'];
  const page = await service.keys.listKeyPage(c.var.caller, parsePageQuery({ limit: KEYS_PER_PAGE, ...(at ? { page: at } : {}) }));
  const keys = page.data;
  const now = await service.clock();
  const frame = frameOf(c);
  return (
    <Page title="API keys" frame={frame}>
      <h1>API keys</h1>
      {minted ? (
        <div class="notice" role="status" id="new-key-secret">
          <p>Key <strong>{minted.name}</strong> was created. Copy its secret now: it is shown only this once.</p>
          <pre class="secret" aria-label="New key secret">{minted.secret}</pre>
        </div>
      ) : null}
      <table class="responsive">
        <thead><tr><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Stores</th><th scope="col">Created</th><th scope="col">State</th><th scope="col">Action</th></tr></thead>
        <tbody>{keys.map((k) => <KeyRow k={k} now={now} csrf={frame.csrf} root={frame.root} self={k.id === frame.key.id} />)}</tbody>
      </table>
      <Pager next={page.nextPage} href={(p) => `${frame.root}/keys${qs({ page: p })}`} />
      <section aria-labelledby="new-key">
        <h2 id="new-key">Create a key</h2>
        <form method="post" action={`${frame.root}/keys`} class="stack">
          <Csrf token={frame.csrf} />
          <label>Name <input name="name" required maxlength={255} /></label>
          <label>Role
            <select name="role">
              <option value="read_only">read_only: read stores, memories, versions</option>
              <option value="read_write">read_write: also write memories and manage stores and sessions</option>
              <option value="admin">admin: also redact, manage keys, read the admin log</option>
            </select>
          </label>
          <label>Limit to stores <Hint>(ids, comma-separated; empty for all)</Hint> <input name="memory_store_ids" /></label>
          <div><button type="submit">Create key</button></div>
        </form>
      </section>
    </Page>
  );
}

function KeyRow({ k, now, csrf, root, self }: { k: ApiKey; now: string; csrf: string; root: string; self: boolean }) {
  return (
    <tr id={k.id}>
      <td data-label="Name">{k.name}{self ? <> <span class="badge">you</span></> : null}<br /><code class="muted">{k.id}</code></td>
      <td data-label="Role">{k.role}{k.allWorkspaces ? ' (operator)' : ''}</td>
      <td data-label="Stores">{k.storeIds ? k.storeIds.join(', ') : 'all'}</td>
      <td data-label="Created"><Time at={k.createdAt} now={now} /></td>
      <td data-label="State">{k.revokedAt ? <><span class="badge revoked">revoked</span> <Time at={k.revokedAt} now={now} /></> : <span class="badge">active</span>}</td>
      <td data-label="Action">
        {k.revokedAt ? null : (
          <Confirm id={`revoke-${k.id}`} label="Revoke" title={`Revoke ${k.name}?`} danger>
            <p>Every request with this key fails from now on{self ? ', including this console session' : ''}. Revoking cannot be undone.</p>
            <form method="post" action={`${root}/keys/${k.id}/revoke`}>
              <Csrf token={csrf} />
              <button type="submit" class="danger">Revoke key</button> <Cancel />
            </form>
          </Confirm>
        )}
      </td>
    </tr>
  );
}
