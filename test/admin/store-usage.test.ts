/**
 * What a store's page says it holds (its memory count and size), in a real Chromium against the
 * real server, after the writes that change it: a create, a delete, an expiry, a checkpoint.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { api, SKIP_BROWSER, useConsole } from './browser.js';

describe.skipIf(SKIP_BROWSER)("console: a store's count and size (chromium at /usr/bin/chromium)", () => {
  let page: Page;
  let url: string;
  let admin: string;
  useConsole((c) => {
    ({ page, url, admin } = c);
  });

  /** The store page's facts, each <dt> with its <dd>'s text. */
  async function facts(storeId: string): Promise<Record<string, string>> {
    await page.goto(`${url}/admin/stores/${storeId}`);
    const dts = await page.locator('dl.meta dt').allTextContents();
    const dds = await page.locator('dl.meta dd').allTextContents();
    return Object.fromEntries(dts.map((t, i) => [t, dds[i]!.trim()]));
  }

  it("a store's page counts its live memories only, this store's alone, and a deleted or expired one is gone from the count at once", async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'counted' })).json.id;
    const other = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'elsewhere' })).json.id;
    await api(url, admin, 'POST', `/v1/memory_stores/${other}/memories`, { path: '/x.md', content: 'not this store\n' });
    const kept = (await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories`, { path: '/kept.md', content: 'kept\n' })).json;
    const gone = (await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories`, { path: '/gone.md', content: 'gone\n' })).json;
    const brief = (await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories`, { path: '/brief.md', content: 'brief\n', ttl_seconds: 1 })).json;
    expect((await facts(st))['Memories']).toBe('3');
    expect((await api(url, admin, 'DELETE', `/v1/memory_stores/${st}/memories/${gone.id}`)).status).toBe(200);
    // Expired: the API no longer finds it (the sweep may not have deleted its row yet).
    for (let i = 0; (await api(url, admin, 'GET', `/v1/memory_stores/${st}/memories/${brief.id}`)).status !== 404; i++) {
      expect(i).toBeLessThan(100);
      await new Promise((r) => setTimeout(r, 100));
    }
    const now = await facts(st);
    expect(now['Memories']).toBe('1');
    expect(now['Size']).toMatch(new RegExp(`^${(kept.content_size_bytes / 1024).toFixed(2)} KB`));
    expect(await page.locator('ul.tree.root > li').count()).toBe(1);
  });

  it("a store's size says it counts the store's checkpoints with its memories, as the store's byte limit and a mount's df do", async () => {
    const st = (await api(url, admin, 'POST', '/v1/memory_stores', { name: 'with a checkpoint' })).json.id;
    const m = (await api(url, admin, 'POST', `/v1/memory_stores/${st}/memories`, { path: '/plan.md', content: 'plan\n' })).json;
    const c = await api(url, admin, 'POST', `/v1/memory_stores/${st}/checkpoints`, { agent_id: 'coder', session_id: 'run-1', goal: 'g'.repeat(4000) });
    expect(c.status).toBe(200);
    const shown = await facts(st);
    expect(shown['Memories']).toBe('1');
    const total = m.content_size_bytes + c.json.size_bytes;
    expect(shown['Size']).toContain(`${(total / 1024).toFixed(1)} KB`);
    expect(shown['Size']).toMatch(/memories and checkpoints/);
  });
});
