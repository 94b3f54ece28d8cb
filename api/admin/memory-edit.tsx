/**
 * @module A memory's *Edit* (a new version of its content) and *Delete*, for keys that may write.
 * Both go through the service as the API's update and delete do, with the content the page showed
 * as their precondition (`content_sha256`): a change made meanwhile (through the API, a mount,
 * another tab) is refused, never overwritten, and *Edit* then shows the new content beside the
 * text that was typed, so nothing typed is lost.
 */
import { Hono } from 'hono';
import {
  MAX_CONTENT_BYTES, MnemoError, assertAllowed, parseMemoryUpdate, parseSha256, sha256Hex,
  type ErrorCode, type Memory, type Service, type Store,
} from '../../src/index.js';
import { HTTP_ERRORS } from '../errors.js';
import { field, formOf, frameOf, type AdminContext } from './context.js';
import type { AdminEnv } from './env.js';
import { Page } from './layout.js';
import { withNotice } from './notices.js';
import { seeOther, segment } from './redirect.js';
import { Alert, Cancel, Confirm, Csrf, errorOf, Hint } from './ui.js';

/** The path of *Edit*'s form post, which alone may carry a memory's whole content (index.tsx's body limits). */
export const isEditForm = (path: string): boolean => /\/stores\/[^/]+\/memories\/[^/]+\/edit$/.test(path);

/** Refusals of a save that leave the typed text worth keeping: the edit form comes back with it. */
const KEEPS_TEXT: ReadonlySet<ErrorCode> = new Set(['precondition_failed', 'content_too_large', 'invalid_request', 'limit_exceeded', 'archived']);

export function memoryEditPages(service: Service) {
  const app = new Hono<AdminEnv>();

  app.get('/:store/memories/:memory/edit', async (c) => {
    const storeId = c.req.param('store');
    // A read_only key gets the API's own refusal rather than a form it could never save.
    assertAllowed(c.var.caller, 'write');
    const store = await service.getStore(c.var.caller, storeId);
    const memory = await service.getMemory(c.var.caller, storeId, c.req.param('memory'));
    return c.html(<EditPage c={c} store={store} memory={memory} text={memory.content} basedOn={memory.contentSha256} />);
  });

  app.post('/:store/memories/:memory/edit', async (c) => {
    const storeId = c.req.param('store');
    const memoryId = c.req.param('memory');
    const basedOn = field(c, 'content_sha256');
    const typed = formOf(c).get('content') ?? '';
    // A browser sends a textarea's line ends as CRLF: back to the memory's own (lineEnds below).
    const text = field(c, 'line_ends') === 'crlf' ? typed : typed.replace(/\r\n/g, '\n');
    const page = `${c.var.root}/stores/${segment(storeId)}/memories/${segment(memoryId)}`;
    try {
      const write = parseMemoryUpdate({ content: text, precondition: { type: 'content_sha256', content_sha256: basedOn } });
      await service.updateMemory(c.var.caller, storeId, memoryId, write);
    } catch (err) {
      // The memory or its store deleted meanwhile: no form to go back to, so a page of its own keeps the text.
      if (err instanceof MnemoError && err.code === 'not_found') {
        const store = await service.getStore(c.var.caller, storeId).catch(() => null);
        return c.html(<GonePage c={c} storeId={storeId} page={page} storeGone={store === null} text={text} />, HTTP_ERRORS.not_found.status);
      }
      if (!(err instanceof MnemoError) || !KEEPS_TEXT.has(err.code)) throw err;
      const store = await service.getStore(c.var.caller, storeId);
      const memory = await service.getMemory(c.var.caller, storeId, memoryId);
      const changed = err.code === 'precondition_failed';
      // After a refused precondition the form is based on the content as it is now: saving again replaces it, knowingly.
      return c.html(
        <EditPage c={c} store={store} memory={memory} text={text} basedOn={changed ? memory.contentSha256 : basedOn} error={changed ? CHANGED : err.code === 'archived' ? ARCHIVED_MEANWHILE : err.message} />,
        HTTP_ERRORS[err.code].status,
      );
    }
    // The precondition held, so the memory had the content the form was based on: the same text wrote nothing.
    return seeOther(c, withNotice(page, sha256Hex(text) === basedOn ? 'memory_unchanged' : 'memory_saved'));
  });

  app.post('/:store/memories/:memory/delete', async (c) => {
    const storeId = c.req.param('store');
    const memoryId = c.req.param('memory');
    const expected = parseSha256(field(c, 'expected_content_sha256'), 'expected_content_sha256');
    const page = `${c.var.root}/stores/${segment(storeId)}/memories/${segment(memoryId)}`;
    try {
      await service.deleteMemory(c.var.caller, storeId, memoryId, expected);
    } catch (err) {
      if (!(err instanceof MnemoError) || err.code !== 'precondition_failed') throw err;
      return c.html(
        <Page title="Not deleted" frame={frameOf(c)}>
          <h1>Not deleted</h1>
          <Alert message="This memory was changed after its page was loaded (through the API, a mount or another tab), so it was not deleted: look at its new content, then delete it from there if you still mean to." />
          <p><a href={page}>Back to the memory</a></p>
        </Page>,
        HTTP_ERRORS[err.code].status,
      );
    }
    return seeOther(c, withNotice(page, 'memory_deleted'));
  });

  return app;
}

