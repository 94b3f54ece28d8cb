/** @module /admin/keys (admin keys only; the service refuses others): list, create (the secret shown once), revoke. */
import { Hono } from 'hono';
import { parseKeyCreate, parsePageQuery, type ApiKey, type Service } from '../../src/index.js';
import { exactField, field, frameOf, query, refusalOf, type AdminContext, type Refusal } from './context.js';
import type { AdminEnv } from './env.js';
import { Page } from './layout.js';
import { seeOther } from './redirect.js';
import { revealOnce, takeRevealed, type Revealed } from './reveal.js';
import { Alert, Cancel, Confirm, Csrf, errorOf, fieldError, Hint, Pager, qs, Time } from './ui.js';

/** What *Create key* sent, and why it was refused: the form comes back with it. */
interface RefusedCreate {
  name: string;
  role: string;
  /** The store ids as typed (comma- or space-separated). */
  stores: string;
  refusal: Refusal;
}

const CREATE_FIELDS = ['name', 'role', 'memory_store_ids'];

const ROLES = [
  ['read_only', 'read_only: read stores, memories, versions'],
  ['read_write', 'read_write: also write memories and manage stores and sessions'],
  ['admin', 'admin: also redact, manage keys, read the admin log'],
] as const;

export function keyPages(service: Service) {
  const app = new Hono<AdminEnv>();

  app.get('/', async (c) => c.html(await keysPage(service, c, takeRevealed(c))));

  app.post('/', async (c) => {
    // Kept as typed, for the form to come back with when it is refused.
    const typed = { name: exactField(c, 'name'), role: field(c, 'role'), stores: exactField(c, 'memory_store_ids') };
    const ids = typed.stores.split(/[\s,]+/).filter(Boolean);
    try {
      const input = parseKeyCreate({ name: typed.name, role: typed.role, ...(ids.length ? { memory_store_ids: ids } : {}) });
      const minted = await service.keys.issueKey(c.var.caller, input);
      // Redirected, so a reload is a GET: the secret goes along sealed in a cookie that GET clears (reveal.ts).
      revealOnce(c, { name: minted.key.name, secret: minted.secret });
      return seeOther(c, `${c.var.root}/keys#new-key-secret`);
    } catch (err) {
      const refusal = refusalOf(err);
      if (!refusal) throw err;
      return c.html(await keysPage(service, c, null, { ...typed, refusal }), refusal.status);
    }
  });

  app.post('/:key/revoke', async (c) => {
    await service.keys.revokeKey(c.var.caller, c.req.param('key'));
    return seeOther(c, `${c.var.root}/keys`);
  });

  return app;
}

/** Keys a console page shows: a workspace may hold many thousands, so they come a page at a time. */
const KEYS_PER_PAGE = '100';

/** The list with *Create key*; after a refused create, the form holds what was typed and says why beside its field. */
async function keysPage(service: Service, c: AdminContext, minted: Revealed | null, refused?: RefusedCreate) {
  // Right after a create the first page shows (with the new secret); otherwise a GET may ask for another.
  const at = minted ? undefined : query(c)['page'];
  const page = await service.keys.listKeyPage(c.var.caller, parsePageQuery({ limit: KEYS_PER_PAGE, ...(at ? { page: at } : {}) }));
  const keys = page.data;
  const now = await service.clock();
  const frame = frameOf(c);
  // A field the API names inside the list (`memory_store_ids.3`) is the list's field.
  const error = (name: string | null) => fieldError(refused && { ...refused.refusal, field: refused.refusal.field?.split('.')[0] ?? null }, name, CREATE_FIELDS);
  return (
    <Page title={refused ? 'Key not created · API keys' : 'API keys'} frame={frame}>
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
          <Alert id="create-key-error" message={error(null)} />
          <label>Name <input name="name" value={refused?.name} required maxlength={255} autofocus={error('name') !== undefined} {...errorOf('key-name-error', error('name'))} /></label>
          <Alert id="key-name-error" message={error('name')} />
          <label>Role
            <select name="role" autofocus={error('role') !== undefined} {...errorOf('key-role-error', error('role'))}>
              {ROLES.map(([role, text]) => <option value={role} selected={refused?.role === role}>{text}</option>)}
            </select>
          </label>
          <Alert id="key-role-error" message={error('role')} />
          <label>Limit to stores <Hint>(ids, comma-separated; empty for all)</Hint> <input name="memory_store_ids" value={refused?.stores} autofocus={error('memory_store_ids') !== undefined} {...errorOf('key-stores-error', error('memory_store_ids'))} /></label>
          <Alert id="key-stores-error" message={error('memory_store_ids')} />
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
