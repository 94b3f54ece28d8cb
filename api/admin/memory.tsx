/**
 * @module /admin/stores/:store/memories/:memory: current content, metadata, version history with a
 * diff between any two versions, and redaction (a dialog showing what will be erased, for ever;
 * the form posts to redaction.tsx). *Edit* and *Delete* are in memory-edit.tsx.
 */
import { Hono } from 'hono';
import { MnemoError, parseVersionListQuery, type LineDiff, type Memory, type MemoryVersion, type Service } from '../../src/index.js';
import { canWrite, frameOf, isAdmin, keyNames, query } from './context.js';
import { Diff, type DiffLayout } from './diff.js';
import type { AdminEnv } from './env.js';
import { Page } from './layout.js';
import { MemoryControls } from './memory-edit.js';
import { noticeText } from './notices.js';
import { ActorName, Alert, Cancel, Csrf, Dialog, kb, Notice, OpenDialog, Pager, qs, Time } from './ui.js';

export function memoryPages(service: Service) {
  const app = new Hono<AdminEnv>();

  app.get('/:store/memories/:memory', async (c) => {
    const storeId = c.req.param('store');
    const memoryId = c.req.param('memory');
    const q = query(c);
    const store = await service.getStore(c.var.caller, storeId);
    const memory = await liveMemory(service, c.var.caller, storeId, memoryId);
    const versions = await service.listVersions(c.var.caller, storeId, parseVersionListQuery({ memory_id: memoryId, view: 'full', limit: '20', ...(q['page'] ? { page: q['page'] } : {}) }));
    if (!memory && versions.data.length === 0 && !q['page']) throw new MnemoError('not_found', `memory ${memoryId} not found`);
    const names = await keyNames(service, c, versions.data.flatMap((v) => (v.redactedBy ? [v.createdBy, v.redactedBy] : [v.createdBy])));
    const now = await service.clock();
    const frame = frameOf(c);
    const layout: DiffLayout = q['layout'] === 'split' ? 'split' : 'unified';
    const pair = q['from'] && q['to'] ? await Promise.all([service.getVersion(c.var.caller, storeId, q['from']), service.getVersion(c.var.caller, storeId, q['to'])]) : null;
    // The line diff runs on the service's diff thread, not inside the page's render.
    const diff = pair && !pair[0].redactedAt && !pair[1].redactedAt ? await lineDiffOf(service, pair[0], pair[1]) : null;
    const path = memory?.path ?? versions.data.find((v) => v.path)?.path ?? memoryId;
    const root = frame.root;
    const base = `${root}/stores/${storeId}/memories/${memoryId}`;
    return c.html(
      <Page title={path} frame={frame}>
        <p><a href={`${root}/stores/${storeId}`}>← {store.name}</a></p>
        <h1><code>{path}</code> {memory ? null : <span class="badge ended">deleted</span>}</h1>
        <Notice message={noticeText(q)} />
        {memory && canWrite(c) ? <MemoryControls memory={memory} store={store} base={base} csrf={frame.csrf} /> : null}
        {memory ? <MemoryView memory={memory} now={now} /> : <p>This memory was deleted; its versions remain until redacted.</p>}

        <section aria-labelledby="history-h">
          <h2 id="history-h">Version history</h2>
          <form method="get" action={base}>
            {/* The page of history stays, and a version chosen on another page stays chosen: versions on different pages compare. */}
            {q['page'] ? <input type="hidden" name="page" value={q['page']} /> : null}
            <OffPage side="from" id={q['from']} versions={versions.data} />
            <OffPage side="to" id={q['to']} versions={versions.data} />
            <table class="responsive">
              <thead><tr><th scope="col">Compare</th><th scope="col">Operation</th><th scope="col">Actor</th><th scope="col">Time</th><th scope="col">Size</th><th scope="col">Redaction</th></tr></thead>
              <tbody>
                {versions.data.map((v, i) => (
                  <tr id={v.id}>
                    {/* Every row's radios are named "from" and "to": each is described by its version's operation, id and time. */}
                    <td data-label="Compare">
                      <label class="check"><input type="radio" name="from" value={v.id} checked={q['from'] ? q['from'] === v.id : i === 1} aria-describedby={`op-${v.id} at-${v.id}`} /> from</label>
                      <label class="check"><input type="radio" name="to" value={v.id} checked={q['to'] ? q['to'] === v.id : i === 0} aria-describedby={`op-${v.id} at-${v.id}`} /> to</label>
                    </td>
                    <td data-label="Operation" id={`op-${v.id}`}>{v.operation}<br /><code class="muted">{v.id}</code></td>
                    <td data-label="Actor"><ActorName actor={v.createdBy} keyNames={names} root={root} /></td>
                    <td data-label="Time" id={`at-${v.id}`}><Time at={v.createdAt} now={now} /></td>
                    <td data-label="Size">{kb(v.contentSizeBytes)}</td>
                    <td data-label="Redaction"><Redaction version={v} memory={memory} admin={isAdmin(c)} now={now} names={names} root={root} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
            <div class="row">
              <fieldset>
                <legend>Diff layout</legend>
                <label class="check"><input type="radio" name="layout" value="unified" checked={layout === 'unified'} /> unified</label>
                <label class="check"><input type="radio" name="layout" value="split" checked={layout === 'split'} /> side by side</label>
              </fieldset>
              <button type="submit">Compare versions</button>
            </div>
          </form>
          <Pager next={versions.nextPage} href={(p) => `${base}${qs({ from: q['from'], to: q['to'], layout: q['layout'], page: p })}`} />
          {isAdmin(c) ? versions.data.filter((v) => redactable(v, memory)).map((v) => <RedactDialog version={v} csrf={frame.csrf} action={`${base}/versions/${v.id}/redact`} />) : null}
        </section>

        {pair ? (
          <section aria-labelledby="diff-h">
            <h2 id="diff-h">Diff</h2>
            <DiffOf from={pair[0]} to={pair[1]} diff={diff} layout={layout} />
          </section>
        ) : null}
      </Page>,
    );
  });

  return app;
}

async function liveMemory(service: Service, caller: Parameters<Service['getMemory']>[0], storeId: string, memoryId: string): Promise<Memory | null> {
  try {
    return await service.getMemory(caller, storeId, memoryId);
  } catch (err) {
    if (err instanceof MnemoError && err.code === 'not_found') return null;
    throw err;
  }
}

function MemoryView({ memory, now }: { memory: Memory; now: string }) {
  return (
    <>
      <dl class="meta">
        <dt>ID</dt><dd><code>{memory.id}</code></dd>
        <dt>Size</dt><dd>{kb(memory.contentSizeBytes)}</dd>
        <dt>SHA-256</dt><dd><code>{memory.contentSha256}</code></dd>
        <dt>Created</dt><dd><Time at={memory.createdAt} now={now} /></dd>
        <dt>Updated</dt><dd><Time at={memory.updatedAt} now={now} /></dd>
        {memory.expiresAt ? <><dt>Expires</dt><dd><Time at={memory.expiresAt} now={now} /></dd></> : null}
        <dt>Current version</dt><dd><code>{memory.versionId}</code></dd>
      </dl>
      <h2>Content</h2>
      <pre class="content" aria-label="Memory content">{memory.content}</pre>
    </>
  );
}

/** A version chosen on another page of the history, kept chosen (and changeable) on this one. */
function OffPage({ side, id, versions }: { side: 'from' | 'to'; id: string | undefined; versions: MemoryVersion[] }) {
  if (!id || versions.some((v) => v.id === id)) return null;
  return <p><label class="check"><input type="radio" name={side} value={id} checked /> {side} <code>{id}</code> (chosen on another page of the history)</label></p>;
}

/** Every version may be redacted once, except the head of a live memory (the API's rule: 409 otherwise). */
const redactable = (v: MemoryVersion, memory: Memory | null) => !v.redactedAt && !(memory && memory.versionId === v.id);

function Redaction({ version: v, memory, admin, now, names, root }: {
  version: MemoryVersion; memory: Memory | null; admin: boolean; now: string; names: ReadonlyMap<string, string>; root: string;
}) {
  if (v.redactedAt) {
    return <span><span class="badge redacted">redacted</span> <Time at={v.redactedAt} now={now} /> by {v.redactedBy ? <ActorName actor={v.redactedBy} keyNames={names} root={root} /> : 'unknown'}</span>;
  }
  if (memory && memory.versionId === v.id) {
    return <span class="muted">Current version of a live memory: it cannot be redacted. Write a new version of the memory (Edit) or delete it (Delete) first.</span>;
  }
  if (!admin) return <span class="muted">Redaction needs an admin key.</span>;
  return <OpenDialog id={`redact-${v.id}`} label="Redact" danger />;
}

function RedactDialog({ version: v, csrf, action }: { version: MemoryVersion; csrf: string; action: string }) {
  return (
    <Dialog id={`redact-${v.id}`} title="Redact this version?">
      <p><strong>This erases the version's content and path for ever; it cannot be undone.</strong> The version stays in the history as redacted, with who redacted it and when.</p>
      <p>The same text is stored once: if another version (of any memory in this workspace) holds it too, the text stays stored until that version is redacted as well. The result says how many still hold it.</p>
      <p>Path: <code>{v.path ?? '—'}</code></p>
      <pre class="content" aria-label="Content that will be erased">{v.content ?? ''}</pre>
      <form method="post" action={action}>
        <Csrf token={csrf} />
        <button type="submit" class="danger">Redact version</button> <Cancel />
      </form>
    </Dialog>
  );
}

/** The line runs between two versions' content; null when it is the same. */
async function lineDiffOf(service: Service, from: MemoryVersion, to: MemoryVersion): Promise<LineDiff | null> {
  const [a, b] = [from.content ?? '', to.content ?? ''];
  return a === b ? null : service.lineDiff(a, b);
}

function DiffOf({ from, to, diff, layout }: { from: MemoryVersion; to: MemoryVersion; diff: LineDiff | null; layout: DiffLayout }) {
  if (from.redactedAt || to.redactedAt) return <Alert message="A redacted version has no content left to compare." />;
  return <Diff diff={diff} layout={layout} fromLabel={`${from.id} (${from.operation})`} toLabel={`${to.id} (${to.operation})`} />;
}
