/**
 * @module A real Chromium (Debian's, never a downloaded one) driven by playwright-core against the
 * real server process, and a tiny API client for seeding and checking what the console did.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { jsonRequest } from '../helpers/sdk.js';
import { REPO_ROOT, startServer, type RunningServer, type StartOptions } from '../helpers/server.js';

export const CHROMIUM = '/usr/bin/chromium';
/** Without the browser the tests skip, except in CI, where .ci/run installs it and they must run. */
export const SKIP_BROWSER = !existsSync(CHROMIUM) && !process.env['CI'];
export const SCREENSHOTS = join(REPO_ROOT, 'docs', 'screenshots');

export function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
}

export async function newPage(browser: Browser): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  return { context, page: await context.newPage() };
}

export async function signIn(page: Page, url: string, key: string): Promise<void> {
  await page.goto(`${url}/admin/sign-in`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/admin\/stores/);
}

/**
 * A fresh 1280×800 page in a browser context of its own (its own cookies), handed to `use`; the
 * context is closed after it, whether `use` succeeds or throws.
 */
export async function withPage<T>(browser: Browser, use: (page: Page, context: BrowserContext) => Promise<T>): Promise<T> {
  const { context, page } = await newPage(browser);
  try {
    return await use(page, context);
  } finally {
    await context.close();
  }
}

export interface SignedInPageOptions {
  browser: Browser;
  /** The server's URL. */
  url: string;
  /** The API key the page signs in with. */
  key: string;
  /** The page's size, set before it signs in (1280×800 unless given). */
  viewport?: { width: number; height: number };
}

/**
 * As withPage, the page signed in with `key` first: for a test that needs a second browser (another
 * key, another size, a clean cookie jar) beside the page useConsole keeps for the whole file.
 */
export function withSignedInPage<T>({ browser, url, key, viewport }: SignedInPageOptions, use: (page: Page, context: BrowserContext) => Promise<T>): Promise<T> {
  return withPage(browser, async (page, context) => {
    if (viewport) await page.setViewportSize(viewport);
    await signIn(page, url, key);
    return use(page, context);
  });
}

/** What useConsole hands its `ready`: the running server, its URL and admin key, the browser, and its first page. */
export interface ConsoleUnderTest {
  server: RunningServer;
  url: string;
  admin: string;
  browser: Browser;
  page: Page;
}

export interface ConsoleOptions extends StartOptions {
  /** Sign the first page in with the admin key (the default); false leaves it signed out. */
  signIn?: boolean;
}

/**
 * One real server and one Chromium for a describe block: started before its tests, with a
 * 1280×800 page signed in as the admin key (unless `signIn: false`), then `ready` keeps what the
 * file needs and seeds its data; the browser closed and the server stopped after them.
 */
export function useConsole(ready: (console: ConsoleUnderTest) => void | Promise<void>, { signIn: signedIn = true, ...options }: ConsoleOptions = {}): void {
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    server = await startServer(options);
    browser = await launch();
    const { page } = await newPage(browser);
    if (signedIn) await signIn(page, server.url, server.adminKey);
    await ready({ server, url: server.url, admin: server.adminKey, browser, page });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });
}

/**
 * A 1280×800 PNG of what the page shows, for the README. Every run takes it; it replaces the
 * committed one when that is missing or MNEMO_SCREENSHOTS=update (ids and times differ on every
 * run, so an ordinary `npm test` leaves the work tree clean).
 */
/**
 * Clicks a store page's *Save changes* and waits for the server's answer to its POST (a 303 back to
 * the store's page `at`) and that page: the page is at `at` before the click already, so waiting for
 * the URL alone could go on before the save was made.
 */
export async function saveStoreChanges(page: Page, at: string): Promise<void> {
  const answer = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === `${new URL(at).pathname}/edit`);
  await page.getByRole('button', { name: 'Save changes' }).click();
  const status = (await answer).status();
  if (status !== 303) throw new Error(`Save changes answered ${status}, not 303`);
  await page.waitForURL(at);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  const committed = join(SCREENSHOTS, `${name}.png`);
  const update = process.env['MNEMO_SCREENSHOTS'] === 'update' || !existsSync(committed);
  const dir = update ? SCREENSHOTS : join(tmpdir(), 'mnemo-screenshots');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), type: 'png' });
}

/** One API call with a key; the parsed JSON body and the status. */
export async function api(url: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await jsonRequest({ url }, method, path, key, body);
  return { status: res.status, json: res.body };
}
