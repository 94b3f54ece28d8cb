/**
 * The console's redirects and its cookie against the real server: every Location is a same-origin
 * /admin path (a `next` with a newline, another origin or a path outside the console falls back to
 * /admin), the redact form's memory segment is checked against the version before anything is
 * erased, a request without the cookie (a link from another site) leaves the cookie alone, a form
 * posted from another site is refused before it can sign anyone in or out, and a console path with
 * a trailing slash redirects to the one without. In process: an unexpected error in the console is
 * logged at error level.
 */
import { describe, expect, it } from 'vitest';
import { createApp } from '../../api/app.js';
import type { ApiLogger } from '../../api/log.js';
import { inProcessApp } from '../helpers/in-process.js';
import { rawRequest, sdkClient, useServer, type RawResponse } from '../helpers/sdk.js';
import type { RunningServer } from '../helpers/server.js';

let server: RunningServer;
let storeId: string;
let memoryId: string;
let oldVersionId: string;

useServer(async (s, client) => {
  server = s;
  storeId = (await client.beta.memoryStores.create({ name: 'redirects' })).id;
  const m = await client.beta.memoryStores.memories.create(storeId, { path: '/a.md', content: 'one' });
  memoryId = m.id;
  oldVersionId = m.memory_version_id;
  await client.beta.memoryStores.memories.update(m.id, { memory_store_id: storeId, content: 'two' });
});

const noFollow = (input: string, init: RequestInit) => fetch(input, { ...init, redirect: 'manual' });

function form(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<RawResponse> {
  return rawRequest(server.url, 'POST', path, {
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
    fetch: noFollow,
  });
}

const page = (path: string, cookie?: string) => rawRequest(server.url, 'GET', path, { headers: cookie ? { cookie } : {}, fetch: noFollow });

const cookieOf = (res: RawResponse) => /mnemo_console=([^;]*)/.exec(res.headers.get('set-cookie') ?? '')?.[1];

async function signIn(): Promise<string> {
  const res = await form('/admin/sign-in', { api_key: server.adminKey });
  expect(res.status).toBe(303);
  return `mnemo_console=${cookieOf(res)!}`;
}

async function csrfOf(cookie: string): Promise<string> {
  const res = await page(`/admin/stores/${storeId}/memories/${memoryId}`, cookie);
  expect(res.status).toBe(200);
  return /name="csrf" value="([^"]+)"/.exec(res.body as string)![1]!;
}

describe('console redirects', () => {
  it.each([
    ['a newline', '/admin/\nx'],
    ['a carriage return', '/admin/stores\r\nset-cookie: x=1'],
    ['a tab that browsers drop', '/\t/evil.example/admin'],
    ['another origin', 'https://evil.example/admin'],
    ['a scheme-relative URL', '//evil.example/admin'],
    ['a backslash', '/admin\\..\\..\\evil'],
    ['a path that leaves the console', '/admin/../v1/memory_stores'],
    ['a path beside it', '/administrator'],
  ])('a sign-in whose next has %s returns to /admin', async (_what, next) => {
    const res = await form('/admin/sign-in', { api_key: server.adminKey, next });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/admin');
    expect(cookieOf(res)).toBeTruthy();
    const prefilled = await page(`/admin/sign-in?next=${encodeURIComponent(next)}`);
    expect(prefilled.body as string).toContain('name="next" value="/admin"');
  });

  it('a sign-in returns to a console path it was sent from, query included', async () => {
    const res = await form('/admin/sign-in', { api_key: server.adminKey, next: '/admin/stores?archived=1' });
    expect(res.headers.get('location')).toBe('/admin/stores?archived=1');
  });

  it('a console path with a trailing slash redirects to the path without it, query kept, signed in or not', async () => {
    const cookie = await signIn();
    const cases: [path: string, to: string][] = [
      ['/admin/', '/admin'],
      ['/admin//', '/admin'],
      ['/admin/stores/?archived=1', '/admin/stores?archived=1'],
      [`/admin/stores/${storeId}/memories/${memoryId}/`, `/admin/stores/${storeId}/memories/${memoryId}`],
    ];
    for (const [path, to] of cases) {
      for (const res of [await page(path), await page(path, cookie)]) {
        expect(res.status, path).toBe(301);
        expect(res.headers.get('location'), path).toBe(to);
      }
    }
    const home = await page('/admin', cookie);
    expect(home.headers.get('location')).toBe('/admin/stores');
  });

  it('a redact form whose URL names another memory (or no memory) erases nothing and is a 404, never a 500', async () => {
    const cookie = await signIn();
    const csrf = await csrfOf(cookie);
    for (const memory of ['x%0Ay', 'mem_other']) {
      const res = await form(`/admin/stores/${storeId}/memories/${memory}/versions/${oldVersionId}/redact`, { csrf }, { cookie });
      expect(res.status, memory).toBe(404);
    }
    const client = sdkClient(server.url, server.adminKey);
    expect((await client.beta.memoryStores.memoryVersions.retrieve(oldVersionId, { memory_store_id: storeId })).redacted_at).toBeNull();
    const res = await form(`/admin/stores/${storeId}/memories/${memoryId}/versions/${oldVersionId}/redact`, { csrf }, { cookie });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/admin/stores/${storeId}/memories/${memoryId}?notice=version_redacted#${oldVersionId}`);
    expect((await client.beta.memoryStores.memoryVersions.retrieve(oldVersionId, { memory_store_id: storeId })).redacted_at).not.toBeNull();
  });
});

