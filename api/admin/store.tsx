/** @module /admin/stores/:store: a store's tree (folders expand, paged), search, counts, and its edit, archive and delete. */
import { Hono } from 'hono';
import { baseName, MnemoError, parseMemoryListQuery, parseSearchQuery, parseStoreUpdate, type MemoryListItem, type SearchHit, type SearchPage, type Service } from '../../src/index.js';
import { HTTP_ERRORS } from '../errors.js';
import { canWrite, exactField, formOf, frameOf, query, refusalOf, type AdminContext, type Refusal } from './context.js';
import type { AdminEnv } from './env.js';
import { Page } from './layout.js';
import { seeOther, segment } from './redirect.js';
import { shownSha256, StoreControls, TypedStoreFields, type RefusedStoreForm } from './store-controls.js';
import { Alert, errorOf, fieldError, kb, qs, Time } from './ui.js';

const TREE_PAGE = 50;

export function storePages(service: Service) {
  const app = new Hono<AdminEnv>();

  app.get('/:store', async (c) => {
    const id = c.req.param('store');
    // A search the API refuses (a blank or too long text) answers with its status: the page, the typed text kept, the message beside it.
    const search = await searchOf(service, c, id);
    return c.html(await storePage(service, c, id, undefined, search), search?.refusal ? search.refusal.status : 200);
  });

  // One folder's children, for htmx when a folder opens (and for "More" within a folder).
  app.get('/:store/tree', async (c) => {
    const q = query(c);
    return c.html(<>{await treePage(service, c, c.req.param('store'), q['prefix'] || '/', q['page'] ?? null)}</>);
  });

  app.post('/:store/edit', async (c) => {
    const id = c.req.param('store');
    const name = exactField(c, 'name');
    const description = exactField(c, 'description');
    try {
      // Only what was edited is sent: Save with nothing changed writes nothing (no version of the store, no updated_at).
      // Edited is against what the form showed (the hashes it carries), not the store now: a field
      // left alone on the page is not written back over a change made elsewhere since it was loaded.
      // A post without them (a script's) compares with the store as it is.
      const store = await service.getStore(c.var.caller, id);
      const edited = (key: 'name' | 'description', typed: string) => {
        const shown = formOf(c).get(`shown_${key}_sha256`);
        return shown === null ? typed !== store[key] : shownSha256(typed) !== shown.trim();
      };
      const changed = { ...(edited('name', name) ? { name } : {}), ...(edited('description', description) ? { description } : {}) };
      if (Object.keys(changed).length > 0) await service.updateStore(c.var.caller, id, parseStoreUpdate(changed));
    } catch (err) {
      // Archived or deleted since the page was loaded: what was typed comes back all the same, read-only, with why.
      if (err instanceof MnemoError && err.code === 'not_found') {
        return c.html(<StoreGone c={c} name={name} description={description} />, HTTP_ERRORS.not_found.status);
      }
      const refusal = refusalOf(err) ?? (err instanceof MnemoError && err.code === 'archived' ? { message: ARCHIVED_MEANWHILE, field: null, status: HTTP_ERRORS.archived.status } : null);
      if (!refusal) throw err;
      return c.html(await storePage(service, c, id, { form: 'edit', name, description, refusal }), refusal.status);
    }
    return seeOther(c, `${c.var.root}/stores/${segment(id)}`);
  });

  app.post('/:store/archive', async (c) => {
    const id = c.req.param('store');
    await service.archiveStore(c.var.caller, id);
    return seeOther(c, `${c.var.root}/stores/${segment(id)}`);
  });

  app.post('/:store/delete', async (c) => {
    const id = c.req.param('store');
    const store = await service.getStore(c.var.caller, id);
    const typed = exactField(c, 'confirm_name');
    if (typed !== store.name) {
      // The page again, its Delete dialog open on what was typed: the same 400 as before, for the same reason.
      const refusal = { message: `The name typed does not match "${store.name}": the store was not deleted.`, field: 'confirm_name', status: 400 } as const;
      return c.html(await storePage(service, c, id, { form: 'delete', confirmName: typed, refusal }), refusal.status);
    }
    await service.deleteStore(c.var.caller, id);
    return seeOther(c, `${c.var.root}/stores`);
  });

  return app;
}

const REFUSED_TITLE = { edit: 'Not saved', delete: 'Not deleted' } as const;

const ARCHIVED_MEANWHILE = 'This store was archived after its page was loaded (through the API or another tab), so your changes were not saved: an archived store cannot be edited. What you typed is below, to copy.';
const DELETED_MEANWHILE = 'This store is not there any more: it was deleted after its page was loaded (through the API or another tab), so your changes were not saved. What you typed is below, to copy.';