const ARCHIVED_MEANWHILE = 'The store was archived after you began editing (through the API or another tab), so your text was not saved: its memories cannot be edited (they can still be deleted). Your text is below, to copy.';
const MEMORY_DELETED = 'This memory was deleted after you began editing (through the API, a mount or another tab, or it expired), so your text was not saved. Your text is below, to copy.';
const STORE_DELETED = 'This memory\'s store was deleted after you began editing (through the API or another tab), so your text was not saved. Your text is below, to copy.';

const CHANGED = 'This memory was changed after you began editing (through the API, a mount or another tab), so your text was not saved. Its content now is shown below your text; Save again to replace it with your text, or Cancel to keep it.';

/** *Edit* and *Delete* on a memory's page: only for keys that may write; an archived store's memories may be deleted but not edited. */
export function MemoryControls({ memory, store, base, csrf }: { memory: Memory; store: Store; base: string; csrf: string }) {
  return (
    <div class="actions">
      {store.archivedAt ? <p class="muted">The store is archived: its memories cannot be edited, but they can be deleted.</p> : <a class="button" href={`${base}/edit`}>Edit</a>}{' '}
      <Confirm id="delete-memory" label="Delete" title="Delete this memory?" danger>
        <p>This deletes <code>{memory.path}</code> from the store and from every mount. Its versions stay in the history, with a <em>deleted</em> version at the end, until they are redacted. It cannot be undone; its text can only be written again as a new memory.</p>
        <p>If the memory changes before you confirm, nothing is deleted.</p>
        <form method="post" action={`${base}/delete`}>
          <Csrf token={csrf} />
          <input type="hidden" name="expected_content_sha256" value={memory.contentSha256} />
          <button type="submit" class="danger">Delete memory</button> <Cancel />
        </form>
      </Confirm>
    </div>
  );
}

/** The text a save could not keep, to copy (a <pre> drops one newline after its tag: this one, not the text's own). */
function YourText({ text }: { text: string }) {
  return <><h2>Your text</h2><pre class="content" aria-label="Your text">{`\n${text}`}</pre></>;
}

/** A save whose memory, or whose store, was deleted meanwhile: the text typed, and where to go from here. */
function GonePage({ c, storeId, page, storeGone, text }: { c: AdminContext; storeId: string; page: string; storeGone: boolean; text: string }) {
  const root = c.var.root;
  return (
    <Page title={`Not saved · ${storeGone ? 'store' : 'memory'} deleted`} frame={frameOf(c)}>
      {storeGone ? <p><a href={`${root}/stores`}>← Stores</a></p> : <p><a href={page}>← Back to the memory (its history)</a></p>}
      <h1>Not saved</h1>
      <Alert message={storeGone ? STORE_DELETED : MEMORY_DELETED} />
      {storeGone ? null : <p><a href={`${root}/stores/${segment(storeId)}`}>Back to the store</a></p>}
      <YourText text={text} />
    </Page>
  );
}

function EditPage({ c, store, memory, text, basedOn, error }: {
  c: AdminContext; store: Store; memory: Memory; text: string; basedOn: string; error?: string;
}) {
  const base = `${c.var.root}/stores/${store.id}/memories/${memory.id}`;
  const ends = lineEnds(memory.content);
  return (
    <Page title={`Edit ${memory.path}`} frame={frameOf(c)}>
      <p><a href={base}>← {memory.path}</a></p>
      <h1>Edit <code>{memory.path}</code></h1>
      <Alert id="content-error" message={error} />
      {error === CHANGED ? <><h2>Its content now</h2><pre class="content" aria-label="Current content">{memory.content}</pre></> : null}
      {store.archivedAt ? (
        <>
          {/* After a refused save the alert above says why; a plain visit says it here. */}
          {error ? null : <Alert message="The store is archived: its memories cannot be edited (they can still be deleted)." />}
          {text !== memory.content ? <YourText text={text} /> : null}
        </>
      ) : ends === null ? (
        <Alert message="This memory holds characters a browser's text field cannot keep as they are (a NUL, a lone carriage return, or CRLF and LF line ends mixed): edit it through the API or a mount, so nothing changes that you did not change." />
      ) : (
        <form method="post" action={`${base}/edit`} class="edit">
          <Csrf token={c.var.console.session.csrf} />
          <input type="hidden" name="content_sha256" value={basedOn} />
          <input type="hidden" name="line_ends" value={ends} />
          {/* The HTML parser drops one newline right after <textarea>: this one, not the content's own. */}
          <label>Content <Hint>(at most {MAX_CONTENT_BYTES.toLocaleString('en')} bytes of UTF-8; saving writes a new version, or nothing if the text is unchanged)</Hint>
            <textarea name="content" class="content" rows={24} spellcheck={false} {...errorOf('content-error', error)}>{`\n${text}`}</textarea>
          </label>
          <div><button type="submit">Save</button> <a href={base}>Cancel</a></div>
        </form>
      )}
    </Page>
  );
}

/**
 * How the content's line ends survive a textarea: the browser shows CR, LF and CRLF alike and sends
 * CRLF, so the save restores all-LF or all-CRLF text exactly; null for text it would change (a NUL,
 * which HTML turns into U+FFFD, a lone CR, or both kinds of line end).
 */
function lineEnds(content: string): 'lf' | 'crlf' | null {
  if (content.includes('\0') || /\r(?!\n)/.test(content)) return null;
  const crlf = content.includes('\r\n');
  if (crlf && /(^|[^\r])\n/.test(content)) return null;
  return crlf ? 'crlf' : 'lf';
}