describe('console notices', () => {
  it('a notice is one of the console\'s own sentences, chosen by code: text in a link never shows in it', async () => {
    const cookie = await signIn();
    const spoof = 'SECURITY NOTICE: your key leaked. Sign in at https://mnemo-support.example/reset';
    const noticeOf = async (path: string) => {
      const res = await page(path, cookie);
      expect(res.status, path).toBe(200);
      return /<p class="notice" role="status">([^<]*)<\/p>/.exec(res.body as string)?.[1] ?? '';
    };
    for (const path of [
      `/admin/sessions?ended=${encodeURIComponent(spoof)}`,
      `/admin/sessions?notice=${encodeURIComponent(spoof)}`,
      `/admin/stores/${storeId}/memories/${memoryId}?redacted=${encodeURIComponent(spoof)}&held=1`,
      `/admin/stores/${storeId}/memories/${memoryId}?notice=version_redacted&held=${encodeURIComponent(spoof)}`,
      '/admin/sessions?notice=constructor',
    ]) {
      const res = await page(path, cookie);
      expect(res.body as string, path).not.toContain('mnemo-support.example');
      expect(await noticeOf(path), path).not.toContain('SECURITY');
    }
    expect(await noticeOf('/admin/sessions?notice=session_ended')).toBe('The session was ended and its stores unmounted.');
    expect(await noticeOf(`/admin/stores/${storeId}/memories/${memoryId}?notice=version_redacted&held=${encodeURIComponent(spoof)}`)).toBe('The version was redacted: its content and path are erased.');
    expect(await noticeOf(`/admin/stores/${storeId}/memories/${memoryId}?notice=version_redacted&held=2`)).toContain('2 other versions in this workspace still hold the same text');
  });
});

describe('a console session that has ended', () => {
  it('Sign out and every form then lead back to sign-in with a notice, and the form does nothing', async () => {
    const cookie = await signIn();
    const csrf = await csrfOf(cookie);
    const out = await form('/admin/sign-out', { csrf }, { cookie });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/admin/sign-in?notice=signed_out');
    // The same tab (or another one) still shows the forms of the session that has ended.
    const again = await form('/admin/sign-out', { csrf }, { cookie });
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe('/admin/sign-in?notice=signed_out');
    const archive = await form(`/admin/stores/${storeId}/archive`, { csrf }, { cookie });
    expect(archive.status).toBe(303);
    expect(archive.headers.get('location')).toBe('/admin/sign-in?notice=session_over');
    expect((await sdkClient(server.url, server.adminKey).beta.memoryStores.retrieve(storeId)).archived_at).toBeNull();
    const signInPage = (await page('/admin/sign-in?notice=session_over')).body as string;
    expect(signInPage).toContain('Your console session has ended');
    expect(signInPage).toContain('name="api_key"');
    expect((await page('/admin/sign-in?notice=signed_out')).body as string).toContain('You are signed out.');
  });
});

