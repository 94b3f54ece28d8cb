/**
 * A memory's *Edit* and *Delete* in the console, as form posts against the real server: a save is
 * the API's update with the shown content as its precondition (a change made meanwhile is refused
 * and shown, never overwritten), a delete the API's delete with `expected_content_sha256`; line ends
 * come back as the memory had them; a read_only key gets no controls and its posts are refused;
 * every post needs the session's CSRF token.
 */
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { mintKey, rawRequest, sdkClient, useServer, type RawResponse } from '../helpers/sdk.js';
import type { RunningServer } from '../helpers/server.js';

let server: RunningServer;
let storeId: string;
let readOnlyKey: string;

useServer(async (s, client) => {
  server = s;
  storeId = (await client.beta.memoryStores.create({ name: 'edited in the console' })).id;
  readOnlyKey = (await mintKey(s, 'read_only', { body: { name: 'auditor' } })).secret;
});

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const noFollow = (input: string, init: RequestInit) => fetch(input, { ...init, redirect: 'manual' });
const decode = (s: string) => s.replace(/&#13;/g, '\r').replace(/&#10;/g, '\n').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

function post(path: string, cookie: string, fields: Record<string, string>): Promise<RawResponse> {
  return rawRequest(server.url, 'POST', path, {
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams(fields).toString(),
    fetch: noFollow,
  });
}

const page = (path: string, cookie: string) => rawRequest(server.url, 'GET', path, { headers: { cookie }, fetch: noFollow });

async function signIn(key = server.adminKey): Promise<{ cookie: string; csrf: string }> {
  const res = await rawRequest(server.url, 'POST', '/admin/sign-in', {
    headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ api_key: key }).toString(), fetch: noFollow,
  });
  expect(res.status).toBe(303);
  const cookie = `mnemo_console=${/mnemo_console=([^;]*)/.exec(res.headers.get('set-cookie') ?? '')![1]}`;
  const stores = await page('/admin/stores', cookie);
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(stores.body as string)![1]! };
}

/** The edit form's fields as the page renders them: the content as the textarea holds it, the hidden precondition and line ends. */
function editForm(html: string): { content: string; content_sha256: string; line_ends: string } {
  const textarea = /<textarea name="content"[^>]*>([\s\S]*?)<\/textarea>/.exec(html)![1]!;
  return {
    // The parser drops the one newline right after <textarea>, as a browser does.
    content: decode(textarea).replace(/^\n/, ''),
    content_sha256: /name="content_sha256" value="([0-9a-f]{64})"/.exec(html)![1]!,
    line_ends: /name="line_ends" value="(\w+)"/.exec(html)![1]!,
  };
}

/** A textarea's value as a browser submits it: every line end CRLF. */
const submitted = (text: string) => text.replace(/\r\n|\r|\n/g, '\r\n');

async function newMemory(path: string, content: string) {
  const client = sdkClient(server.url, server.adminKey);
  return client.beta.memoryStores.memories.create(storeId, { path, content });
}

async function versionsOf(memoryId: string) {
  const client = sdkClient(server.url, server.adminKey);
  return (await client.beta.memoryStores.memoryVersions.list(storeId, { memory_id: memoryId })).data;
}

