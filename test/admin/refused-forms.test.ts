/**
 * A store form, *Create key*, a store's search or its version filter the service refuses comes back
 * as itself, in a real Chromium against the real server: what was typed is kept, the message sits
 * beside the field it is about (aria-invalid, aria-describedby) and the status is the API's; *Save
 * changes* on a store archived or deleted meanwhile keeps what was typed, read-only, and says why,
 * and *Create key* limited to a store deleted meanwhile comes back with its 404; and every page
 * opens with a "Skip to content" link.
 */
import type { Browser, Page, Response } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { api, SKIP_BROWSER, useConsole, withPage } from './browser.js';

/** The text of the first element a Tab can reach, in document order. */
const FIRST_FOCUSABLE = `(() => {
  const all = document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex]:not([tabindex="-1"])');
  return all.length ? all[0].textContent : null;
})()`;

describe.skipIf(SKIP_BROWSER)('console: refused forms and the skip link (chromium at /usr/bin/chromium)', () => {
  let browser: Browser;
  let page: Page;
  let url: string;
  let admin: string;

  useConsole((c) => {
    ({ browser, page, url, admin } = c);
  });

  /** Clicks `button` and returns the answer to the form's POST to `path`. */
  async function post(path: string, button: string, scope: Page | ReturnType<Page['getByRole']> = page): Promise<Response> {
    const answer = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === path);
    await scope.getByRole('button', { name: button, exact: true }).click();
    const res = await answer;
    await page.waitForLoadState();
    return res;
  }

  /** The alert tied to a field by its aria-describedby, the field's aria-invalid and value, by the field's name. */
  async function fieldError(name: string): Promise<{ message: string | null; invalid: string | null; value: string }> {
    return page.evaluate((n: string) => {
      const doc = (globalThis as any).document;
      const field = doc.querySelector(`[name="${n}"][aria-describedby]`) ?? doc.querySelector(`[name="${n}"]:not([type=hidden])`);
      const described = (field?.getAttribute('aria-describedby') ?? '').split(/\s+/).filter(Boolean).map((id: string) => doc.getElementById(id));
      const alert = described.find((e: any) => e?.getAttribute('role') === 'alert');
      return { message: alert ? alert.textContent.trim() : null, invalid: field?.getAttribute('aria-invalid') ?? null, value: field?.value ?? '' };
    }, name);
  }

  /** Lets a field take what a browser's own checks (required, maxlength) would stop, as a script or an old browser sends it. */
  async function unchecked(selector: string): Promise<void> {
    await page.locator(selector).evaluate((f: any) => {
      f.removeAttribute('required');
      f.removeAttribute('maxlength');
      f.form.noValidate = true;
    });
  }

  it('a store name the service refuses brings back the create form with the typed name and description, the message beside the name, and a 400', async () => {
    await page.goto(`${url}/admin/stores`);
    await page.getByLabel('Name', { exact: true }).fill('Payroll \u202etxt.exe');
    await page.getByLabel(/^Description/).fill('kept as typed\nsecond line');
    const res = await post('/admin/stores', 'Create store');
    expect(res.status()).toBe(400);
    expect(await fieldError('name')).toEqual({ message: expect.stringContaining('forbidden character (U+202E)'), invalid: 'true', value: 'Payroll \u202etxt.exe' });
    expect(await page.getByLabel(/^Description/).inputValue()).toBe('kept as typed\nsecond line');
    expect(await page.getByLabel(/^Description/).getAttribute('aria-invalid')).toBeNull();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Memory stores');
    expect(await page.title()).toMatch(/not created/i);
    // An empty name, past the browser's own check: the same form, the API's message on the name.
    await unchecked('input[name=name]');
    await page.getByLabel('Name', { exact: true }).fill('');
    const empty = await post('/admin/stores', 'Create store');
    expect(empty.status()).toBe(400);
    expect(await fieldError('name')).toEqual({ message: expect.stringContaining('must be 1 to 255 characters (got 0)'), invalid: 'true', value: '' });
    const stores = (await api(url, admin, 'GET', '/v1/memory_stores?limit=100')).json.data as { name: string }[];
    expect(stores.filter((s) => s.name.includes('Payroll') || s.name === '')).toEqual([]);
  });

  it('a description over its limit brings back the create form with the message beside the description, and the typed name kept', async () => {
    await page.goto(`${url}/admin/stores`);
    await unchecked('textarea[name=description]');
    await page.getByLabel('Name', { exact: true }).fill('  spaced name ');
    await page.getByLabel(/^Description/).fill('d'.repeat(1025));
    const res = await post('/admin/stores', 'Create store');
    expect(res.status()).toBe(400);
    expect(await fieldError('description')).toEqual({ message: expect.stringContaining('at most 1024 characters (got 1025)'), invalid: 'true', value: 'd'.repeat(1025) });
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('  spaced name ');
    expect(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBeNull();
  });

  it("a refused Save changes brings back the store's page with the typed name and description, the message beside the field, and leaves the store as it was", async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Editable', description: 'before' })).json;
    await page.goto(`${url}/admin/stores/${st.id}`);
    await page.getByLabel('Name', { exact: true }).fill('Edited \u2066name');
    await page.getByLabel(/^Description/).fill('typed\ndescription');
    const res = await post(`/admin/stores/${st.id}/edit`, 'Save changes');
    expect(res.status()).toBe(400);
    expect(await fieldError('name')).toEqual({ message: expect.stringContaining('forbidden character (U+2066)'), invalid: 'true', value: 'Edited \u2066name' });
    expect(await page.getByLabel(/^Description/).inputValue()).toBe('typed\ndescription');
    // The page is still the store's, as stored: its heading and facts keep the stored name.
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Editable');
    expect(await page.title()).toMatch(/not saved/i);
    await unchecked('textarea[name=description]');
    await page.getByLabel('Name', { exact: true }).fill('Editable');
    await page.getByLabel(/^Description/).fill('x'.repeat(1025));
    const long = await post(`/admin/stores/${st.id}/edit`, 'Save changes');
    expect(long.status()).toBe(400);
    expect(await fieldError('description')).toEqual({ message: expect.stringContaining('at most 1024 characters (got 1025)'), invalid: 'true', value: 'x'.repeat(1025) });
    expect(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBeNull();
    expect((await api(url, admin, 'GET', `/v1/memory_stores/${st.id}`)).json).toMatchObject({ name: 'Editable', description: 'before', updated_at: st.updated_at });
    // Corrected in the same form, it saves.
    await page.getByLabel(/^Description/).fill('after');
    const saved = await post(`/admin/stores/${st.id}/edit`, 'Save changes');
    expect(saved.status()).toBe(303);
    expect((await api(url, admin, 'GET', `/v1/memory_stores/${st.id}`)).json).toMatchObject({ name: 'Editable', description: 'after' });
  });

  it("Save changes on a store archived after its page was loaded comes back with a 409, the typed name and description still on the page and a message saying the store was archived", async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Archived meanwhile', description: 'before' })).json;
    await page.goto(`${url}/admin/stores/${st.id}`);
    await page.getByLabel('Name', { exact: true }).fill('Renamed too late');
    await page.getByLabel(/^Description/).fill('typed while\nsomeone archived it');
    expect((await api(url, admin, 'POST', `/v1/memory_stores/${st.id}/archive`)).status).toBe(200);
    const res = await post(`/admin/stores/${st.id}/edit`, 'Save changes');
    expect(res.status()).toBe(409);
    // The store's page, as it is now (archived), with what was typed kept in read-only fields the message describes.
    expect(await page.title()).toMatch(/not saved/i);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Archived meanwhile');
    expect(await fieldError('name')).toEqual({ message: expect.stringMatching(/archived after .* so your changes were not saved/), invalid: null, value: 'Renamed too late' });
    expect(await fieldError('description')).toEqual({ message: expect.stringMatching(/archived after/), invalid: null, value: 'typed while\nsomeone archived it' });
    expect(await page.getByLabel('Name', { exact: true }).getAttribute('readonly')).not.toBeNull();
    expect(await page.getByRole('button', { name: 'Save changes' }).count()).toBe(0);
    expect((await api(url, admin, 'GET', `/v1/memory_stores/${st.id}`)).json).toMatchObject({ name: 'Archived meanwhile', description: 'before' });
  });

  it("Save changes on a store deleted after its page was loaded comes back with a 404 and a page that keeps the typed name and description and says the store was deleted", async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Deleted meanwhile' })).json;
    await page.goto(`${url}/admin/stores/${st.id}`);
    await page.getByLabel('Name', { exact: true }).fill('Renamed after all');
    await page.getByLabel(/^Description/).fill('typed while\nsomeone deleted it');
    expect((await api(url, admin, 'DELETE', `/v1/memory_stores/${st.id}`)).status).toBe(200);
    const res = await post(`/admin/stores/${st.id}/edit`, 'Save changes');
    expect(res.status()).toBe(404);
    expect(await page.title()).toMatch(/not saved/i);
    expect(await fieldError('name')).toEqual({ message: expect.stringMatching(/deleted after .* so your changes were not saved/), invalid: null, value: 'Renamed after all' });
    expect(await fieldError('description')).toEqual({ message: expect.stringMatching(/deleted after/), invalid: null, value: 'typed while\nsomeone deleted it' });
    await page.getByRole('link', { name: /stores/i }).first().waitFor();
  });

  it("a Delete whose typed name does not match reopens the store's Delete dialog with the typed name and the message beside it, and deletes nothing", async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Kept store' })).json.id;
    await page.goto(`${url}/admin/stores/${st}`);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel(/Type the store's name/).fill('Kept stor');
    const res = await post(`/admin/stores/${st}/delete`, 'Delete store', dialog);
    expect(res.status()).toBe(400);
    await page.getByRole('dialog').waitFor();
    expect(await fieldError('confirm_name')).toEqual({ message: expect.stringContaining('does not match'), invalid: 'true', value: 'Kept stor' });
    // The dialog opens in its field, as when Delete is pressed.
    expect(await page.evaluate('document.activeElement && document.activeElement.name')).toBe('confirm_name');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Kept store');
    expect((await api(url, admin, 'GET', `/v1/memory_stores/${st}`)).status).toBe(200);
    await page.getByRole('dialog').getByLabel(/Type the store's name/).fill('Kept store');
    const deleted = await post(`/admin/stores/${st}/delete`, 'Delete store', page.getByRole('dialog'));
    expect(deleted.status()).toBe(303);
    await page.waitForURL(`${url}/admin/stores`);
    expect((await api(url, admin, 'GET', `/v1/memory_stores/${st}`)).status).toBe(404);
  });

  it('a key name the service refuses brings back the Create key form with the typed name, role and stores, the message beside the name, and a 400', async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Key scope' })).json.id;
    await page.goto(`${url}/admin/keys`);
    await page.getByLabel('Name', { exact: true }).fill('robot \u202eexe.txt');
    await page.getByLabel('Role').selectOption('read_only');
    await page.getByLabel(/^Limit to stores/).fill(` ${st}, `);
    const res = await post('/admin/keys', 'Create key');
    expect(res.status()).toBe(400);
    expect(await fieldError('name')).toEqual({ message: expect.stringContaining('forbidden character (U+202E)'), invalid: 'true', value: 'robot \u202eexe.txt' });
    expect(await page.getByLabel('Role').inputValue()).toBe('read_only');
    expect(await fieldError('memory_store_ids')).toEqual({ message: null, invalid: null, value: ` ${st}, ` });
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('API keys');
    expect(await page.title()).toMatch(/not created/i);
    expect(await page.getByLabel('New key secret').count()).toBe(0);
    // A name over 255 characters, past the browser's own check: the same form, the API's message on the name.
    await unchecked('input[name=name]');
    await page.getByLabel('Name', { exact: true }).fill('k'.repeat(256));
    const long = await post('/admin/keys', 'Create key');
    expect(long.status()).toBe(400);
    expect(await fieldError('name')).toEqual({ message: expect.stringContaining('must be 1 to 255 characters (got 256)'), invalid: 'true', value: 'k'.repeat(256) });
    expect(await page.getByLabel('Role').inputValue()).toBe('read_only');
    const keys = (await api(url, admin, 'GET', '/v1/api_keys?limit=100')).json.data as { name: string }[];
    expect(keys.filter((k) => k.name.startsWith('robot') || k.name.startsWith('kkk'))).toEqual([]);
    // Corrected in the same form, it creates the key, limited to the store typed.
    await page.getByLabel('Name', { exact: true }).fill('robot fixed');
    const created = await post('/admin/keys', 'Create key');
    expect(created.status()).toBe(303);
    await page.getByLabel('New key secret').waitFor();
    const made = ((await api(url, admin, 'GET', '/v1/api_keys?limit=100')).json.data as { name: string; role: string; memory_store_ids: string[] | null }[]).filter((k) => k.name === 'robot fixed');
    expect(made).toMatchObject([{ role: 'read_only', memory_store_ids: [st] }]);
  });

  it('Create key limited to a store deleted after the page was loaded comes back with a 404, the typed fields kept and the message beside the store ids', async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Gone before the key' })).json.id;
    await page.goto(`${url}/admin/keys`);
    await page.getByLabel('Name', { exact: true }).fill('  scoped robot ');
    await page.getByLabel('Role').selectOption('read_write');
    await page.getByLabel(/^Limit to stores/).fill(st);
    expect((await api(url, admin, 'DELETE', `/v1/memory_stores/${st}`)).status).toBe(200);
    const res = await post('/admin/keys', 'Create key');
    expect(res.status()).toBe(404);
    expect(await fieldError('memory_store_ids')).toEqual({ message: expect.stringContaining(`memory store not found: ${st}`), invalid: 'true', value: st });
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('  scoped robot ');
    expect(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBeNull();
    expect(await page.getByLabel('Role').inputValue()).toBe('read_write');
    expect(await page.title()).toMatch(/not created/i);
    const keys = (await api(url, admin, 'GET', '/v1/api_keys?limit=100')).json.data as { name: string }[];
    expect(keys.filter((k) => k.name.includes('scoped robot'))).toEqual([]);
    // A store archived meanwhile is no refusal: a key may be limited to it, as over the API.
    const archived = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Archived before the key' })).json.id;
    expect((await api(url, admin, 'POST', `/v1/memory_stores/${archived}/archive`)).status).toBe(200);
    await page.getByLabel(/^Limit to stores/).fill(archived);
    const created = await post('/admin/keys', 'Create key');
    expect(created.status()).toBe(303);
    await page.getByLabel('New key secret').waitFor();
    const made = ((await api(url, admin, 'GET', '/v1/api_keys?limit=100')).json.data as { name: string; memory_store_ids: string[] | null }[]).filter((k) => k.name === '  scoped robot ');
    expect(made).toMatchObject([{ memory_store_ids: [archived] }]);
  });

  it('an admin key limited to stores comes back as the Create key form with a 400 and the message beside the store ids', async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Not for admins' })).json.id;
    await page.goto(`${url}/admin/keys`);
    await page.getByLabel('Name', { exact: true }).fill('scoped admin');
    await page.getByLabel('Role').selectOption('admin');
    await page.getByLabel(/^Limit to stores/).fill(st);
    const res = await post('/admin/keys', 'Create key');
    expect(res.status()).toBe(400);
    expect(await fieldError('memory_store_ids')).toEqual({ message: expect.stringContaining('cannot be limited to stores'), invalid: 'true', value: st });
    expect(await page.getByLabel('Role').inputValue()).toBe('admin');
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('scoped admin');
  });

  it("a search the API refuses (only spaces, over 1,024 characters) comes back as the store's page with a 400, the typed text in the search field and the message beside it", async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Searched' })).json.id;
    expect((await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories`, { path: '/notes/a.md', content: 'findable words' })).status).toBe(200);
    await page.goto(`${url}/admin/stores/${st}`);
    const box = page.getByRole('searchbox', { name: 'Search text' });
    await box.fill('   ');
    await page.getByLabel('Mode').selectOption('substring');
    const answer = page.waitForResponse((r) => r.request().method() === 'GET' && new URL(r.url()).pathname === `/admin/stores/${st}` && new URL(r.url()).searchParams.has('q'));
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    expect((await answer).status()).toBe(400);
    await page.waitForLoadState();
    expect(await fieldError('q')).toEqual({ message: expect.stringContaining('must not be blank'), invalid: 'true', value: '   ' });
    expect(await page.getByLabel('Mode').inputValue()).toBe('substring');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Searched');
    expect(await page.title()).toMatch(/not searched/i);
    // The rest of the page is there: the tree lists the store's memories.
    expect(await page.locator('ul.tree.root summary').allTextContents()).toEqual([expect.stringContaining('notes/')]);
    const long = 'w'.repeat(1025);
    const res = await page.goto(`${url}/admin/stores/${st}?q=${long}&mode=fts`);
    expect(res!.status()).toBe(400);
    expect(await fieldError('q')).toEqual({ message: expect.stringContaining('at most 1024 characters'), invalid: 'true', value: long });
    // Corrected, the same form searches.
    await page.getByRole('searchbox', { name: 'Search text' }).fill('findable');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('link', { name: '/notes/a.md' }).waitFor();
    expect(await page.getByRole('searchbox', { name: 'Search text' }).getAttribute('aria-invalid')).toBeNull();
  });

  it("a version filter the API refuses (a From past year 9999) comes back as the filter with a 400, the typed actor, operation and times kept and the message beside From", async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Audited' })).json.id;
    await page.goto(`${url}/admin/stores/${st}/versions`);
    await page.getByLabel(/^\s*Actor/).fill('sesn_typed');
    await page.getByLabel('Operation').selectOption('modified');
    // Chromium's datetime-local takes years up to 275760; the API's timestamps stop at 9999.
    await page.getByLabel(/^\s*From/).evaluate((f: any) => { f.value = '20260-01-02T03:04'; });
    await page.getByLabel(/^\s*To/).evaluate((f: any) => { f.value = '2026-12-31T23:59:58'; });
    const answer = page.waitForResponse((r) => new URL(r.url()).pathname === `/admin/stores/${st}/versions` && new URL(r.url()).searchParams.has('from'));
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    expect((await answer).status()).toBe(400);
    await page.waitForLoadState();
    expect(await fieldError('from')).toEqual({ message: expect.stringContaining('created_at[gte]: must be'), invalid: 'true', value: '20260-01-02T03:04' });
    expect(await fieldError('to')).toEqual({ message: null, invalid: null, value: '2026-12-31T23:59:58' });
    expect(await page.getByLabel(/^\s*Actor/).inputValue()).toBe('sesn_typed');
    expect(await page.getByLabel('Operation').inputValue()).toBe('modified');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Audited');
    expect(await page.title()).toMatch(/not filtered/i);
    // Corrected, the same form filters.
    await page.getByLabel(/^\s*From/).evaluate((f: any) => { f.value = '2026-01-02T03:04'; });
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.getByText('No versions match.').waitFor();
    expect(await page.getByLabel(/^\s*From/).getAttribute('aria-invalid')).toBeNull();
  });

  it('the first Tab on a console page reaches a "Skip to content" link, shown only while focused, and following it puts the focus on the main content', async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Skipped' })).json.id;
    await withPage(browser, async (out) => {
      for (const [p, path] of [[page, '/admin/stores'], [page, `/admin/stores/${st}`], [page, '/admin/keys'], [page, '/admin/no-such-page'], [out, '/admin/sign-in']] as const) {
        await p.goto(`${url}${path}`);
        const skip = p.getByRole('link', { name: 'Skip to content' });
        expect(await skip.getAttribute('href'), path).toBe('#main');
        expect(await p.evaluate(FIRST_FOCUSABLE), path).toBe('Skip to content');
        const hidden = await skip.boundingBox();
        expect(hidden === null || hidden.y + hidden.height <= 0 || hidden.width <= 1 || hidden.height <= 1, path).toBe(true);
        // The sign-in page starts in its key field (autofocus): there the link is reached by focusing it.
        if (path === '/admin/sign-in') await skip.focus();
        else await p.keyboard.press('Tab');
        expect(await p.evaluate('document.activeElement && document.activeElement.textContent'), path).toBe('Skip to content');
        const shown = (await skip.boundingBox())!;
        expect(shown.width, path).toBeGreaterThan(20);
        expect(shown.height, path).toBeGreaterThan(10);
        expect(shown.y, path).toBeGreaterThanOrEqual(0);
        await p.keyboard.press('Enter');
        await expect.poll(() => p.evaluate('document.activeElement && document.activeElement.id'), { timeout: 10_000 }).toBe('main');
      }
    });
  });
});