describe('console pages that do not exist', () => {
  it('an unknown console URL is a console 404 page with the navigation, not the API\'s JSON', async () => {
    const cookie = await signIn();
    for (const path of [`/admin/stores/${storeId}/memories`, '/admin/sessions/sesn_x', '/admin/keys/apikey_x', '/admin/nothing']) {
      const res = await page(path, cookie);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toMatch(/^text\/html/);
      expect(res.body as string, path).toContain(`there is no console page at ${path}`);
      expect(res.body as string, path).toContain('Sign out');
    }
    // Signed out, it is sign-in first, as for any console page.
    const out = await page(`/admin/stores/${storeId}/memories`);
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toMatch(/^\/admin\/sign-in\?next=/);
  });
});

describe('the console cookie', () => {
  it('a page requested without the cookie (a link from another site) redirects to sign-in and clears nothing', async () => {
    const res = await page('/admin/stores');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/admin/sign-in?next=%2Fadmin%2Fstores');
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('a cookie that names no session is cleared', async () => {
    const res = await page('/admin/stores', 'mnemo_console=not-a-session');
    expect(res.status).toBe(303);
    expect(res.headers.get('set-cookie')).toMatch(/mnemo_console=;.*Max-Age=0/i);
  });

  it.each([
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site', { 'sec-fetch-site': 'same-site', origin: 'http://other.localhost' }],
    ['an Origin of another host', { origin: 'https://evil.example' }],
    ['Origin: null', { origin: 'null' }],
  ])('a sign-in or sign-out posted with %s is refused and leaves the session as it was', async (_what, headers: Record<string, string>) => {
    const cookie = await signIn();
    const signedIn = await form('/admin/sign-in', { api_key: server.adminKey }, { ...headers, cookie });
    expect(signedIn.status).toBe(403);
    expect(signedIn.headers.get('set-cookie')).toBeNull();
    const out = await form('/admin/sign-out', { csrf: await csrfOf(cookie) }, { ...headers, cookie });
    expect(out.status).toBe(403);
    expect(out.headers.get('set-cookie')).toBeNull();
    expect((await page('/admin/stores', cookie)).status).toBe(200);
  });

  it('a sign-in posted from the console itself (same origin) is accepted', async () => {
    const { host } = new URL(server.url);
    const sameOrigin: Record<string, string>[] = [{ 'sec-fetch-site': 'same-origin', origin: server.url }, { origin: `http://${host}` }];
    for (const headers of sameOrigin) {
      const res = await form('/admin/sign-in', { api_key: server.adminKey }, headers);
      expect(res.status).toBe(303);
      expect(cookieOf(res)).toBeTruthy();
    }
  });
});

describe('console faults', () => {
  it('an unexpected error in the console is logged at error level, with its stack', async () => {
    const { service } = await inProcessApp();
    const lines: { level: string; line: string }[] = [];
    const logger: ApiLogger = {
      info: (_f, line) => lines.push({ level: 'info', line }),
      warn: (_f, line) => lines.push({ level: 'warn', line }),
      error: (_f, line) => lines.push({ level: 'error', line }),
    };
    const broken = { ...service, consoleSessions: { ...service.consoleSessions, signIn: () => Promise.reject(new TypeError('boom')) } };
    const app = createApp({ service: broken, logger, log: (line) => lines.push({ level: 'info', line }) });
    const res = await app.request('/admin/sign-in', {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'api_key=x',
    });
    expect(res.status).toBe(500);
    const fault = lines.filter((l) => l.line.includes('boom'));
    expect(fault).toHaveLength(1);
    expect(fault[0]!.level).toBe('error');
    expect(fault[0]!.line).toContain('TypeError: boom');
  });
});
