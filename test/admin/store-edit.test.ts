/**
 * A store's *Save changes* in a real Chromium against the real server, while the store changes
 * through the API after its page was loaded: only the fields edited on the page are sent, so a
 * name or description changed elsewhere meanwhile is kept, never written back with the value the
 * page was loaded with (nor a description's CRLF line ends turned into the LF its field sends).
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { api, saveStoreChanges, SKIP_BROWSER, useConsole } from './browser.js';

describe.skipIf(SKIP_BROWSER)("console: a store's Save changes beside changes made elsewhere (chromium at /usr/bin/chromium)", () => {
  let page: Page;
  let url: string;
  let admin: string;

  useConsole((c) => {
    ({ page, url, admin } = c);
  });

  const stored = async (id: string) => (await api(url, admin, 'GET', `/v1/memory_stores/${id}`)).json;

  const save = (at: string) => saveStoreChanges(page, at);

  it('Save changes with nothing edited writes nothing, even when the description changed through the API after the page was loaded', async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Loaded once', description: 'as loaded' })).json;
    const at = `${url}/admin/stores/${st.id}`;
    await page.goto(at);
    const elsewhere = (await api(url, admin, 'POST', `/v1/memory_stores/${st.id}`, { description: 'changed elsewhere' })).json;
    expect(elsewhere.description).toBe('changed elsewhere');
    await save(at);
    expect(await stored(st.id)).toMatchObject({ name: 'Loaded once', description: 'changed elsewhere', updated_at: elsewhere.updated_at });
  });

  it('Save changes with only the name edited keeps a description changed through the API after the page was loaded', async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Named once', description: 'as loaded' })).json;
    const at = `${url}/admin/stores/${st.id}`;
    await page.goto(at);
    await api(url, admin, 'POST', `/v1/memory_stores/${st.id}`, { description: 'changed elsewhere' });
    await page.getByLabel('Name', { exact: true }).fill('Renamed here');
    await save(at);
    expect(await stored(st.id)).toMatchObject({ name: 'Renamed here', description: 'changed elsewhere' });
  });

  it('Save changes with only the description edited keeps a name changed through the API after the page was loaded', async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Described once', description: 'as loaded' })).json;
    const at = `${url}/admin/stores/${st.id}`;
    await page.goto(at);
    await api(url, admin, 'POST', `/v1/memory_stores/${st.id}`, { name: 'Renamed elsewhere' });
    await page.getByLabel(/^Description/).fill('edited\nhere');
    await save(at);
    expect(await stored(st.id)).toMatchObject({ name: 'Renamed elsewhere', description: 'edited\nhere' });
  });

  it('Save changes with only the name edited leaves a description with CRLF line ends as stored, though its field sends them as LF', async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Windows notes', description: 'line one\r\nline two\r\n' })).json;
    const at = `${url}/admin/stores/${st.id}`;
    await page.goto(at);
    await page.getByLabel('Name', { exact: true }).fill('Windows notes, renamed');
    await save(at);
    expect(await stored(st.id)).toMatchObject({ name: 'Windows notes, renamed', description: 'line one\r\nline two\r\n' });
  });

  it('Save changes on a store whose description fills its 1,024 characters with 3-byte characters fits the form body limit and saves the name', async () => {
    const description = '語'.repeat(1024);
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Full description', description })).json;
    const at = `${url}/admin/stores/${st.id}`;
    await page.goto(at);
    await page.getByLabel('Name', { exact: true }).fill('Full description, renamed');
    await save(at);
    expect(await stored(st.id)).toMatchObject({ name: 'Full description, renamed', description });
  });
});
