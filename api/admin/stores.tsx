/** @module /admin/stores: the list (archived ones on a toggle) and the create form. */
import { Hono } from 'hono';
import { LIMITS, parseStoreCreate, parseStoreListQuery, type Service } from '../../src/index.js';
import { canWrite, exactField, frameOf, query } from './context.js';
import type { AdminEnv } from './env.js';
import { Page } from './layout.js';
import { seeOther, segment } from './redirect.js';
import { Csrf, Hint, Pager, qs, Time } from './ui.js';

export function storesPages(service: Service) {
  const app = new Hono<AdminEnv>();

  app.get('/', async (c) => {
    const q = query(c);
    const archived = q['archived'] === '1';
    const page = await service.listStores(c.var.caller, parseStoreListQuery({ include_archived: archived ? 'true' : 'false', limit: '50', ...(q['page'] ? { page: q['page'] } : {}) }));
    const now = await service.clock();
    const frame = frameOf(c);
    return c.html(
      <Page title="Memory stores" frame={frame}>
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
              <label>Name <input name="name" required maxlength={255} /></label>
              <label>Description <Hint>(at most {LIMITS.storeDescription} characters)</Hint> <textarea name="description" rows={2} maxlength={LIMITS.storeDescription}></textarea></label>
              <div><button type="submit">Create store</button></div>
            </form>
          </section>
        ) : null}
      </Page>,
    );
  });

  app.post('/', async (c) => {
    // Exactly as typed, as the API and Save changes take them: spaces at a name's ends are part of it.
    const input = parseStoreCreate({ name: exactField(c, 'name'), description: exactField(c, 'description') });
    const store = await service.createStore(c.var.caller, input);
    return seeOther(c, `${c.var.root}/stores/${segment(store.id)}`);
  });

  return app;
}
