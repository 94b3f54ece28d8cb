/**
 * A memory's *Edit* and *Delete*, and the operator's workspace switcher, in a real Chromium against
 * the real server: what an admin clicks, checked through the API; a Save whose store was archived,
 * or whose memory or store was deleted, meanwhile keeps the typed text on the page and says why.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createWorkspace, setupPost } from '../helpers/sdk.js';
import { api, SKIP_BROWSER, useConsole } from './browser.js';

describe.skipIf(SKIP_BROWSER)('console: Edit, Delete and the workspace switcher (chromium at /usr/bin/chromium)', () => {
  let page: Page;
  let url: string;
  let admin: string;
  useConsole((c) => {
    ({ page, url, admin } = c);
  });

  const focused = () => page.evaluate('document.activeElement && document.activeElement.textContent') as Promise<string | null>;

  it('Edit shows the content in a text field, and Save writes a new version the API then returns', async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'edited' })).json.id;
    const m = (await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories`, { path: '/plan.md', content: 'step one\n' })).json;
    await page.goto(`${url}/admin/stores/${st}/memories/${m.id}`);
    await page.getByRole('link', { name: 'Edit', exact: true }).click();
    const field = page.getByLabel(/^Content/);
    expect(await field.inputValue()).toBe('step one\n');
    await field.fill('step one\nstep two\n');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(`${url}/admin/stores/${st}/memories/${m.id}?notice=memory_saved`);
    expect(await page.getByRole('status').textContent()).toContain('new version');
    expect(await page.getByLabel('Memory content').textContent()).toBe('step one\nstep two\n');
    const now = (await api(url, admin, 'GET', `/v1/memory_stores/${st}/memories/${m.id}`)).json;
    expect(now.content).toBe('step one\nstep two\n');
    const versions = (await api(url, admin, 'GET', `/v1/memory_stores/${st}/memory_versions?memory_id=${m.id}`)).json.data;
    expect(versions.map((v: { operation: string }) => v.operation)).toEqual(['modified', 'created']);
  });

  /** A memory's edit page with `typed` in its field, not yet saved: the store's id and the memory's. */
  async function editing(name: string, typed: string): Promise<{ st: string; m: string }> {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name })).json.id;
    const m = (await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories`, { path: '/draft.md', content: 'as stored\n' })).json.id;
    await page.goto(`${url}/admin/stores/${st}/memories/${m}/edit`);
    await page.getByLabel(/^Content/).fill(typed);
    return { st, m };
  }

  /** Presses Save: the status of the form's answer, once its page has loaded. */
  async function save(st: string, m: string): Promise<number> {
    const answer = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === `/admin/stores/${st}/memories/${m}/edit`);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const res = await answer;
    await page.waitForLoadState();
    return res.status();
  }

  it('a Save after the store was archived meanwhile is refused with 409 and keeps the typed text on the page, saying the store was archived', async () => {
    const typed = 'my long draft\nwritten while the store was archived\n';
    const { st, m } = await editing('archived while editing', typed);
    expect((await api(url, admin, 'POST', `/v1/memory_stores/${st}/archive`)).status).toBe(200);
    expect(await save(st, m)).toBe(409);
    expect(await page.getByLabel('Your text').textContent()).toBe(typed);
    expect(await page.getByRole('alert').first().textContent()).toMatch(/archived after you began editing .*so your text was not saved/);
    expect((await api(url, admin, 'GET', `/v1/memory_stores/${st}/memories/${m}`)).json.content).toBe('as stored\n');
  });

  it('a Save after the memory was deleted meanwhile answers 404 with a page that keeps the typed text and says the memory was deleted', async () => {
    const typed = 'my long draft\nwritten while the memory was deleted\n';
    const { st, m } = await editing('memory deleted while editing', typed);
    expect((await api(url, admin, 'DELETE', `/v1/memory_stores/${st}/memories/${m}`)).status).toBe(200);
    expect(await save(st, m)).toBe(404);
    expect(await page.title()).toMatch(/not saved/i);
    expect(await page.getByLabel('Your text').textContent()).toBe(typed);
    expect(await page.getByRole('alert').first().textContent()).toMatch(/memory was deleted after you began editing .*so your text was not saved/);
    await page.getByRole('link', { name: /the memory/ }).waitFor();
  });

  it('a Save after the store was deleted meanwhile answers 404 with a page that keeps the typed text and says the store was deleted', async () => {
    const typed = 'my long draft\nwritten while the store was deleted\n';
    const { st, m } = await editing('store deleted while editing', typed);
    expect((await api(url, admin, 'DELETE', `/v1/memory_stores/${st}`)).status).toBe(200);
    expect(await save(st, m)).toBe(404);
    expect(await page.title()).toMatch(/not saved/i);
    expect(await page.getByLabel('Your text').textContent()).toBe(typed);
    expect(await page.getByRole('alert').first().textContent()).toMatch(/store was deleted after you began editing .*so your text was not saved/);
  });

  it('Delete asks first with the focus on Cancel, so Enter twice deletes nothing; confirming deletes it', async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'deleted from' })).json.id;
    const m = (await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories`, { path: '/old.md', content: 'obsolete\n' })).json;
    await page.goto(`${url}/admin/stores/${st}/memories/${m.id}`);
    const opener = page.getByRole('button', { name: 'Delete', exact: true });
    await opener.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('dialog').waitFor();
    expect(await focused()).toBe('Cancel');
    await page.keyboard.press('Enter');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    expect((await api(url, admin, 'GET', `/v1/memory_stores/${st}/memories/${m.id}`)).status).toBe(200);
    await opener.click();
    await page.getByRole('button', { name: 'Delete memory' }).click();
    await page.waitForURL(`${url}/admin/stores/${st}/memories/${m.id}?notice=memory_deleted`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('deleted');
    expect((await api(url, admin, 'GET', `/v1/memory_stores/${st}/memories/${m.id}`)).status).toBe(404);
  });

  it('an operator switches to another workspace, works there, and the URL keeps the workspace through a reload', async () => {
    const ws = await createWorkspace({ url, adminKey: admin }, 'team b');
    const st = (await setupPost<{ id: string }>({ url, adminKey: admin }, '/v1/memory_stores', { name: 'team b notes' }, { headers: { 'anthropic-workspace-id': ws.id } })).id;
    await page.goto(`${url}/admin/stores`);
    await expect(page.getByRole('link', { name: 'team b notes' }).count()).resolves.toBe(0);
    await page.getByRole('link', { name: 'Switch workspace' }).click();
    await page.getByRole('link', { name: 'team b', exact: true }).click();
    await page.waitForURL(`${url}/admin/workspaces/${ws.id}/stores`);
    expect(await page.locator('.workspace').textContent()).toContain('team b');
    await page.getByRole('link', { name: 'team b notes' }).click();
    await page.waitForURL(`${url}/admin/workspaces/${ws.id}/stores/${st}`);
    await page.reload();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('team b notes');
    // Back in the key's own workspace, this store is not there.
    await page.getByRole('link', { name: 'Switch workspace' }).click();
    await page.getByRole('link', { name: 'default', exact: true }).click();
    await page.waitForURL(`${url}/admin/stores`);
    await expect(page.getByRole('link', { name: 'team b notes' }).count()).resolves.toBe(0);
  });
});