/** *Save changes* on a store deleted meanwhile: no store page to go back to, so a page of its own keeps what was typed. */
function StoreGone({ c, name, description }: { c: AdminContext; name: string; description: string }) {
  const root = c.var.root;
  return (
    <Page title="Not saved · store deleted" frame={frameOf(c)}>
      <p><a href={`${root}/stores`}>← Stores</a></p>
      <h1>Not saved</h1>
      <Alert id="gone-error" message={DELETED_MEANWHILE} />
      <TypedStoreFields name={name} description={description} describedBy="gone-error" />
    </Page>
  );
}

/** The search a store's page shows (`?q=`): its hits, or the API's refusal of what was typed; null when none was asked for. */
type SearchState = { page: SearchPage; refusal?: undefined } | { refusal: Refusal; page?: undefined };

async function searchOf(service: Service, c: AdminContext, id: string): Promise<SearchState | null> {
  const q = query(c);
  if (!q['q']) return null;
  try {
    return { page: await searchPage(service, c, id, q['q'], q['mode'] === 'substring' ? 'substring' : 'fts', q['search_page'] ?? null) };
  } catch (err) {
    const refusal = refusalOf(err);
    if (!refusal) throw err;
    return { refusal };
  }
}

const SEARCH_FIELDS = ['q', 'mode'];

/**
 * A store's page; after a refused *Save changes* or *Delete*, that form holds what was typed and says
 * why beside its field; after a refused search, the search form does.
 */
