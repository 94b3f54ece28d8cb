/**
 * @module Redacting a version from the console, and what it answers: the memory page with a notice
 * when the text is gone (or no other version the key may see holds it), else a page listing the
 * versions that still hold it (the API's `content_still_held_in`), each linked, with a Redact of its
 * own. That list is shown once, as the answer to the POST: it cannot be asked for again (the
 * redacted version no longer names its text), and no link can make the console show one.
 */
import { Hono } from 'hono';
import { notFound, TEXT_HOLDERS_MAX, type Caller, type Service, type TextHolder, type TextHolders } from '../../src/index.js';
import { frameOf } from './context.js';
import type { AdminEnv } from './env.js';
import { Page } from './layout.js';
import { noticeText, withNotice } from './notices.js';
import { seeOther, segment } from './redirect.js';
import { Cancel, Csrf, Dialog, Notice, OpenDialog, Time } from './ui.js';

export function redactionPages(service: Service) {
  const app = new Hono<AdminEnv>();

  app.post('/:store/memories/:memory/versions/:version/redact', async (c) => {
    const storeId = c.req.param('store');
    const versionId = c.req.param('version');
    // The form's URL names the memory; a version of another memory is not one of its versions.
    const before = await service.getVersion(c.var.caller, storeId, versionId);
    if (before.memoryId !== c.req.param('memory')) throw notFound('memory version', versionId);
    const v = await service.redactVersion(c.var.caller, storeId, versionId);
    const root = c.var.root;
    const memoryPage = `${root}/stores/${segment(storeId)}/memories/${segment(v.memoryId)}`;
    const holders = await service.textHolders(c.var.caller, v);
    if (!holders || holders.data.length === 0) return seeOther(c, `${withNotice(memoryPage, 'version_redacted', holders?.count ?? 0)}#${segment(v.id)}`);
    const stores = await storeNames(service, c.var.caller, holders);
    const now = await service.clock();
    const frame = frameOf(c);
    return c.html(
      <Page title="Version redacted" frame={frame}>
        {/* Not the redacted version's path: it is erased, and this page shows no erased text. */}
        <p><a href={`${memoryPage}#${segment(v.id)}`}>← The memory's history</a></p>
        <h1>Version redacted</h1>
        <Notice message={noticeText({ notice: 'version_redacted', held: String(holders.count) })} />
        <HolderList holders={holders} stores={stores} now={now} root={root} />
        {holders.data.filter((h) => !h.current).map((h) => <RedactHolderDialog holder={h} csrf={frame.csrf} root={root} />)}
      </Page>,
    );
  });

  return app;
}

/** Each listed store's name, for the table (every listed store is one the key may see). */
async function storeNames(service: Service, caller: Caller, holders: TextHolders): Promise<Map<string, string>> {
  const ids = [...new Set(holders.data.map((h) => h.storeId))];
  const stores = await Promise.all(ids.map((id) => service.getStore(caller, id).catch(() => null)));
  return new Map(stores.flatMap((s) => (s ? [[s.id, s.name] as const] : [])));
}

const versionLink = (root: string, h: TextHolder) => `${root}/stores/${segment(h.storeId)}/memories/${segment(h.memoryId)}#${segment(h.id)}`;

function HolderList({ holders, stores, now, root }: { holders: TextHolders; stores: ReadonlyMap<string, string>; now: string; root: string }) {
  const shown = holders.data.length;
  const held = holders.count;
  return (
    <section aria-labelledby="holders-h">
      <h2 id="holders-h">Versions that still hold the same text</h2>
      <p>
        The text stays stored until each of these is redacted too.
        {holders.hasMore ? ` The newest ${TEXT_HOLDERS_MAX} are listed; redacting one lists the rest again.` : null}
        {!holders.hasMore && held > shown ? ` ${held - shown} more ${held - shown === 1 ? 'is' : 'are'} in stores this key cannot see.` : null}
      </p>
      <table class="responsive">
        <thead><tr><th scope="col">Version</th><th scope="col">Path</th><th scope="col">Store</th><th scope="col">Created</th><th scope="col">Redaction</th></tr></thead>
        <tbody>
          {holders.data.map((h) => (
            <tr id={`holder-${h.id}`}>
              <td data-label="Version"><a href={versionLink(root, h)}><code>{h.id}</code></a></td>
              <td data-label="Path"><code>{h.path ?? '—'}</code></td>
              <td data-label="Store"><a href={`${root}/stores/${segment(h.storeId)}`}>{stores.get(h.storeId) ?? h.storeId}</a></td>
              <td data-label="Created"><Time at={h.createdAt} now={now} /></td>
              <td data-label="Redaction">
                {h.current
                  ? <span class="muted">Current version of a live memory: it cannot be redacted. Write a new version or delete the memory first.</span>
                  : <OpenDialog id={`redact-${h.id}`} label="Redact" danger />}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function RedactHolderDialog({ holder: h, csrf, root }: { holder: TextHolder; csrf: string; root: string }) {
  return (
    <Dialog id={`redact-${h.id}`} title="Redact this version too?">
      <p><strong>This erases the content and path of version <code>{h.id}</code> for ever; it cannot be undone.</strong> The version stays in its memory's history as redacted, with who redacted it and when.</p>
      <p>Path: <code>{h.path ?? '—'}</code></p>
      <form method="post" action={`${root}/stores/${segment(h.storeId)}/memories/${segment(h.memoryId)}/versions/${segment(h.id)}/redact`}>
        <Csrf token={csrf} />
        <button type="submit" class="danger">Redact version</button> <Cancel />
      </form>
    </Dialog>
  );
}
