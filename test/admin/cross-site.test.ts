/**
 * The console against pages of another site, in a real browser: a link followed from elsewhere
 * arrives without the SameSite=Strict cookie and is sent to sign-in, but the session survives it;
 * a form on another site that posts a key to the sign-in is refused and leaves the session as it
 * was. The other site is http://localhost:<port>, the console http://127.0.0.1:<port>.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { mintKey } from '../helpers/sdk.js';
import type { RunningServer } from '../helpers/server.js';
import { SKIP_BROWSER, useConsole, withSignedInPage } from './browser.js';

describe.skipIf(SKIP_BROWSER)('the console and other sites (chromium at /usr/bin/chromium)', () => {
  let server: RunningServer;
  let browser: Browser;
  let other: Server;
  let otherUrl: string;
  let attackerKey: string;

  // Each test signs in a page of its own.
  useConsole(async (c) => {
    ({ server, browser } = c);
    attackerKey = (await mintKey(server, 'read_only', { body: { name: 'attacker' } })).secret;
    const console = server.url;
    other = createServer((req, res) => {
      res.setHeader('content-type', 'text/html');
      if (req.url === '/link') res.end(`<a id="go" href="${console}/admin/stores">the console</a>`);
      else res.end(`<form id="f" method="post" action="${console}/admin/sign-in"><input name="api_key" value="${attackerKey}"><button id="send">send</button></form>`);
    });
    await new Promise<void>((done) => other.listen(0, '127.0.0.1', done));
    otherUrl = `http://localhost:${(other.address() as AddressInfo).port}`;
  }, { signIn: false });

  afterAll(async () => {
    await new Promise<void>((done) => (other ? other.close(() => done()) : done()));
  });

  const cookieIn = async (page: Page) => (await page.context().cookies(`${server.url}/admin/`)).find((c) => c.name === 'mnemo_console')?.value;

  it('a link from another site goes to sign-in without signing the user out', async () => {
    await withSignedInPage({ browser, url: server.url, key: server.adminKey }, async (page) => {
      const cookie = await cookieIn(page);
      expect(cookie).toBeTruthy();
      await page.goto(`${otherUrl}/link`);
      await page.click('#go');
      await page.waitForURL(/\/admin\/sign-in/);
      expect(await cookieIn(page)).toBe(cookie);
      await page.goto(`${server.url}/admin/stores`);
      expect(new URL(page.url()).pathname).toBe('/admin/stores');
    });
  });

  it('a form on another site that posts a key to the sign-in is refused and the session stays', async () => {
    await withSignedInPage({ browser, url: server.url, key: server.adminKey }, async (page) => {
      const cookie = await cookieIn(page);
      expect(cookie).toBeTruthy();
      await page.goto(`${otherUrl}/form`);
      const [res] = await Promise.all([page.waitForResponse(`${server.url}/admin/sign-in`), page.click('#send')]);
      expect(res.status()).toBe(403);
      expect(await cookieIn(page)).toBe(cookie);
      await page.goto(`${server.url}/admin/keys`);
      // Still the admin key's session (a read_only one could not open the keys page).
      expect(await page.getByRole('heading', { name: 'API keys' }).count()).toBeGreaterThan(0);
    });
  });
});