describe('console: a memory\'s Edit', () => {
  let admin: { cookie: string; csrf: string };
  beforeAll(async () => {
    admin = await signIn();
  });

  it('Save writes one new version through the service, as the API\'s update does, and says so', async () => {
    const m = await newMemory('/edit/plain.md', 'first line\nsecond line\n');
    const base = `/admin/stores/${storeId}/memories/${m.id}`;
    const view = await page(base, admin.cookie);
    expect(view.body as string).toContain(`href="${base}/edit"`);
    const form = editForm((await page(`${base}/edit`, admin.cookie)).body as string);
    expect(form).toEqual({ content: 'first line\nsecond line\n', content_sha256: sha256('first line\nsecond line\n'), line_ends: 'lf' });
    const res = await post(`${base}/edit`, admin.cookie, { csrf: admin.csrf, ...form, content: submitted('first line\nsecond line, edited\n') });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${base}?notice=memory_saved`);
    const client = sdkClient(server.url, server.adminKey);
    const now = await client.beta.memoryStores.memories.retrieve(m.id, { memory_store_id: storeId });
    expect(now.content).toBe('first line\nsecond line, edited\n');
    const versions = await versionsOf(m.id);
    expect(versions.map((v) => v.operation)).toEqual(['modified', 'created']);
    expect(versions[0]!.created_by).toMatchObject({ type: 'api_actor' });
    expect((await page(res.headers.get('location')!, admin.cookie)).body as string).toContain('Saved: the memory has a new version.');
  });

  it('Save with the text unchanged writes no version', async () => {
    const m = await newMemory('/edit/same.md', 'stays\n');
    const base = `/admin/stores/${storeId}/memories/${m.id}`;
    const form = editForm((await page(`${base}/edit`, admin.cookie)).body as string);
    const res = await post(`${base}/edit`, admin.cookie, { csrf: admin.csrf, ...form, content: submitted(form.content) });
    expect(res.headers.get('location')).toBe(`${base}?notice=memory_unchanged`);
    expect((await versionsOf(m.id)).length).toBe(1);
  });

  it('a change made after the form was loaded is refused, not overwritten; the page shows both texts and a second Save replaces it knowingly', async () => {
    const m = await newMemory('/edit/raced.md', 'original\n');
    const base = `/admin/stores/${storeId}/memories/${m.id}`;
    const form = editForm((await page(`${base}/edit`, admin.cookie)).body as string);
    const client = sdkClient(server.url, server.adminKey);
    await client.beta.memoryStores.memories.update(m.id, { memory_store_id: storeId, content: 'written by an agent meanwhile\n' });
    const refused = await post(`${base}/edit`, admin.cookie, { csrf: admin.csrf, ...form, content: submitted('my edit\n') });
    expect(refused.status).toBe(409);
    const html = refused.body as string;
    expect(html).toContain('was changed after you began editing');
    expect(html).toContain('written by an agent meanwhile');
    expect((await client.beta.memoryStores.memories.retrieve(m.id, { memory_store_id: storeId })).content).toBe('written by an agent meanwhile\n');
    // The typed text is kept, and the form is now based on the content as it is.
    const again = editForm(html);
    expect(again).toMatchObject({ content: 'my edit\n', content_sha256: sha256('written by an agent meanwhile\n') });
    const saved = await post(`${base}/edit`, admin.cookie, { csrf: admin.csrf, ...again, content: submitted(again.content) });
    expect(saved.status).toBe(303);
    expect((await client.beta.memoryStores.memories.retrieve(m.id, { memory_store_id: storeId })).content).toBe('my edit\n');
  });

  it('line ends come back as the memory had them: LF text stays LF, CRLF text stays CRLF', async () => {
    const client = sdkClient(server.url, server.adminKey);
    for (const [name, text, edited] of [['lf', 'a\nb\n', 'a\nb\nc\n'], ['crlf', 'a\r\nb\r\n', 'a\r\nb\r\nc\r\n']] as const) {
      const m = await newMemory(`/edit/ends-${name}.md`, text);
      const base = `/admin/stores/${storeId}/memories/${m.id}`;
      const form = editForm((await page(`${base}/edit`, admin.cookie)).body as string);
      expect(form.line_ends).toBe(name);
      await post(`${base}/edit`, admin.cookie, { csrf: admin.csrf, ...form, content: submitted(edited) });
      expect((await client.beta.memoryStores.memories.retrieve(m.id, { memory_store_id: storeId })).content, name).toBe(edited);
    }
  });

  it('a memory a text field would change (a NUL, a lone CR, mixed line ends) gets no form, so nothing changes unasked', async () => {
    for (const [name, text] of [['nul', 'a\0b'], ['cr', 'a\rb'], ['mixed', 'a\r\nb\n']] as const) {
      const m = await newMemory(`/edit/odd-${name}.md`, text);
      const html = (await page(`/admin/stores/${storeId}/memories/${m.id}/edit`, admin.cookie)).body as string;
      expect(html, name).not.toContain('<textarea');
      expect(html, name).toContain('edit it through the API or a mount');
    }
  });

  it('content over 102,400 bytes is refused with the API\'s status and message, and the typed text kept', async () => {
    const m = await newMemory('/edit/big.md', 'small\n');
    const base = `/admin/stores/${storeId}/memories/${m.id}`;
    const form = editForm((await page(`${base}/edit`, admin.cookie)).body as string);
    const big = 'é'.repeat(51_201); // 102,402 bytes of UTF-8, each byte percent-encoded in the form
    const res = await post(`${base}/edit`, admin.cookie, { csrf: admin.csrf, ...form, content: big });
    expect(res.status).toBe(400);
    expect(res.body as string).toContain('the limit is 102400 bytes');
    expect(editForm(res.body as string).content).toBe(big);
    // A form past what any allowed content could encode to is refused before it is read whole.
    const huge = await post(`${base}/edit`, admin.cookie, { csrf: admin.csrf, ...form, content: 'é'.repeat(60_000) });
    expect(huge.status).toBe(413);
    expect((await versionsOf(m.id)).length).toBe(1);
  });

  it('a form without its CSRF token changes nothing', async () => {
    const m = await newMemory('/edit/csrf.md', 'kept\n');
    const base = `/admin/stores/${storeId}/memories/${m.id}`;
    const res = await post(`${base}/edit`, admin.cookie, { content: 'forged', content_sha256: sha256('kept\n'), line_ends: 'lf' });
    expect(res.status).toBe(403);
    const del = await post(`${base}/delete`, admin.cookie, { expected_content_sha256: sha256('kept\n') });
    expect(del.status).toBe(403);
    expect((await versionsOf(m.id)).length).toBe(1);
  });
});

describe('console: a memory\'s Delete', () => {
  let admin: { cookie: string; csrf: string };
  beforeAll(async () => {
    admin = await signIn();
  });

  it('Delete deletes the memory as the API does, and its page then shows it deleted with its history', async () => {
    const m = await newMemory('/delete/me.md', 'bye\n');
    const base = `/admin/stores/${storeId}/memories/${m.id}`;
    const html = (await page(base, admin.cookie)).body as string;
    expect(html).toContain(`action="${base}/delete"`);
    const expected = /name="expected_content_sha256" value="([0-9a-f]{64})"/.exec(html)![1]!;
    const res = await post(`${base}/delete`, admin.cookie, { csrf: admin.csrf, expected_content_sha256: expected });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${base}?notice=memory_deleted`);
    const client = sdkClient(server.url, server.adminKey);
    await expect(client.beta.memoryStores.memories.retrieve(m.id, { memory_store_id: storeId })).rejects.toMatchObject({ status: 404 });
    expect((await versionsOf(m.id)).map((v) => v.operation)).toEqual(['deleted', 'created']);
    const after = (await page(res.headers.get('location')!, admin.cookie)).body as string;
    expect(after).toContain('The memory was deleted');
    expect(after).not.toContain(`${base}/edit`);
  });

  it('a memory changed after its page was loaded is not deleted', async () => {
    const m = await newMemory('/delete/raced.md', 'seen\n');
    const base = `/admin/stores/${storeId}/memories/${m.id}`;
    const client = sdkClient(server.url, server.adminKey);
    await client.beta.memoryStores.memories.update(m.id, { memory_store_id: storeId, content: 'not seen\n' });
    const res = await post(`${base}/delete`, admin.cookie, { csrf: admin.csrf, expected_content_sha256: sha256('seen\n') });
    expect(res.status).toBe(409);
    expect(res.body as string).toContain('it was not deleted');
    expect((await client.beta.memoryStores.memories.retrieve(m.id, { memory_store_id: storeId })).content).toBe('not seen\n');
  });

  it('an archived store\'s memory offers Delete but not Edit (its edit page says why, and a save is refused with the text kept), and deletes', async () => {
    const client = sdkClient(server.url, server.adminKey);
    const archived = (await client.beta.memoryStores.create({ name: 'archived one' })).id;
    const m = await client.beta.memoryStores.memories.create(archived, { path: '/old.md', content: 'old\n' });
    await client.beta.memoryStores.archive(archived);
    const base = `/admin/stores/${archived}/memories/${m.id}`;
    const html = (await page(base, admin.cookie)).body as string;
    expect(html).not.toContain(`href="${base}/edit"`);
    expect(html).toContain('cannot be edited, but they can be deleted');
    const edit = (await page(`${base}/edit`, admin.cookie)).body as string;
    expect(edit).not.toContain('<textarea');
    expect(edit).toContain('The store is archived');
    const refused = await post(`${base}/edit`, admin.cookie, { csrf: admin.csrf, content: 'new\n', content_sha256: sha256('old\n'), line_ends: 'lf' });
    expect(refused.status).toBe(409);
    expect(refused.body as string).toContain('new\n');
    const res = await post(`${base}/delete`, admin.cookie, { csrf: admin.csrf, expected_content_sha256: sha256('old\n') });
    expect(res.status).toBe(303);
  });
});

describe('console: a read_only key and a memory', () => {
  it('sees no Edit or Delete, gets 403 for the edit page, and its posts are refused and change nothing', async () => {
    const m = await newMemory('/ro/kept.md', 'kept\n');
    const base = `/admin/stores/${storeId}/memories/${m.id}`;
    const ro = await signIn(readOnlyKey);
    const html = (await page(base, ro.cookie)).body as string;
    expect(html).toContain('kept');
    expect(html).not.toContain(`${base}/edit`);
    expect(html).not.toContain(`${base}/delete`);
    expect((await page(`${base}/edit`, ro.cookie)).status).toBe(403);
    const edit = await post(`${base}/edit`, ro.cookie, { csrf: ro.csrf, content: 'changed', content_sha256: sha256('kept\n'), line_ends: 'lf' });
    expect(edit.status).toBe(403);
    expect(edit.body as string).toContain('read_only');
    const del = await post(`${base}/delete`, ro.cookie, { csrf: ro.csrf, expected_content_sha256: sha256('kept\n') });
    expect(del.status).toBe(403);
    expect((await versionsOf(m.id)).length).toBe(1);
  });
});
