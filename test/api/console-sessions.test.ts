/**
 * The web console's sign-in sessions (issue 16), in process with a clock the test moves: they end
 * after 12 hours idle (each request renews them), at sign-out, and when their key is revoked; the
 * sign-in body is bounded; the console sends no CORS opening and sets its CSP.
 */
import { describe, expect, it } from 'vitest';
import { openSqliteStorage } from '../../src/storage/sqlite/open.js';
import { inProcessApp, type InProcessApp } from '../helpers/in-process.js';
import { rawRequest } from '../helpers/sdk.js';

const HOUR = 3600_000;

async function signIn(app: InProcessApp, key: string): Promise<string> {
  const res = await app.raw('POST', '/admin/sign-in', {
    apiKey: null,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ api_key: key }).toString(),
  });
  expect(res.status).toBe(303);
  const cookie = /mnemo_console=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
  expect(cookie).toBeDefined();
  return `mnemo_console=${cookie}`;
}

const page = (app: InProcessApp, cookie: string, path = '/admin/stores') => app.raw('GET', path, { apiKey: null, headers: { cookie } });

describe('console sessions', () => {
  it('a session lives while used and ends after 12 hours without a request', async () => {
    const app = await inProcessApp();
    const cookie = await signIn(app, app.adminKey);
    expect((await page(app, cookie)).status).toBe(200);
    app.clock.advance(11 * HOUR);
    expect((await page(app, cookie)).status).toBe(200);
    app.clock.advance(11 * HOUR);
    expect((await page(app, cookie)).status).toBe(200);
    app.clock.advance(12 * HOUR + 1000);
    const res = await page(app, cookie);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/admin/sign-in?next=%2Fadmin%2Fstores');
  });

  it('a session outlives its server: a restarted one on the same database knows it, and only by the cookie', async () => {
    const first = await inProcessApp();
    const cookie = await signIn(first, first.adminKey);
    const file = first.file;
    await first.close();
    const again = await inProcessApp({ storage: openSqliteStorage(file) });
    expect((await page(again, cookie)).status).toBe(200);
    // The database keeps the cookie's hash, not the cookie.
    const raw = openSqliteStorage(file, { readers: 0 });
    try {
      expect(await raw.findConsoleSession(cookie.slice('mnemo_console='.length))).toBeNull();
    } finally {
      await raw.close();
    }
  });

  it('the cookie is HttpOnly, SameSite=Strict and scoped to /admin, and Secure only when the request came over HTTPS', async () => {
    const app = await inProcessApp();
    const signInOver = (base: string) => rawRequest(base, 'POST', '/admin/sign-in', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ api_key: app.adminKey }).toString(), fetch: app.fetch,
    });
    const plain = (await signInOver('http://mnemo.in-process')).headers.get('set-cookie') ?? '';
    const tls = (await signInOver('https://mnemo.in-process')).headers.get('set-cookie') ?? '';
    for (const cookie of [plain, tls]) {
      expect(cookie).toMatch(/HttpOnly/i);
      expect(cookie).toMatch(/SameSite=Strict/i);
      expect(cookie).toMatch(/Path=\/admin/);
    }
    expect(plain).not.toMatch(/;\s*Secure/i);
    expect(tls).toMatch(/;\s*Secure/i);
  });

  it('revoking the key ends its console sessions at their next request', async () => {
    const app = await inProcessApp();
    const minted = await app.client.post('/v1/api_keys', { body: { name: 'temp', role: 'read_only' } }) as { id: string; secret: string };
    const cookie = await signIn(app, minted.secret);
    expect((await page(app, cookie)).status).toBe(200);
    expect((await app.raw('POST', `/v1/api_keys/${minted.id}/revoke`)).status).toBe(200);
    expect((await page(app, cookie)).status).toBe(303);
  });

  it('a wrong key is refused with the API\'s message and sets no cookie', async () => {
    const app = await inProcessApp();
    const res = await app.raw('POST', '/admin/sign-in', {
      apiKey: null, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'api_key=mnemo-sk-nope',
    });
    expect(res.status).toBe(401);
    expect(res.body).toContain('invalid API key');
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('the sign-in form is the one body read before a key is known, and it is bounded to 1 KiB', async () => {
    const app = await inProcessApp();
    const body = `api_key=${'x'.repeat(2048)}`;
    const res = await app.raw('POST', '/admin/sign-in', {
      apiKey: null, headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(body.length) }, body,
    });
    expect(res.status).toBe(413);
  });

  it('a POST without a session goes to sign-in before its body is read, and with one but no CSRF token it is refused', async () => {
    const app = await inProcessApp();
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const signedOut = await app.raw('POST', '/admin/stores', { apiKey: null, headers: form, body: 'name=x' });
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get('location')).toBe('/admin/sign-in?notice=session_over');
    const cookie = await signIn(app, app.adminKey);
    const res = await app.raw('POST', '/admin/stores', { apiKey: null, headers: { ...form, cookie }, body: 'name=x' });
    expect(res.status).toBe(403);
    expect(res.body).toContain('CSRF');
    expect((await app.client.beta.memoryStores.list()).data).toEqual([]);
  });

  it('sign-out ends the session on the server, not only in the browser', async () => {
    const app = await inProcessApp();
    const cookie = await signIn(app, app.adminKey);
    const html = (await page(app, cookie)).body as string;
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
    const out = await app.raw('POST', '/admin/sign-out', { apiKey: null, headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: `csrf=${csrf}` });
    expect(out.status).toBe(303);
    expect((await page(app, cookie)).status).toBe(303);
  });

  it('a method a console path does not take is a 405 with Allow once signed in, and a 401 before', async () => {
    const app = await inProcessApp();
    expect((await app.raw('PUT', '/admin/stores', { apiKey: null })).status).toBe(401);
    const cookie = await signIn(app, app.adminKey);
    const res = await app.raw('PUT', '/admin/stores', { apiKey: null, headers: { cookie } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
  });

  it('console pages open no CORS and allow scripts from mnemo only', async () => {
    const app = await inProcessApp();
    const res = await app.raw('GET', '/admin/sign-in', { apiKey: null, headers: { origin: 'https://evil.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    const htmx = await app.raw('GET', '/admin/assets/htmx.min.js', { apiKey: null });
    expect(htmx.status).toBe(200);
    expect(htmx.headers.get('cache-control')).toContain('max-age=86400');
  });
});
