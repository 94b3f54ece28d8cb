/**
 * The console's forms and pages as a screen reader and a sighted reader meet them, in a real
 * Chromium against the real server: hints beside a field's name read in normal weight, every
 * control has a name, every page one h1 and a title, and an error names the field it is about.
 * (No axe here: the DOM is checked directly.)
 */
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { mintKey } from '../helpers/sdk.js';
import { api, SKIP_BROWSER, useConsole, withPage } from './browser.js';

describe.skipIf(SKIP_BROWSER)('console accessibility (chromium at /usr/bin/chromium)', () => {
  let browser: Browser;
  let page: Page;
  let url: string;
  let admin: string;
  let storeId: string;
  let memoryId: string;

  useConsole(async (c) => {
    ({ browser, page, url, admin } = c);
    storeId = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Labelled', description: 'for the checks' })).json.id;
    memoryId = (await api(url, admin, 'POST', `/v1/memory_stores/${storeId}/memories`, { path: '/notes/a.md', content: 'first\n' })).json.id;
    await api(url, admin, 'POST', `/v1/memory_stores/${storeId}/memories/${memoryId}`, { content: 'second\n' });
  });

  /** The font weight and colour of the innermost element of the label whose text holds `hint`, and of the label itself. */
  async function weights(label: RegExp, hint: string): Promise<{ hint: number; label: number; color: string; labelColor: string }> {
    const l = page.locator('label', { hasText: label }).first();
    return l.evaluate((el: any, text: string) => {
      const style = (e: unknown) => (globalThis as any).getComputedStyle(e);
      let inner = el;
      for (const e of el.querySelectorAll('*')) if (e.tagName !== 'TEXTAREA' && e.textContent.includes(text)) inner = e;
      return { hint: Number(style(inner).fontWeight), label: Number(style(el).fontWeight), color: style(inner).color, labelColor: style(el).color };
    }, hint);
  }

  it('a hint inside a form label reads in normal weight and muted, while the field name stays bold, on every form that has one', async () => {
    const cases: Array<[string, RegExp, string]> = [
      [`/admin/stores`, /^\s*Description\b/, 'at most'],
      [`/admin/stores/${storeId}`, /^\s*Description\b/, 'at most'],
      [`/admin/stores/${storeId}/memories/${memoryId}/edit`, /^\s*Content\b/, 'bytes of UTF-8'],
      [`/admin/keys`, /^\s*Limit to stores\b/, 'comma-separated'],
      [`/admin/stores/${storeId}/versions`, /^\s*Actor\b/, 'API key id or session id'],
      [`/admin/stores/${storeId}/versions`, /^\s*From\b/, 'UTC'],
      [`/admin/stores/${storeId}/versions`, /^\s*To\b/, 'UTC'],
    ];
    for (const [path, label, hint] of cases) {
      await page.goto(`${url}${path}`);
      const w = await weights(label, hint);
      expect({ path, label: String(label), weight: w.hint }).toEqual({ path, label: String(label), weight: 400 });
      expect(w.label).toBeGreaterThanOrEqual(600);
      expect(w.color).not.toBe(w.labelColor);
    }
  });

  /**
   * What a page lacks that a screen reader's user relies on: a control without a name, a button or
   * link without text, an aria reference to nothing, a repeated id, not exactly one h1, no title or lang.
   */
  async function problems(p: Page = page): Promise<string[]> {
    return p.evaluate(() => {
      const doc = (globalThis as any).document;
      const out: string[] = [];
      const text = (e: any) => (e?.textContent ?? '').replace(/\s+/g, ' ').trim();
      const byIds = (ids: string | null) => (ids ?? '').split(/\s+/).filter(Boolean).map((id) => doc.getElementById(id));
      const name = (e: any): string => {
        const labelled = byIds(e.getAttribute('aria-labelledby'));
        if (labelled.length) return labelled.map(text).join(' ');
        if (e.getAttribute('aria-label')) return e.getAttribute('aria-label');
        if (e.labels?.length) return [...e.labels].map(text).join(' ');
        return e.getAttribute('title') ?? '';
      };
      const what = (e: any) => `${e.tagName.toLowerCase()}${e.name ? `[name=${e.name}]` : ''}${e.id ? `#${e.id}` : ''}`;
      for (const e of doc.querySelectorAll('input:not([type=hidden]), select, textarea')) if (!name(e).trim()) out.push(`unlabelled ${what(e)}`);
      for (const e of doc.querySelectorAll('button, [role=button]')) if (!(text(e) || e.getAttribute('aria-label'))) out.push(`nameless ${what(e)}`);
      for (const e of doc.querySelectorAll('a[href]')) if (!(text(e) || e.getAttribute('aria-label'))) out.push(`textless link to ${e.getAttribute('href')}`);
      for (const attr of ['aria-labelledby', 'aria-describedby', 'aria-controls']) {
        for (const e of doc.querySelectorAll(`[${attr}]`)) if (byIds(e.getAttribute(attr)).some((t) => !t)) out.push(`${what(e)} ${attr} names a missing id`);
      }
      const ids = [...doc.querySelectorAll('[id]')].map((e: any) => e.id);
      for (const id of new Set(ids.filter((id, i) => ids.indexOf(id) !== i))) out.push(`id ${id} used twice`);
      const h1 = doc.querySelectorAll('h1').length;
      if (h1 !== 1) out.push(`${h1} h1`);
      if (!doc.title.trim()) out.push('no title');
      if (!doc.documentElement.lang) out.push('no lang');
      if (!doc.querySelector('main')) out.push('no main');
      if (doc.querySelector('a[href], button, input:not([type=hidden]), select, textarea, summary')?.getAttribute('href') !== '#main') out.push('no skip link first');
      return out;
    });
  }

  it('every console page has one h1, a title, a name for each control, button and link, and aria references that resolve', async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Audited' })).json.id;
    const m = (await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories`, { path: '/a/b.md', content: 'one\ntwo\n' })).json.id;
    await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories/${m}`, { content: 'one\nthree\n' });
    await mintKey({ url, adminKey: admin }, 'read_only', { body: { name: 'second' } });
    const paths = [
      '/admin/stores',
      `/admin/stores/${st}`,
      `/admin/stores/${st}?q=one&mode=substring`,
      `/admin/stores/${st}?prefix=/a/`,
      `/admin/stores/${st}/memories/${m}`,
      `/admin/stores/${st}/memories/${m}/edit`,
      `/admin/stores/${st}/versions`,
      '/admin/sessions',
      '/admin/keys',
      '/admin/admin-actions',
      '/admin/workspaces',
      '/admin/no-such-page',
    ];
    const found: Record<string, string[]> = {};
    for (const path of paths) {
      await page.goto(`${url}${path}`);
      found[path] = await problems();
    }
    // A diff of two versions.
    await page.goto(`${url}/admin/stores/${st}/memories/${m}`);
    await page.getByRole('button', { name: 'Compare versions' }).click();
    await page.locator('pre.diff').waitFor();
    found['diff'] = await problems();
    await page.getByLabel('side by side').check();
    await page.getByRole('button', { name: 'Compare versions' }).click();
    await page.locator('table.split').waitFor();
    found['split diff'] = await problems();
    // A store's Delete with the wrong name typed: the "Not deleted" page.
    await page.goto(`${url}/admin/stores/${st}`);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('dialog').getByLabel(/Type the store's name/).fill('not its name');
    await page.getByRole('button', { name: 'Delete store' }).click();
    await page.getByRole('alert').waitFor();
    found['not deleted'] = await problems();
    // Save changes on a store archived, then on one deleted, after its page was loaded: what was typed, kept.
    for (const [what, change] of [['archived', 'archive'], ['deleted', 'delete']] as const) {
      const gone = (await api(url, admin, 'POST', '/v1/memory_stores', { name: `${what} meanwhile` })).json.id;
      await page.goto(`${url}/admin/stores/${gone}`);
      await page.getByLabel('Name', { exact: true }).fill('typed');
      expect((change === 'archive' ? await api(url, admin, 'POST', `/v1/memory_stores/${gone}/archive`) : await api(url, admin, 'DELETE', `/v1/memory_stores/${gone}`)).status).toBe(200);
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('alert').waitFor();
      found[`not saved, store ${what}`] = await problems();
    }
    // Signed out: the sign-in page, and its answer to a wrong key.
    await withPage(browser, async (out) => {
      await out.goto(`${url}/admin/sign-in`);
      found['sign-in'] = await problems(out);
      await out.getByLabel('API key').fill('mnemo-sk-not-a-key');
      await out.getByRole('button', { name: 'Sign in' }).click();
      await out.getByRole('alert').waitFor();
      found['sign-in refused'] = await problems(out);
    });
    expect(found).toEqual(Object.fromEntries(Object.keys(found).map((k) => [k, []])));
  });

  it('the navigation marks the section a page is in (aria-current), and an error page says in its title what went wrong', async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Navigated' })).json.id;
    const marked = async (path: string) => {
      await page.goto(`${url}${path}`);
      return page.locator('nav[aria-label="Console"] a').evaluateAll((links: any[]) =>
        links.filter((a) => a.hasAttribute('aria-current')).map((a) => `${a.textContent} ${a.getAttribute('aria-current')}`),
      );
    };
    expect(await marked('/admin/stores')).toEqual(['Stores page']);
    expect(await marked(`/admin/stores/${st}`)).toEqual(['Stores true']);
    expect(await marked('/admin/sessions')).toEqual(['Sessions page']);
    expect(await marked('/admin/keys')).toEqual(['API keys page']);
    expect(await marked('/admin/admin-actions')).toEqual(['Admin log page']);
    // Not a section's page: nothing marked (a prefix of a name is not a section: /admin/storesx).
    expect(await marked('/admin/workspaces')).toEqual([]);
    await page.goto(`${url}/admin/stores/memstore_nope`);
    expect(await page.title()).toBe('Could not do that (404 not_found_error) · mnemo console');
  });

  /** The field whose aria-describedby names the page's alert, and whether it is marked invalid. */
  async function describedField(p: Page): Promise<{ alert: string; field: string | null; invalid: string | null }> {
    return p.evaluate(() => {
      const doc = (globalThis as any).document;
      const alert = doc.querySelector('main [role=alert]');
      const field = alert?.id ? doc.querySelector(`[aria-describedby~="${alert.id}"]`) : null;
      return { alert: (alert?.textContent ?? '').trim(), field: field?.name ?? null, invalid: field?.getAttribute('aria-invalid') ?? null };
    });
  }

  it("a refused sign-in's message and a refused Save's are tied to the field they are about (aria-describedby, aria-invalid)", async () => {
    await withPage(browser, async (out) => {
      await out.goto(`${url}/admin/sign-in`);
      expect(await out.getByLabel('API key').getAttribute('aria-invalid')).toBeNull();
      await out.getByLabel('API key').fill('mnemo-sk-not-a-key');
      await out.getByRole('button', { name: 'Sign in' }).click();
      await out.getByRole('alert').waitFor();
      expect(await describedField(out)).toEqual({ alert: expect.stringContaining('invalid API key'), field: 'api_key', invalid: 'true' });
    });
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'edited meanwhile' })).json.id;
    const m = (await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories`, { path: '/n.md', content: 'mine\n' })).json.id;
    await page.goto(`${url}/admin/stores/${st}/memories/${m}/edit`);
    expect(await page.getByLabel(/^Content/).getAttribute('aria-invalid')).toBeNull();
    await page.getByLabel(/^Content/).fill('typed here\n');
    await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories/${m}`, { content: 'written elsewhere\n' });
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').waitFor();
    expect(await describedField(page)).toEqual({ alert: expect.stringContaining('was changed after you began editing'), field: 'content', invalid: 'true' });
    expect(await problems()).toEqual([]);
  });

  it("each version's from and to radios in a memory's history are described by that version's operation, id and time", async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'history read aloud' })).json.id;
    const m = (await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories`, { path: '/h.md', content: 'one\n' })).json.id;
    await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories/${m}`, { content: 'two\n' });
    await page.goto(`${url}/admin/stores/${st}/memories/${m}`);
    const described = await page.evaluate(() => {
      const doc = (globalThis as any).document;
      return [...doc.querySelectorAll('#history-h + form tbody input[type=radio]')].map((r: any) => ({
        side: r.name,
        version: r.value,
        description: (r.getAttribute('aria-describedby') ?? '').split(/\s+/).filter(Boolean)
          .map((id: string) => doc.getElementById(id)?.innerText ?? '').join(' ').replace(/\s+/g, ' ').trim(),
      }));
    });
    expect(described).toHaveLength(4);
    for (const d of described) {
      expect(d.description).toContain(d.version);
      expect(d.description).toMatch(/^(created|modified) .* (just now|\d+ s ago) \(\d{4}-/);
    }
  });
});