async function storePage(service: Service, c: AdminContext, id: string, refused?: RefusedStoreForm, search: SearchState | null = null) {
  const q = query(c);
  const store = await service.getStore(c.var.caller, id);
  const usage = await service.storeUsage(c.var.caller, id);
  const prefix = q['prefix'] || '/';
  const tree = await treePage(service, c, id, prefix, q['page'] ?? null);
  const mode = q['mode'] === 'substring' ? 'substring' : 'fts';
  const searchError = (field: string | null) => fieldError(search?.refusal, field, SEARCH_FIELDS);
  const title = refused ? `${REFUSED_TITLE[refused.form]} · ${store.name}` : search?.refusal ? `Not searched · ${store.name}` : store.name;
  const now = await service.clock();
  const root = c.var.root;
  const base = `${root}/stores/${id}`;
  return (
    <Page title={title} frame={frameOf(c)}>
      <p><a href={`${root}/stores`}>← Stores</a></p>
      <h1>{store.name} {store.archivedAt ? <span class="badge archived">archived</span> : null}</h1>
      <dl class="meta">
        <dt>Description</dt><dd>{store.description || <span class="muted">none</span>}</dd>
        <dt>Memories</dt><dd>{usage.memories}</dd>
        {/* The store's byte count, as MNEMO_STORE_MAX_BYTES and a mount's df count it: its checkpoints are in it. */}
        <dt>Size</dt><dd>{kb(usage.bytes)} <span class="muted">(memories and checkpoints, as the store's byte limit counts them)</span></dd>
        {/* The live memories' bytes alone (the API's content_size_bytes summed), from the same counter row: no sum over the store. */}
        <dt>Memory content</dt><dd>{kb(usage.memoryBytes)} <span class="muted">(the live memories' content alone, as the API's content_size_bytes add up; checkpoints not counted)</span></dd>
        <dt>Created</dt><dd><Time at={store.createdAt} now={now} /></dd>
        {store.archivedAt ? <><dt>Archived</dt><dd><Time at={store.archivedAt} now={now} /></dd></> : null}
        <dt>ID</dt><dd><code>{store.id}</code></dd>
      </dl>
      <p><a href={`${base}/versions`}>Audit this store's versions (by actor, operation, time)</a></p>

      <section aria-labelledby="search-h">
        <h2 id="search-h">Search</h2>
        <form method="get" action={base} class="row" role="search">
          <Alert id="search-error" message={searchError(null)} />
          <label>Search text <input type="search" name="q" value={q['q'] ?? ''} required autofocus={searchError('q') !== undefined} {...errorOf('search-q-error', searchError('q'))} /></label>
          <Alert id="search-q-error" message={searchError('q')} />
          <label>Mode
            <select name="mode" {...errorOf('search-mode-error', searchError('mode'))}>
              <option value="fts" selected={q['mode'] !== 'substring'}>words (full text)</option>
              <option value="substring" selected={q['mode'] === 'substring'}>exact substring</option>
            </select>
          </label>
          <Alert id="search-mode-error" message={searchError('mode')} />
          <button type="submit">Search</button>
        </form>
        {search?.page ? <SearchResults base={base} page={search.page} more={(p) => `${base}${qs({ q: q['q'], mode, search_page: p })}#search-h`} /> : null}
      </section>

      <section aria-labelledby="tree-h">
        <h2 id="tree-h">Memories{prefix !== '/' ? <> under <code>{prefix}</code></> : null}</h2>
        {prefix !== '/' ? <p><a href={base}>Back to the top folder</a></p> : null}
        <ul class="tree root">{tree}</ul>
      </section>

      {canWrite(c) ? <StoreControls store={store} base={base} csrf={frameOf(c).csrf} refused={refused} /> : null}
    </Page>
  );
}

/** Search requests one console page may make: each reads a bounded number of rows (README, Search). */
const SEARCH_REQUESTS = 10;

/**
 * One page of search hits. A page may come back empty with a `nextPage` (a substring scan stops at
 * its budget), so empty pages are followed, up to SEARCH_REQUESTS of them; the result may still be
 * empty with a `nextPage`, which the page offers to go on from.
 */
async function searchPage(service: Service, c: AdminContext, storeId: string, text: string, mode: 'fts' | 'substring', page: string | null): Promise<SearchPage> {
  let at = page;
  for (let i = 1; ; i += 1) {
    const found = await service.searchMemories(c.var.caller, storeId, parseSearchQuery({ q: text, mode, limit: '20', ...(at ? { page: at } : {}) }));
    if (found.data.length > 0 || !found.nextPage || i === SEARCH_REQUESTS) return found;
    at = found.nextPage;
  }
}

async function treePage(service: Service, c: AdminContext, storeId: string, prefix: string, page: string | null) {
  const list = await service.listMemories(c.var.caller, storeId, parseMemoryListQuery({ path_prefix: prefix, depth: '1', limit: String(TREE_PAGE), ...(page ? { page } : {}) }));
  const base = `${c.var.root}/stores/${storeId}`;
  const items = list.data.map((item) => <TreeItem base={base} item={item} />);
  if (list.data.length === 0 && !page) items.push(<li class="muted">No memories here.</li>);
  if (list.nextPage) {
    const more = `${base}/tree${qs({ prefix, page: list.nextPage })}`;
    items.push(
      <li>
        <a href={`${base}${qs({ prefix, page: list.nextPage })}`} hx-get={more} hx-target="closest li" hx-swap="outerHTML">More in this folder…</a>
      </li>,
    );
  }
  return items;
}

/** `base`: the store's page (under the workspace's root). */
function TreeItem({ base, item }: { base: string; item: MemoryListItem }) {
  if (item.type === 'memory_prefix') {
    const name = baseName(item.path.replace(/\/$/, ''));
    const children = `${base}/tree${qs({ prefix: item.path })}`;
    return (
      <li>
        <details hx-get={children} hx-trigger="toggle once" hx-target="find ul" hx-swap="innerHTML">
          <summary>{name}/ <span class="muted">folder</span></summary>
          <ul class="tree"><li><a href={`${base}${qs({ prefix: item.path })}`}>Open {name}/</a></li></ul>
        </details>
      </li>
    );
  }
  const m = item.memory;
  return (
    <li>
      <a href={`${base}/memories/${m.id}`}>{baseName(m.path)}</a> <span class="muted">{kb(m.contentSizeBytes)}</span>
    </li>
  );
}

function SearchResults({ base, page, more }: { base: string; page: SearchPage; more: (cursor: string) => string }) {
  if (page.data.length === 0 && !page.nextPage) return <p>No memory matches.</p>;
  return (
    <>
      {page.data.length === 0 ? <p>No match yet: the search stopped at its limit of memories read for one page, and has more of the store to search.</p> : (
        <ol>
          {page.data.map((h) => (
            <li>
              <a href={`${base}/memories/${h.memory.id}`}>{h.memory.path}</a>
              <pre class="content"><Snippet hit={h} /></pre>
            </li>
          ))}
        </ol>
      )}
      {page.nextPage ? <p class="pager"><a href={more(page.nextPage)}>{page.data.length === 0 ? 'Search further →' : 'Next results →'}</a></p> : null}
    </>
  );
}

/** A hit's snippet with its match in <mark>, in place of the API's ** markers; every other character, ** included, is text. */
function Snippet({ hit: { snippet, match } }: { hit: SearchHit }) {
  if (!match) return <>{snippet}</>;
  return <>{snippet.slice(0, match.start - 2)}<mark>{snippet.slice(match.start, match.end)}</mark>{snippet.slice(match.end + 2)}</>;
}
