/** @module /admin/stores: the list (archived ones on a toggle) and the create form. */
import { Hono } from 'hono';
import { LIMITS, parseStoreCreate, parseStoreListQuery, type Service } from '../../src/index.js';
import { canWrite, exactField, frameOf, query, refusalOf, type AdminContext, type Refusal } from './context.js';
import type { AdminEnv } from './env.js';
import { Page } from './layout.js';
import { seeOther, segment } from './redirect.js';
import { Alert, Csrf, errorOf, fieldError, Hint, Pager, qs, Time } from './ui.js';

/** What *Create store* sent, and why it was refused: the form comes back with it. */
interface RefusedCreate {
  name: string;
  description: string;
  refusal: Refusal;
}

const CREATE_FIELDS = ['name', 'description'];

export function storesPages(service: Service) {
  const app = new Hono<AdminEnv>();

  app.get('/', async (c) => c.html(await storesPage(service, c)));

  app.post('/', async (c) => {
    // Exactly as typed, as the API and Save changes take them: spaces at a name's ends are part of it.
    const typed = { name: exactField(c, 'name'), description: exactField(c, 'description') };
    try {
      const store = await service.createStore(c.var.caller, parseStoreCreate(typed));
      return seeOther(c, `${c.var.root}/stores/${segment(store.id)}`);
    } catch (err) {
      const refusal = refusalOf(err);
      if (!refusal) throw err;
      return c.html(await storesPage(service, c, { ...typed, refusal }), refusal.status);
    }
  });

  return app;
}

/** The list with *Create store*; after a refused create, the form holds what was typed and says why beside its field. */
async function storesPage(service: Service, c: AdminContext, refused?: RefusedCreate) {
  const q = query(c);
  const archived = q['archived'] === '1';
  const page = await service.listStores(c.var.caller, parseStoreListQuery({ include_archived: archived ? 'true' : 'false', limit: '50', ...(q['page'] ? { page: q['page'] } : {}) }));
  const now = await service.clock();
  const frame = frameOf(c);
  const error = (field: string | null) => fieldError(refused?.refusal, field, CREATE_FIELDS);
  return (
    <Page title={refused ? 'Store not created · Memory stores' : 'Memory stores'} frame={frame}>
      <h1>Memory stores</h1>
      <form method="get" action={`${frame.root}/stores`} class="row">
        <label class="check">
          <input type="checkbox" name="archived" value="1" checked={archived} />
          Show archived stores
        </label>
        <button type="submit" class="secondary">Apply</button>
      </form>
      {page.data.length === 0 ? <p>No stores{archived ? '' : ' (archived ones are hidden)'}.</p> : (
        <table class="responsive">
          <thead><tr><th scope="col">Name</th><th scope="col">Description</th><th scope="col">Created</th><th scope="col">State</th></tr></thead>
          <tbody>
            {page.data.map((s) => (
              <tr>
                <td data-label="Name"><a href={`${frame.root}/stores/${s.id}`}>{s.name}</a><br /><code class="muted">{s.id}</code></td>
                <td data-label="Description">{s.description}</td>
                <td data-label="Created"><Time at={s.createdAt} now={now} /></td>
                <td data-label="State">{s.archivedAt ? <span class="badge archived">archived</span> : <span class="badge">active</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager next={page.nextPage} href={(p) => `${frame.root}/stores${qs({ archived: archived ? '1' : null, page: p })}`} />
      {canWrite(c) ? (
        <section aria-labelledby="create-store">
          <h2 id="create-store">Create a store</h2>
          <form method="post" action={`${frame.root}/stores`} class="stack">
            <Csrf token={frame.csrf} />
            <Alert id="create-error" message={error(null)} />
            <label>Name <input name="name" value={refused?.name} required maxlength={255} autofocus={error('name') !== undefined} {...errorOf('name-error', error('name'))} /></label>
            <Alert id="name-error" message={error('name')} />
            {/* The HTML parser drops one newline right after <textarea>: this one, not the description's own. */}
            <label>Description <Hint>(at most {LIMITS.storeDescription} characters)</Hint> <textarea name="description" rows={2} maxlength={LIMITS.storeDescription} autofocus={error('description') !== undefined} {...errorOf('description-error', error('description'))}>{`\n${refused?.description ?? ''}`}</textarea></label>
            <Alert id="description-error" message={error('description')} />
            <div><button type="submit">Create store</button></div>
          </form>
        </section>
      ) : null}
    </Page>
  );
}
