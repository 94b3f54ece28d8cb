/**
 * The console's redaction result against the real server, over HTTP: when other versions still hold
 * the erased text, the answer to the redact form is a page listing them (the API's
 * `content_still_held_in`), each linked to its memory's history and, unless it is a live memory's
 * current version, with a Redact of its own whose dialog opens on Cancel; redacting from there
 * lists what is left, and the last one lands on the memory page's notice. A key that may not redact
 * is shown none of it. (README, "Redaction" and "Web console")
 */
import { randomUUID } from 'node:crypto';
import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { mintKey, rawRequest, useServer, type RawResponse } from '../helpers/sdk.js';
import type { RunningServer } from '../helpers/server.js';

let server: RunningServer;
let client: Anthropic;

useServer(async (s, c) => {
  server = s;
  client = c;
});

const noFollow = (input: string, init: RequestInit) => fetch(input, { ...init, redirect: 'manual' });

function form(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<RawResponse> {
  return rawRequest(server.url, 'POST', path, {
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
    fetch: noFollow,
  });
}

const page = (path: string, cookie: string) => rawRequest(server.url, 'GET', path, { headers: { cookie }, fetch: noFollow });

async function signIn(apiKey: string): Promise<{ cookie: string; csrf: string }> {
  const res = await form('/admin/sign-in', { api_key: apiKey });
  expect(res.status).toBe(303);
  const cookie = `mnemo_console=${/mnemo_console=([^;]*)/.exec(res.headers.get('set-cookie') ?? '')![1]!}`;
  const stores = await page('/admin/stores', cookie);
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(stores.body as string)![1]! };
}

const ms = () => client.beta.memoryStores;

/** A memory whose first version holds `text` and is no longer its head. */
async function oldVersionHolding(storeId: string, path: string, text: string) {
  const m = await ms().memories.create(storeId, { path, content: text });
  await ms().memories.update(m.id, { memory_store_id: storeId, content: 'rotated' });
  return { memoryId: m.id, versionId: m.memory_version_id };
}

const redactPath = (storeId: string, memoryId: string, versionId: string) => `/admin/stores/${storeId}/memories/${memoryId}/versions/${versionId}/redact`;

/** The rows of the result page's list, by version id. */
const listed = (html: string) => [...html.matchAll(/<tr id="holder-([^"]+)"/g)].map((m) => m[1]);

/** The dialog that redacts version `id` from the result page, or undefined. */
const dialogOf = (html: string, id: string) => new RegExp(`<dialog id="redact-${id}"[\\s\\S]*?</dialog>`).exec(html)?.[0];

describe('console redaction result', () => {
  it('lists the versions that still hold the text, linked, each with a Redact that opens on Cancel; redacting them one by one ends on the memory page', async () => {
    const text = `api_token=${randomUUID()}`;
    const s = (await ms().create({ name: 'console holders' })).id;
    const t = (await ms().create({ name: 'other store' })).id;
    const first = await oldVersionHolding(s, '/a.md', text);
    const inStore = await oldVersionHolding(s, '/b "><img src=x onerror=alert(1)>.md', text);
    const elsewhere = await oldVersionHolding(t, '/d.md', text);
    const live = await ms().memories.create(s, { path: '/live.md', content: text });
    const { cookie, csrf } = await signIn(server.adminKey);

    const res = await form(redactPath(s, first.memoryId, first.versionId), { csrf }, { cookie });
    expect(res.status).toBe(200);
    const html = res.body as string;
    expect(html).toContain('3 other versions in this workspace still hold the same text');
    expect(listed(html)).toEqual([live.memory_version_id, elsewhere.versionId, inStore.versionId]);
    expect(html).toContain(`href="/admin/stores/${t}/memories/${elsewhere.memoryId}#${elsewhere.versionId}"`);
    expect(html).toContain(`href="/admin/stores/${s}/memories/${live.id}#${live.memory_version_id}"`);
    expect(html).toContain('other store');
    // A path is text, never markup.
    expect(html).not.toContain('<img src=x');
    // The live memory's current version has no Redact, and says why.
    expect(dialogOf(html, live.memory_version_id)).toBeUndefined();
    expect(/<tr id="holder-[^"]+"[\s\S]*?<\/tr>/.exec(html)![0]).toContain('cannot be redacted');
    for (const v of [elsewhere, inStore]) {
      const dialog = dialogOf(html, v.versionId)!;
      expect(dialog).toContain(`action="${redactPath(v === elsewhere ? t : s, v.memoryId, v.versionId)}"`);
      expect(dialog).toMatch(/<button type="button" class="secondary" data-close="" autofocus="">Cancel<\/button>/);
      expect(html).toContain(`data-dialog="redact-${v.versionId}"`);
    }

    // One click from the list: what is left is listed again.
    const next = await form(redactPath(t, elsewhere.memoryId, elsewhere.versionId), { csrf }, { cookie });
    expect(next.status).toBe(200);
    expect(listed(next.body as string)).toEqual([live.memory_version_id, inStore.versionId]);
    await form(redactPath(s, inStore.memoryId, inStore.versionId), { csrf }, { cookie });
    // Once no other version holds it, the answer is the memory page with its notice.
    await ms().memories.update(live.id, { memory_store_id: s, content: 'clean' });
    const last = await form(redactPath(s, live.id, live.memory_version_id), { csrf }, { cookie });
    expect(last.status).toBe(303);
    expect(last.headers.get('location')).toBe(`/admin/stores/${s}/memories/${live.id}?notice=version_redacted#${live.memory_version_id}`);
    for (const v of [first, inStore]) expect((await ms().memoryVersions.retrieve(v.versionId, { memory_store_id: s })).content).toBeNull();
    expect((await ms().memoryVersions.retrieve(elsewhere.versionId, { memory_store_id: t })).content).toBeNull();
  });

  it('a key that may not redact is refused and shown no holder', async () => {
    const text = `secret=${randomUUID()}`;
    const s = (await ms().create({ name: 'console holders ro' })).id;
    const v = await oldVersionHolding(s, '/a.md', text);
    await ms().memories.create(s, { path: '/holder-path.md', content: text });
    const key = await mintKey(server, 'read_write', { body: { name: 'writer' } });
    const { cookie, csrf } = await signIn(key.secret);
    const res = await form(redactPath(s, v.memoryId, v.versionId), { csrf }, { cookie });
    expect(res.status).toBe(403);
    expect(res.body as string).not.toContain('holder-path');
    expect((await ms().memoryVersions.retrieve(v.versionId, { memory_store_id: s })).content).toBe(text);
  });
});
