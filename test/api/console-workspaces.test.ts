/**
 * Which workspace the console acts in, against the real server: an operator key (all_workspaces)
 * lists every workspace at /admin/workspaces and works in another at /admin/workspaces/<id>/…, the
 * same pages, links, forms and redirects, bookmarkable; any other key is told it sees only its own,
 * and a URL naming another workspace is refused as the API refuses its anthropic-workspace-id.
 * The header's workspace name is read from the database, so PostgreSQL runs that part too.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { databasePerFile, pgSkip } from '../helpers/postgres.js';
import { createWorkspace, jsonRequest, mintKey, rawRequest, type RawResponse, setupPost, useServer } from '../helpers/sdk.js';
import { startServer, type RunningServer } from '../helpers/server.js';

let server: RunningServer;
let homeStore: string;
let other: { id: string; name: string };
let otherStore: string;
let plainAdminKey: string;

const v1 = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}, key = server.adminKey) => {
  const res = await jsonRequest(server, method, path, key, body, headers);
  expect(res.status, `${method} ${path}`).toBe(200);
  return res.body as any;
};

useServer(async (s) => {
  server = s;
  homeStore = (await v1('POST', '/v1/memory_stores', { name: 'home notes' })).id;
  other = await v1('POST', '/v1/workspaces', { name: 'team b' });
  const inOther = { 'anthropic-workspace-id': other.id };
  otherStore = (await v1('POST', '/v1/memory_stores', { name: 'team b notes' }, inOther)).id;
  await v1('POST', `/v1/memory_stores/${otherStore}/memories`, { path: '/b.md', content: 'team b text' }, inOther);
  plainAdminKey = (await v1('POST', '/v1/api_keys', { name: 'home admin', role: 'admin' })).secret;
});

const noFollow = (input: string, init: RequestInit) => fetch(input, { ...init, redirect: 'manual' });
const page = (path: string, cookie: string) => rawRequest(server.url, 'GET', path, { headers: { cookie }, fetch: noFollow });

function post(path: string, cookie: string, fields: Record<string, string>): Promise<RawResponse> {
  return rawRequest(server.url, 'POST', path, {
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams(fields).toString(),
    fetch: noFollow,
  });
}

async function signIn(key: string, next?: string): Promise<{ cookie: string; csrf: string; location: string }> {
  const res = await rawRequest(server.url, 'POST', '/admin/sign-in', {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ api_key: key, ...(next ? { next } : {}) }).toString(),
    fetch: noFollow,
  });
  expect(res.status).toBe(303);
  const cookie = `mnemo_console=${/mnemo_console=([^;]*)/.exec(res.headers.get('set-cookie') ?? '')![1]}`;
  const stores = await page('/admin/stores', cookie);
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(stores.body as string)![1]!, location: res.headers.get('location')! };
}

describe('console workspaces: an operator key', () => {
  it('lists every workspace, each linking to its stores', async () => {
    const { cookie } = await signIn(server.adminKey);
    const home = (await page('/admin/stores', cookie)).body as string;
    expect(home).toContain('Switch workspace');
    const list = await page('/admin/workspaces', cookie);
    expect(list.status).toBe(200);
    const html = list.body as string;
    expect(html).toContain('href="/admin/stores">default</a>');
    expect(html).toContain(`href="/admin/workspaces/${other.id}/stores">team b</a>`);
  });

  it('works in another workspace under its URL: its stores, memories, links and forms, and the header names it', async () => {
    const { cookie, csrf } = await signIn(server.adminKey);
    const root = `/admin/workspaces/${other.id}`;
    const stores = await page(`${root}/stores`, cookie);
    expect(stores.status).toBe(200);
    const html = stores.body as string;
    expect(html).toContain('team b notes');
    expect(html).not.toContain('home notes');
    expect(html).toContain('Workspace <strong>team b</strong>');
    expect(html).toContain(`href="${root}/stores/${otherStore}"`);
    expect(html).toContain(`action="${root}/stores"`);
    expect(html).toContain(`href="${root}/sessions"`);
    const store = (await page(`${root}/stores/${otherStore}`, cookie)).body as string;
    expect(store).toMatch(new RegExp(`href="${root}/stores/${otherStore}/memories/mem_\\w+"`));
    // The home workspace's store is not in this workspace.
    expect((await page(`${root}/stores/${homeStore}`, cookie)).status).toBe(404);
    // A store created here lands in this workspace, and the redirect stays in it.
    const created = await post(`${root}/stores`, cookie, { csrf, name: 'made in b', description: '' });
    expect(created.status).toBe(303);
    expect(created.headers.get('location')).toMatch(new RegExp(`^${root}/stores/memstore_\\w+$`));
    const inB = await v1('GET', '/v1/memory_stores', undefined, { 'anthropic-workspace-id': other.id });
    expect(inB.data.map((s: { name: string }) => s.name).sort()).toEqual(['made in b', 'team b notes']);
    expect((await page(root, cookie)).headers.get('location')).toBe(`${root}/stores`);
  });

  it('a bookmarked URL of another workspace leads back there through sign-in', async () => {
    const target = `/admin/workspaces/${other.id}/stores/${otherStore}`;
    const signedOut = await rawRequest(server.url, 'GET', target, { fetch: noFollow });
    expect(signedOut.headers.get('location')).toBe(`/admin/sign-in?next=${encodeURIComponent(target)}`);
    const { location } = await signIn(server.adminKey, target);
    expect(location).toBe(target);
  });

  it('creating a key in another workspace shows its secret on that workspace\'s keys page, and the key is that workspace\'s', async () => {
    const { cookie, csrf } = await signIn(server.adminKey);
    const root = `/admin/workspaces/${other.id}`;
    const res = await post(`${root}/keys`, cookie, { csrf, name: 'team b agent', role: 'read_write' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${root}/keys#new-key-secret`);
    const sealed = /mnemo_new_key=([^;]+);[^,]*Path=([^;]+)/i.exec(res.headers.get('set-cookie') ?? '')!;
    expect(sealed[2]).toBe(`${root}/keys`);
    const shown = (await page(`${root}/keys`, `${cookie}; mnemo_new_key=${sealed[1]}`)).body as string;
    const secret = /aria-label="New key secret">([^<]+)</.exec(shown)![1]!;
    const listed = await rawRequest(server.url, 'GET', '/v1/memory_stores', { apiKey: secret });
    expect((listed.body as { data: { id: string }[] }).data.map((s) => s.id)).toContain(otherStore);
  });

  it('a workspace that does not exist is a 404', async () => {
    const { cookie } = await signIn(server.adminKey);
    const res = await page('/admin/workspaces/wrkspc_nope/stores', cookie);
    expect(res.status).toBe(404);
    expect(res.body as string).toContain('workspace');
  });
});

describe('console workspaces: a key of one workspace', () => {
  it('is told it sees only its own workspace, and a URL naming another is refused as the API refuses the header', async () => {
    const { cookie } = await signIn(plainAdminKey);
    const stores = (await page('/admin/stores', cookie)).body as string;
    expect(stores).toContain('(this key&#39;s only one)');
    expect(stores).not.toContain('Switch workspace');
    const info = (await page('/admin/workspaces', cookie)).body as string;
    expect(info).toContain('sees only its own workspace');
    expect(info).not.toContain(other.id);
    for (const path of [`/admin/workspaces/${other.id}/stores`, `/admin/workspaces/${other.id}/stores/${otherStore}`, `/admin/workspaces/${other.id}/keys`]) {
      const res = await page(path, cookie);
      expect(res.status, path).toBe(403);
      expect(res.body as string).toContain('this API key belongs to another workspace');
      expect(res.body as string).not.toContain('team b notes');
    }
    // Its own workspace named in the URL is its own: allowed.
    const own = await v1('GET', '/v1/workspaces');
    const homeId = own.data.find((w: { name: string }) => w.name === 'default').id;
    expect((await page(`/admin/workspaces/${homeId}/stores`, cookie)).status).toBe(200);
  });

  it('a form posted to another workspace\'s URL is refused and does nothing', async () => {
    const { cookie, csrf } = await signIn(plainAdminKey);
    const res = await post(`/admin/workspaces/${other.id}/stores`, cookie, { csrf, name: 'sneaked in', description: '' });
    expect(res.status).toBe(403);
    const inB = await v1('GET', '/v1/memory_stores', undefined, { 'anthropic-workspace-id': other.id });
    expect(inB.data.map((s: { name: string }) => s.name)).not.toContain('sneaked in');
  });
});

describe.skipIf(pgSkip !== null)(`console workspaces on PostgreSQL${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, () => {
  const databaseUrl = databasePerFile();
  let pgServer: RunningServer | undefined;
  afterAll(async () => {
    await pgServer?.stop();
  });

  it('an operator key opens another workspace, named in the header, and a plain admin is refused it', async () => {
    pgServer = await startServer({ databaseUrl: databaseUrl() });
    const ws = await createWorkspace(pgServer, 'pg team');
    await setupPost(pgServer, '/v1/memory_stores', { name: 'pg team notes' }, { headers: { 'anthropic-workspace-id': ws.id } });
    const plain = (await mintKey(pgServer, 'admin', { body: { name: 'pg admin' } })).secret;
    const cookieFor = async (key: string) => {
      const res = await rawRequest(pgServer!.url, 'POST', '/admin/sign-in', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ api_key: key }).toString(), fetch: noFollow,
      });
      return `mnemo_console=${/mnemo_console=([^;]*)/.exec(res.headers.get('set-cookie') ?? '')![1]}`;
    };
    const get = async (path: string, cookie: string) => rawRequest(pgServer!.url, 'GET', path, { headers: { cookie }, fetch: noFollow });
    const opened = await get(`/admin/workspaces/${ws.id}/stores`, await cookieFor(pgServer.adminKey));
    expect(opened.status).toBe(200);
    expect(opened.body as string).toContain('Workspace <strong>pg team</strong>');
    expect(opened.body as string).toContain('pg team notes');
    expect((await get(`/admin/workspaces/${ws.id}/stores`, await cookieFor(plain))).status).toBe(403);
  });
});
