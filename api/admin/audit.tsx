/** @module /admin/stores/:store/versions: the store's versions filtered by actor, operation and time range (UTC). */
import { Hono } from 'hono';
import { parseVersionListQuery, type MemoryVersion, type Page as ListPage, type Query, type Service } from '../../src/index.js';
import { frameOf, keyNames, query, refusalOf, type Refusal } from './context.js';
import type { AdminEnv } from './env.js';
import { Page } from './layout.js';
import { ActorName, Alert, errorOf, fieldError, Hint, kb, Pager, qs, Time } from './ui.js';

export function auditPages(service: Service) {
  const app = new Hono<AdminEnv>();

  app.get('/:store/versions', async (c) => {
    const storeId = c.req.param('store');
    const q = query(c);
    const store = await service.getStore(c.var.caller, storeId);
    // A filter the API refuses (a time past its range) answers with its status: the form, what was typed kept, the message beside its field.
    let page: ListPage<MemoryVersion> | null = null;
    let refusal: Refusal | null = null;
    try {
      page = await service.listVersions(c.var.caller, storeId, parseVersionListQuery(apiQuery(q)));
    } catch (err) {
      refusal = refusalOf(err);
      if (!refusal) throw err;
    }
    const error = (field: string | null) => fieldError(refusal && { ...refusal, field: refusal.field === null ? null : (FORM_FIELD[refusal.field] ?? null) }, field, FILTER_FIELDS);
    const names = await keyNames(service, c, (page?.data ?? []).map((v) => v.createdBy));
    const now = await service.clock();
    const keep = { actor: q['actor'], operation: q['operation'], from: q['from'], to: q['to'] };
    const root = c.var.root;
    const base = `${root}/stores/${storeId}`;
    return c.html(
      <Page title={refusal ? `Not filtered · Audit ${store.name}` : `Audit ${store.name}`} frame={frameOf(c)}>
        <p><a href={base}>← {store.name}</a></p>
        <h1>Versions of {store.name}</h1>
        <form method="get" action={`${base}/versions`} class="row" aria-label="Filter versions">
          <Alert id="filter-error" message={error(null)} />
          <label>Actor <Hint>(API key id or session id)</Hint>
            <input name="actor" value={q['actor'] ?? ''} list="known-keys" placeholder="apikey_… or sesn_…" autofocus={error('actor') !== undefined} {...errorOf('actor-error', error('actor'))} />
          </label>
          <Alert id="actor-error" message={error('actor')} />
          <datalist id="known-keys">{[...names].map(([id, name]) => <option value={id}>{name}</option>)}</datalist>
          <label>Operation
            <select name="operation" {...errorOf('operation-error', error('operation'))}>
              <option value="">any</option>
              {(['created', 'modified', 'deleted'] as const).map((op) => <option value={op} selected={q['operation'] === op}>{op}</option>)}
            </select>
          </label>
          <Alert id="operation-error" message={error('operation')} />
          <label>From <Hint>(UTC)</Hint> <input type="datetime-local" name="from" value={q['from'] ?? ''} step="1" autofocus={error('from') !== undefined} {...errorOf('from-error', error('from'))} /></label>
          <Alert id="from-error" message={error('from')} />
          <label>To <Hint>(UTC)</Hint> <input type="datetime-local" name="to" value={q['to'] ?? ''} step="1" autofocus={error('to') !== undefined} {...errorOf('to-error', error('to'))} /></label>
          <Alert id="to-error" message={error('to')} />
          <button type="submit">Filter</button>
        </form>
        {!page ? null : page.data.length === 0 ? <p>No versions match.</p> : (
          <table class="responsive">
            <thead><tr><th scope="col">Memory</th><th scope="col">Operation</th><th scope="col">Actor</th><th scope="col">Time</th><th scope="col">Size</th></tr></thead>
            <tbody>
              {page.data.map((v) => (
                <tr>
                  <td data-label="Memory"><a href={`${base}/memories/${v.memoryId}#${v.id}`}>{v.path ?? `${v.memoryId} (redacted)`}</a></td>
                  <td data-label="Operation">{v.operation}{v.redactedAt ? <> <span class="badge redacted">redacted</span></> : null}</td>
                  <td data-label="Actor"><ActorName actor={v.createdBy} keyNames={names} root={root} /></td>
                  <td data-label="Time"><Time at={v.createdAt} now={now} /></td>
                  <td data-label="Size">{kb(v.contentSizeBytes)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {page ? <Pager next={page.nextPage} href={(p) => `${base}/versions${qs({ ...keep, page: p })}`} /> : null}
      </Page>,
      refusal ? refusal.status : 200,
    );
  });

  return app;
}

const FILTER_FIELDS = ['actor', 'operation', 'from', 'to'];

/** The API's query fields (apiQuery) by the form field they come from. */
const FORM_FIELD: Record<string, string> = {
  api_key_id: 'actor', session_id: 'actor', operation: 'operation', 'created_at[gte]': 'from', 'created_at[lte]': 'to',
};

/** The form's fields as the API's version-list query: an actor id picks its filter by prefix; local times are UTC. */
function apiQuery(q: Query): Query {
  const out: Query = { view: 'basic', limit: '50' };
  const actor = (q['actor'] ?? '').trim();
  if (actor) out[actor.startsWith('sesn_') ? 'session_id' : 'api_key_id'] = actor;
  if (q['operation']) out['operation'] = q['operation'];
  if (q['from']) out['created_at[gte]'] = utc(q['from'], 'start');
  if (q['to']) out['created_at[lte]'] = utc(q['to'], 'end');
  if (q['page']) out['page'] = q['page'];
  return out;
}

/**
 * A datetime-local field as UTC: `2026-12-01T16:30` is that whole minute and `2026-12-01T16:30:15`
 * that whole second, so From takes its start (`16:30:00Z`) and To its end (`16:30:59.999Z`): a To
 * of the second the page shows a version at lists that version. Anything else goes to the API's own check.
 */
function utc(local: string, edge: 'start' | 'end'): string {
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d$/.test(local)) return `${local}${edge === 'start' ? ':00Z' : ':59.999Z'}`;
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/.test(local)) return `${local}${edge === 'start' ? 'Z' : '.999Z'}`;
  return local;
}
