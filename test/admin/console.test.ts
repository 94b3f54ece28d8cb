/**
 * The web console (issue 16) in a real browser against the real server: sign-in, browsing, diffs,
 * redaction, archiving, sessions, keys and the admin log, the read-only key's view, CSRF and XSS.
 * Takes the README's screenshots (docs/screenshots/*.png, 1280×800) as it goes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { mintKey } from '../helpers/sdk.js';
import type { RunningServer } from '../helpers/server.js';
import { api, saveStoreChanges, screenshot, SKIP_BROWSER, useConsole, withSignedInPage } from './browser.js';

const XSS_CONTENT = '<script>window.__xss = 1</script>\n"><img src=x onerror="window.__xss = 2">\n';
const XSS_PATH = '/xss/"><img src=x onerror="window.__xss=3">.md';
const SECRET = `leaked-${Date.now().toString(36)}-token`;

describe.skipIf(SKIP_BROWSER)('web console (chromium at /usr/bin/chromium)', () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  let url: string;
  let admin: string;
  let storeId: string;
  let memoryId: string;
  let readOnlyKey: string;

  // Signed out: the first test signs in through the page.
  useConsole(async (c) => {
    ({ server, browser, page, url, admin } = c);
    storeId = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Project notes', description: 'Decisions and todos' })).json.id;
    const m = await api(url, admin, 'POST', `/v1/memory_stores/${storeId}/memories`, { path: '/decisions/db.md', content: `Use SQLite.\napi key: ${SECRET}\n` });
    memoryId = m.json.id;
    await api(url, admin, 'POST', `/v1/memory_stores/${storeId}/memories/${memoryId}`, { content: 'Use SQLite in WAL mode.\nKeys live in the vault.\n' });
    await api(url, admin, 'POST', `/v1/memory_stores/${storeId}/memories`, { path: '/todo.md', content: '- ship the console\n' });
    await api(url, admin, 'POST', `/v1/memory_stores/${storeId}/memories`, { path: XSS_PATH, content: XSS_CONTENT });
    readOnlyKey = (await mintKey(server, 'read_only', { body: { name: 'auditor' } })).secret;
  }, { signIn: false });

  it('a signed-out page redirects to sign-in, and signing in returns to it', async () => {
    await page.goto(`${url}/admin/stores/${storeId}`);
    expect(new URL(page.url()).pathname).toBe('/admin/sign-in');
    await screenshot(page, 'sign-in');
    await page.getByLabel('API key').fill('mnemo-sk-not-a-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('invalid API key');
    await page.getByLabel('API key').fill(admin);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${url}/admin/stores/${storeId}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Project notes');
  });

  it('the session cookie is HttpOnly, SameSite=Strict and scoped to /admin', async () => {
    const [cookie] = await page.context().cookies(`${url}/admin/stores`);
    expect(cookie).toMatchObject({ name: 'mnemo_console', httpOnly: true, sameSite: 'Strict', path: '/admin' });
  });

  it('the stores page lists the store, with archived ones behind a toggle', async () => {
    await page.goto(`${url}/admin/stores`);
    await expect(page.getByRole('link', { name: 'Project notes' }).count()).resolves.toBe(1);
    await expect(page.getByLabel('Show archived stores').isChecked()).resolves.toBe(false);
    await screenshot(page, 'stores');
  });

  it('a store shows its count and size, and its tree opens folder by folder', async () => {
    await page.goto(`${url}/admin/stores/${storeId}`);
    const meta = await page.locator('dl.meta').textContent();
    expect(meta).toContain('Memories3');
    expect(meta).toMatch(/Size\d+\.\d+ KB/);
    await expect(page.getByRole('link', { name: 'db.md' }).count()).resolves.toBe(0);
    await page.locator('summary', { hasText: 'decisions/' }).click();
    await page.getByRole('link', { name: 'db.md' }).waitFor();
    await screenshot(page, 'store');
  });

  it('full-text search finds a memory and links to it', async () => {
    await page.goto(`${url}/admin/stores/${storeId}`);
    await page.getByLabel('Search text').fill('vault');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: '/decisions/db.md' }).click();
    await page.waitForURL(/\/memories\//);
  });

  it('content and paths holding <script> and "><img onerror> render as text and run nothing', async () => {
    await page.goto(`${url}/admin/stores/${storeId}`);
    await page.locator('summary', { hasText: 'xss/' }).click();
    const link = page.locator('a', { hasText: 'onerror' });
    await link.waitFor();
    await link.click();
    await page.waitForURL(/\/memories\//);
    expect(await page.locator('pre.content').first().textContent()).toBe(XSS_CONTENT);
    expect(await page.locator('h1 code').textContent()).toBe(XSS_PATH);
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as unknown as { __xss?: number }).__xss)).toBeUndefined();
  });

  it('a memory shows its content, metadata and history, and a diff of two versions either way', async () => {
    await page.goto(`${url}/admin/stores/${storeId}/memories/${memoryId}`);
    expect(await page.locator('pre.content').first().textContent()).toBe('Use SQLite in WAL mode.\nKeys live in the vault.\n');
    const rows = page.locator('#history-h + form tbody tr');
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(1).textContent()).toContain('created');
    await page.getByRole('button', { name: 'Compare versions' }).click();
    const unified = await page.locator('pre.diff').textContent();
    expect(unified).toContain(`-api key: ${SECRET}`);
    expect(unified).toContain('+Use SQLite in WAL mode.');
    await screenshot(page, 'memory');
    await page.getByLabel('side by side').check();
    await page.getByRole('button', { name: 'Compare versions' }).click();
    expect(await page.locator('table.split td.del').first().textContent()).toBe('Use SQLite.');
    expect(await page.locator('table.split td.add').first().textContent()).toBe('Use SQLite in WAL mode.');
    await page.locator('#diff-h').scrollIntoViewIfNeeded();
    await screenshot(page, 'diff');
  });

  it('the head version offers no Redact and says why; redacting the old one erases it, which the API confirms', async () => {
    await page.goto(`${url}/admin/stores/${storeId}/memories/${memoryId}`);
    const rows = page.locator('#history-h + form tbody tr');
    expect(await rows.nth(0).textContent()).toContain('cannot be redacted');
    expect(await rows.nth(0).getByRole('button', { name: 'Redact' }).count()).toBe(0);
    const versionId = (await rows.nth(1).getAttribute('id'))!;
    await rows.nth(1).getByRole('button', { name: 'Redact' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('cannot be undone');
    expect(await dialog.locator('pre').textContent()).toContain(SECRET);
    await screenshot(page, 'redact');
    await dialog.getByRole('button', { name: 'Redact version' }).click();
    await page.waitForURL(/notice=version_redacted/);
    expect(await page.locator(`tr[id="${versionId}"]`).textContent()).toMatch(/redacted.*by key/);
    const v = await api(url, admin, 'GET', `/v1/memory_stores/${storeId}/memory_versions/${versionId}`);
    expect(v.json).toMatchObject({ content: null, path: null, content_sha256: null });
    expect(v.json.redacted_at).toEqual(expect.any(String));
    // The bytes are gone from every file of the data directory (the WAL too).
    for (const f of readdirSync(server.dataDir)) {
      if (!f.startsWith('mnemo')) continue;
      expect(readFileSync(join(server.dataDir, f)).includes(Buffer.from(SECRET)), f).toBe(false);
    }
  });

  it('works from the keyboard: a dialog opens with Enter and closes with Escape', async () => {
    await page.goto(`${url}/admin/stores/${storeId}`);
    await page.getByRole('button', { name: 'Archive', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('dialog').waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    await page.locator('summary', { hasText: 'decisions/' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'db.md' }).waitFor();
  });

  it('a narrow window gets one column and no sideways scrolling', async () => {
    await withSignedInPage({ browser, url, key: admin, viewport: { width: 390, height: 800 } }, async (narrow) => {
      for (const path of ['/admin/stores', `/admin/stores/${storeId}`, `/admin/stores/${storeId}/memories/${memoryId}`, '/admin/sessions']) {
        await narrow.goto(`${url}${path}`);
        // Runs in the page (tsconfig has no DOM types): the root element's scroll and visible widths.
        const [scroll, width] = await narrow.evaluate('[document.documentElement.scrollWidth, document.documentElement.clientWidth]') as [number, number];
        expect(scroll, path).toBeLessThanOrEqual(width);
      }
    });
  });

  it('a POST without the CSRF token is refused and changes nothing', async () => {
    const res = await page.request.post(`${url}/admin/stores/${storeId}/archive`, { form: { other: 'x' }, maxRedirects: 0 });
    expect(res.status()).toBe(403);
    expect(await res.text()).toContain('CSRF');
    expect((await api(url, admin, 'GET', `/v1/memory_stores/${storeId}`)).json.archived_at).toBeNull();
  });

  it('a read-only key sees no write controls, and the server refuses the write anyway', async () => {
    await withSignedInPage({ browser, url, key: readOnlyKey }, async (ro) => {
      expect(await ro.getByRole('button', { name: 'Create store' }).count()).toBe(0);
      await ro.goto(`${url}/admin/stores/${storeId}`);
      for (const name of ['Archive', 'Delete', 'Save changes']) expect(await ro.getByRole('button', { name }).count(), name).toBe(0);
      expect(await ro.getByRole('link', { name: 'API keys' }).count()).toBe(0);
      await ro.goto(`${url}/admin/stores/${storeId}/memories/${memoryId}`);
      expect(await ro.getByRole('button', { name: 'Redact' }).count()).toBe(0);
      const csrf = await ro.locator('input[name=csrf]').first().inputValue();
      const res = await ro.request.post(`${url}/admin/stores/${storeId}/archive`, { form: { csrf }, maxRedirects: 0 });
      expect(res.status()).toBe(403);
      expect(await res.text()).toContain('this API key is read_only');
      const keys = await ro.request.get(`${url}/admin/keys`);
      expect(keys.status()).toBe(403);
      expect((await api(url, admin, 'GET', `/v1/memory_stores/${storeId}`)).json.archived_at).toBeNull();
    });
  });

  it('ending a session from the sessions page unmounts it', async () => {
    const s = await api(url, admin, 'POST', '/v1/sessions', { resources: [{ type: 'memory_store', memory_store_id: storeId, access: 'read_only' }] });
    expect(s.status).toBe(200);
    await page.goto(`${url}/admin/sessions`);
    const row = page.locator(`tr[id="${s.json.id}"]`);
    expect(await row.textContent()).toContain('/mnt/memory/project-notes');
    await screenshot(page, 'sessions');
    await row.getByRole('button', { name: 'End session' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.textContent()).toContain('unmounted at once');
    await dialog.getByRole('button', { name: 'End session' }).click();
    await page.waitForURL(/notice=session_ended/);
    expect(await page.locator(`tr[id="${s.json.id}"]`).textContent()).toContain('ended');
    expect((await api(url, admin, 'GET', `/v1/sessions/${s.json.id}`)).json.status).toBe('ended');
  });

  it("a point-in-time session's mount says on the sessions page that it is a snapshot, and of which instant", async () => {
    const at = (await api(url, admin, 'GET', `/v1/memory_stores/${storeId}`)).json.updated_at as string;
    const s = await api(url, admin, 'POST', '/v1/sessions', { resources: [{ type: 'memory_store', memory_store_id: storeId, as_of: at }] });
    expect(s.status, JSON.stringify(s.json)).toBe(200);
    try {
      await page.goto(`${url}/admin/sessions`);
      expect(await page.locator(`tr[id="${s.json.id}"]`).textContent()).toContain(`(read_only, a snapshot as of ${s.json.resources[0].as_of})`);
    } finally {
      await api(url, admin, 'POST', `/v1/sessions/${s.json.id}/end`);
    }
  });

  it('archiving a store asks first, then the API shows it archived', async () => {
    await page.goto(`${url}/admin/stores/${storeId}`);
    await page.getByRole('button', { name: 'Archive', exact: true }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.textContent()).toContain('one-way');
    await dialog.getByRole('button', { name: 'Archive store' }).click();
    await page.locator('h1 .badge.archived').waitFor();
    expect((await api(url, admin, 'GET', `/v1/memory_stores/${storeId}`)).json.archived_at).toEqual(expect.any(String));
  });

  it('an admin creates a key (its secret shown once) and revokes it, and a revoked key\'s console session ends', async () => {
    await page.goto(`${url}/admin/keys`);
    await page.getByLabel('Name').fill('ci robot');
    await page.getByLabel('Role').selectOption('read_write');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByLabel('New key secret').textContent())!;
    expect(secret).toMatch(/^mnemo-sk-/);
    await screenshot(page, 'keys');
    await withSignedInPage({ browser, url, key: secret }, async (other) => {
      await page.goto(`${url}/admin/keys`);
      expect(await page.getByLabel('New key secret').count()).toBe(0);
      const row = page.locator('tr', { hasText: 'ci robot' });
      await row.getByRole('button', { name: 'Revoke' }).click();
      await row.getByRole('button', { name: 'Revoke key' }).click();
      await page.locator('tr', { hasText: 'ci robot' }).locator('.badge.revoked').waitFor();
      await other.goto(`${url}/admin/stores`);
      expect(new URL(other.url()).pathname).toBe('/admin/sign-in');
    });
  });

  it('the admin log shows every admin action, as GET /v1/admin_actions does', async () => {
    const log = await api(url, admin, 'GET', '/v1/admin_actions');
    expect(log.json.data.map((a: { action: string }) => a.action)).toEqual([
      'api_key.revoked', 'api_key.created', 'memory_store.archived', 'session.ended', 'memory_version.redacted', 'api_key.created',
    ]);
    await page.goto(`${url}/admin/admin-actions`);
    const text = await page.locator('main table').textContent();
    for (const label of ['API key revoked', 'API key created', 'Store archived', 'Session ended', 'Version redacted']) expect(text).toContain(label);
    await screenshot(page, 'admin-log');
  });

  it('deleting a store needs its name typed', async () => {
    await page.goto(`${url}/admin/stores/${storeId}`);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel(/Type the store's name/).fill('Project');
    await dialog.getByRole('button', { name: 'Delete store' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('does not match');
    await page.goto(`${url}/admin/stores/${storeId}`);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('dialog').getByLabel(/Type the store's name/).fill('Project notes');
    await page.getByRole('dialog').getByRole('button', { name: 'Delete store' }).click();
    await page.waitForURL(`${url}/admin/stores`);
    expect((await api(url, admin, 'GET', `/v1/memory_stores/${storeId}`)).status).toBe(404);
  });

  it('a substring search follows the scan past an empty first page, and pages on with "Next results"', async () => {
    const big = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Big store' })).json.id;
    // 20 memories of 100,000 characters spend one request's 2,000,000-character scan budget.
    for (let i = 0; i < 20; i += 1) {
      expect((await api(url, admin, 'POST', `/v1/memory_stores/${big}/memories`, { path: `/a/${String(i).padStart(2, '0')}.md`, content: 'x'.repeat(100_000) })).status).toBe(200);
    }
    for (let i = 0; i < 21; i += 1) await api(url, admin, 'POST', `/v1/memory_stores/${big}/memories`, { path: `/p/${String(i).padStart(2, '0')}.md`, content: `page hit ${i}\n` });
    const first = await api(url, admin, 'GET', `/v1/memory_stores/${big}/search?q=page%20hit&mode=substring`);
    expect(first.json).toMatchObject({ data: [], candidates_capped: true, next_page: expect.any(String) });
    await page.goto(`${url}/admin/stores/${big}`);
    await page.getByLabel('Search text').fill('page hit');
    await page.getByLabel('Mode').selectOption('substring');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/q=page/);
    const hits = page.locator('#search-h ~ ol > li > a');
    expect(await hits.count()).toBe(20);
    expect(await hits.first().textContent()).toBe('/p/00.md');
    expect(await page.locator('#search-h').locator('..').textContent()).not.toContain('No memory matches');
    await page.getByRole('link', { name: 'Next results →' }).click();
    await page.waitForURL(/search_page=/);
    expect(await hits.allTextContents()).toEqual(['/p/20.md']);
    expect(await page.getByRole('link', { name: 'Next results →' }).count()).toBe(0);
  });

  it('redacting a version whose text other versions still hold says how many and lists them, each with its own Redact, as the API does', async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'dup text' })).json.id;
    const a = (await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories`, { path: '/a.md', content: 'api_token=sk-live-123\n' })).json;
    await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories/${a.id}`, { content: 'cleaned\n' });
    const old = (await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories`, { path: '/old-copy.md', content: 'api_token=sk-live-123\n' })).json;
    await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories/${old.id}`, { content: 'cleaned too\n' });
    const copy = (await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories`, { path: '/copy.md', content: 'api_token=sk-live-123\n' })).json;
    await page.goto(`${url}/admin/stores/${st}/memories/${a.id}`);
    const row = page.locator(`tr[id="${a.memory_version_id}"]`);
    await row.getByRole('button', { name: 'Redact' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.textContent()).toContain('the text stays stored until that version is redacted as well');
    await dialog.getByRole('button', { name: 'Redact version' }).click();
    await page.getByRole('heading', { name: 'Versions that still hold the same text' }).waitFor();
    const notice = await page.getByRole('status').textContent();
    expect(notice).toContain('its content is not: 2 other versions in this workspace still hold the same text');
    expect(notice).not.toContain('content and path are erased');
    expect(await page.locator(`tr[id="holder-${copy.memory_version_id}"]`).textContent()).toContain('cannot be redacted');
    await screenshot(page, 'redaction-holders');
    // One click on the other holder: its dialog opens on Cancel, and confirming lists what is left.
    await page.locator(`tr[id="holder-${old.memory_version_id}"]`).getByRole('button', { name: 'Redact' }).click();
    const again = page.getByRole('dialog');
    expect(await page.evaluate('document.activeElement && document.activeElement.textContent')).toBe('Cancel');
    expect(await again.textContent()).toContain('/old-copy.md');
    await again.getByRole('button', { name: 'Redact version' }).click();
    await page.waitForFunction(`!document.getElementById('holder-${old.memory_version_id}')`);
    expect(await page.getByRole('status').textContent()).toContain('1 other version in this workspace still holds the same text');
    expect((await api(url, admin, 'GET', `/v1/memory_stores/${st}/memory_versions/${old.memory_version_id}`)).json.redacted_at).toEqual(expect.any(String));
  });

  it('a confirmation dialog opens with focus on Cancel, so pressing Enter twice redacts, archives or ends nothing', async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'enter test' })).json.id;
    const m = (await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories`, { path: '/a.md', content: 'keep me\n' })).json;
    await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories/${m.id}`, { content: 'v2\n' });
    const s = (await api(url, admin, 'POST', '/v1/sessions', { resources: [{ type: 'memory_store', memory_store_id: st, access: 'read_only' }] })).json;
    try {
      const focused = () => page.evaluate('document.activeElement && document.activeElement.textContent') as Promise<string | null>;
      const twice = async (opener: ReturnType<Page['getByRole']>) => {
        await opener.focus();
        await page.keyboard.press('Enter');
        await page.getByRole('dialog').waitFor();
        expect(await focused()).toBe('Cancel');
        await page.keyboard.press('Enter');
        await page.getByRole('dialog').waitFor({ state: 'hidden' });
      };
      await page.goto(`${url}/admin/stores/${st}/memories/${m.id}`);
      await twice(page.locator(`tr[id="${m.memory_version_id}"]`).getByRole('button', { name: 'Redact' }));
      await page.goto(`${url}/admin/stores/${st}`);
      await twice(page.getByRole('button', { name: 'Archive', exact: true }));
      await page.goto(`${url}/admin/sessions`);
      await twice(page.locator(`tr[id="${s.id}"]`).getByRole('button', { name: 'End session' }));
      // The typed-name dialog starts in its text field: Enter there submits nothing while it is empty.
      await page.goto(`${url}/admin/stores/${st}`);
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      expect(await page.evaluate('document.activeElement && document.activeElement.name')).toBe('confirm_name');
      expect((await api(url, admin, 'GET', `/v1/memory_stores/${st}/memory_versions/${m.memory_version_id}`)).json.redacted_at).toBeNull();
      expect((await api(url, admin, 'GET', `/v1/memory_stores/${st}`)).json.archived_at).toBeNull();
      expect((await api(url, admin, 'GET', `/v1/sessions/${s.id}`)).json.status).toBe('active');
    } finally {
      await api(url, admin, 'POST', `/v1/sessions/${s.id}/end`);
    }
  });

  it('Save changes with nothing edited changes nothing, and an edited description keeps its newlines as LF', async () => {
    const created = (await api(url, admin, 'POST', '/v1/memory_stores', { name: ' spaced ', description: '\nline one\nline two\n' })).json;
    await page.goto(`${url}/admin/stores/${created.id}`);
    await saveStoreChanges(page, `${url}/admin/stores/${created.id}`);
    const after = (await api(url, admin, 'GET', `/v1/memory_stores/${created.id}`)).json;
    expect(after).toMatchObject({ name: ' spaced ', description: '\nline one\nline two\n', updated_at: created.updated_at });
    await page.getByLabel('Description').fill('first\nsecond\n');
    await saveStoreChanges(page, `${url}/admin/stores/${created.id}`);
    expect((await api(url, admin, 'GET', `/v1/memory_stores/${created.id}`)).json).toMatchObject({ name: ' spaced ', description: 'first\nsecond\n' });
  });

  it('a store whose name begins or ends with spaces, or is only spaces, is deleted by typing its name exactly', async () => {
    for (const name of ['scratch ', '   ']) {
      const id = (await api(url, admin, 'POST', '/v1/memory_stores', { name })).json.id;
      await page.goto(`${url}/admin/stores/${id}`);
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      await page.getByRole('dialog').getByLabel(/Type the store's name/).fill(name);
      await page.getByRole('dialog').getByRole('button', { name: 'Delete store' }).click();
      await page.waitForURL(`${url}/admin/stores`);
      expect((await api(url, admin, 'GET', `/v1/memory_stores/${id}`)).status, JSON.stringify(name)).toBe(404);
    }
  });

  it('a store or key name holding a bidi control (U+202E) is refused by the API and the console alike', async () => {
    const refused = await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Payroll \u202etxt.exe' });
    expect(refused.status).toBe(400);
    expect(refused.json.error.message).toBe('name: contains a forbidden character (U+202E): bidirectional-text controls are refused');
    expect((await api(url, admin, 'POST', '/v1/api_keys', { name: 'ci \u2067admin', role: 'read_only' })).status).toBe(400);
    await page.goto(`${url}/admin/stores`);
    await page.getByLabel('Name').fill('Payroll \u202etxt.exe');
    await page.getByRole('button', { name: 'Create store' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('forbidden character (U+202E)');
  });

  it('a search snippet marks its match with <mark>, and shows the memory\'s own ** and <script> as text', async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'snippets' })).json.id;
    const content = '**Never share** <script>window.__xss = 4</script>: the deploy token is **abc123**\n';
    await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories`, { path: '/env.md', content });
    await withSignedInPage({ browser, url, key: admin }, async (p) => {
      const snippet = p.locator('#search-h ~ ol pre.content');
      for (const [q, mode, marked] of [['deploy token', 'fts', 'deploy'], ['**ABC123**', 'substring', '**abc123**'], ['</script>', 'substring', '</script>']] as const) {
        await p.goto(`${url}/admin/stores/${st}?${new URLSearchParams({ q, mode })}`);
        expect(await snippet.textContent(), q).toBe(content);
        expect(await snippet.locator('mark').allTextContents(), q).toEqual([marked]);
      }
      expect(await p.locator('main script').count()).toBe(0);
      expect(await p.evaluate(() => (globalThis as unknown as { __xss?: number }).__xss)).toBeUndefined();
    });
  });

  it('reloading the page after Create key mints no second key, shows the secret no more, and the secret is never in the URL', async () => {
    await withSignedInPage({ browser, url, key: admin }, async (p, context) => {
      await p.goto(`${url}/admin/keys`);
      await p.getByLabel('Name').fill('reload key');
      await p.getByRole('button', { name: 'Create key' }).click();
      const secret = (await p.getByLabel('New key secret').textContent())!;
      expect(secret).toMatch(/^mnemo-sk-/);
      expect(p.url()).not.toContain(secret);
      await p.reload();
      await p.getByRole('heading', { name: 'API keys' }).waitFor();
      expect(await p.getByLabel('New key secret').count()).toBe(0);
      expect(await p.locator('main').textContent()).not.toContain(secret);
      const keys = (await api(url, admin, 'GET', '/v1/api_keys?limit=100')).json.data as { name: string }[];
      expect(keys.filter((k) => k.name === 'reload key')).toHaveLength(1);
      // Nothing of it is left in the browser either.
      expect((await context.cookies()).map((c) => c.name)).toEqual(['mnemo_console']);
    });
  });

  it('the create-store and create-key forms keep a name exactly as typed, as Save changes and the API do', async () => {
    await withSignedInPage({ browser, url, key: admin }, async (p) => {
      await p.goto(`${url}/admin/stores`);
      await p.getByLabel('Name').fill('  padded store ');
      await p.getByLabel('Description').fill('  indented\nsecond line\n');
      await p.getByRole('button', { name: 'Create store' }).click();
      await p.waitForURL(/\/admin\/stores\/memstore_/);
      const id = new URL(p.url()).pathname.split('/').pop()!;
      expect((await api(url, admin, 'GET', `/v1/memory_stores/${id}`)).json).toMatchObject({ name: '  padded store ', description: '  indented\nsecond line\n' });
      await p.goto(`${url}/admin/keys`);
      await p.getByLabel('Name').fill(' padded key  ');
      await p.getByRole('button', { name: 'Create key' }).click();
      await p.getByLabel('New key secret').waitFor();
      const keys = (await api(url, admin, 'GET', '/v1/api_keys?limit=100')).json.data as { name: string }[];
      expect(keys.map((k) => k.name).filter((n) => n.includes('padded key'))).toEqual([' padded key  ']);
    });
  });

  it('a store description typed past its 1,024-character limit stops at the limit in the browser, and the store is created', async () => {
    await withSignedInPage({ browser, url, key: admin }, async (p) => {
      await p.goto(`${url}/admin/stores`);
      await p.getByLabel('Name').fill('long desc');
      await p.getByLabel('Description').focus();
      await p.keyboard.insertText('é'.repeat(3000));
      await p.getByRole('button', { name: 'Create store' }).click();
      await p.waitForURL(/\/admin\/stores\/memstore_/);
      const id = new URL(p.url()).pathname.split('/').pop()!;
      expect((await api(url, admin, 'GET', `/v1/memory_stores/${id}`)).json.description).toBe('é'.repeat(1024));
      expect(await p.getByLabel(/Description/).getAttribute('maxlength')).toBe('1024');
    });
  });

  it('at phone width (375 px) the keys page and a side-by-side diff fit the screen, and the stacked diff names each side', async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'narrow diff' })).json.id;
    const m = (await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories`, { path: '/n.md', content: 'same\nold line\n' })).json;
    const v2 = (await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories/${m.id}`, { content: 'same\nnew line\n' })).json;
    await withSignedInPage({ browser, url, key: admin, viewport: { width: 375, height: 700 } }, async (p) => {
      const diff = `/admin/stores/${st}/memories/${m.id}?from=${m.memory_version_id}&to=${v2.memory_version_id}&layout=split`;
      for (const path of ['/admin/keys', diff]) {
        await p.goto(`${url}${path}`);
        const [scroll, width] = await p.evaluate('[document.documentElement.scrollWidth, document.documentElement.clientWidth]') as [number, number];
        expect(scroll, path).toBeLessThanOrEqual(width);
      }
      // Each shown cell says which side it is; an unchanged line is shown once.
      const cells = await p.evaluate(`[...document.querySelectorAll('table.split td')].filter((td) => td.offsetParent !== null)
        .map((td) => getComputedStyle(td, '::before').content + td.textContent)`) as string[];
      expect(cells).toEqual(['"both: "same', '"old: "old line', '"new: "new line']);
    });
  });

  it('Compare versions on a later page of the history stays on that page with both versions chosen, and compares with one chosen on another page', async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'long history' })).json.id;
    const m = (await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories`, { path: '/m.md', content: 'v0\n' })).json;
    for (let v = 1; v <= 25; v += 1) await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories/${m.id}`, { content: `v${v}\n` });
    await withSignedInPage({ browser, url, key: admin }, async (p) => {
      await p.goto(`${url}/admin/stores/${st}/memories/${m.id}`);
      const rows = p.locator('#history-h + form tbody tr');
      const newest = (await rows.nth(0).getAttribute('id'))!;
      await rows.nth(0).getByLabel('from').check();
      await p.getByRole('button', { name: 'Compare versions' }).click();
      await p.waitForURL(new RegExp(`from=${newest}`));
      await p.getByRole('link', { name: 'Next page →' }).click();
      await p.waitForURL(/page=/);
      const older = (await rows.nth(3).getAttribute('id'))!;
      await rows.nth(3).getByLabel('to').check();
      await p.getByRole('button', { name: 'Compare versions' }).click();
      await p.waitForURL(new RegExp(`to=${older}`));
      expect(new URL(p.url()).searchParams.get('page')).not.toBeNull();
      expect(await p.locator(`tr[id="${older}"] input[name=to]`).isChecked()).toBe(true);
      expect(await p.locator(`input[name=from][value="${newest}"]`).isChecked()).toBe(true);
      const diff = await p.locator('pre.diff').textContent();
      expect(diff).toContain('-v25');
      expect(diff).toContain('+v2');
    });
  });

  it('signing out ends the console session', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/admin\/sign-in/);
    await page.goto(`${url}/admin/stores`);
    expect(new URL(page.url()).pathname).toBe('/admin/sign-in');
  });
});
