/**
 * Workspaces, roles and store grants through the SDK against the real server: another workspace's
 * stores, memories and versions are 404 on every route; a role without the right is 403
 * permission_error; a key limited to some stores sees only those; keys are created, listed without
 * secrets and revoked through the API and the CLI; anthropic-workspace-id selects or must match. (issue 4)
 */
import type Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, expectApiError, expectRawError, jsonRequest, mintKey, sdkClient } from '../helpers/sdk.js';
import { runCli, startServer, type RunningServer } from '../helpers/server.js';
import { collect } from './shapes.js';

type Role = 'admin' | 'read_write' | 'read_only';
interface WireKey {
  id: string;
  role: Role;
  workspace_id: string;
  memory_store_ids: string[] | null;
  revoked_at: string | null;
  secret?: string;
}

let server: RunningServer;
let operator: Anthropic;
let ws2: string;
const keys: Record<'w1' | 'w2', Record<Role, string>> = { w1: {} as Record<Role, string>, w2: {} as Record<Role, string> };

/** A store with a live memory and an older (redactable) version. */
async function seed(client: Anthropic, name: string) {
  const ms = client.beta.memoryStores;
  const store = await ms.create({ name });
  const memory = await ms.memories.create(store.id, { path: '/doc.md', content: 'v1' });
  const updated = await ms.memories.update(memory.id, { memory_store_id: store.id, content: 'v2' });
  return { store: store.id, memory: memory.id, oldVersion: memory.memory_version_id, head: updated.memory_version_id };
}

type Ids = Awaited<ReturnType<typeof seed>>;
type Need = 'read' | 'write' | 'redact';

/** Every SDK route on a store's objects, as [name, right needed, call]. */
function routes(c: Anthropic, ids: Ids): [string, Need, () => Promise<unknown>][] {
  const ms = c.beta.memoryStores;
  const on = { memory_store_id: ids.store };
  return [
    ['retrieve store', 'read', () => ms.retrieve(ids.store)],
    ['update store', 'write', () => ms.update(ids.store, { name: 'renamed' })],
    ['list memories', 'read', () => ms.memories.list(ids.store)],
    ['create memory', 'write', () => ms.memories.create(ids.store, { path: '/new.md', content: 'x' })],
    ['retrieve memory', 'read', () => ms.memories.retrieve(ids.memory, on)],
    ['update memory', 'write', () => ms.memories.update(ids.memory, { ...on, content: 'v3' })],
    ['list versions', 'read', () => ms.memoryVersions.list(ids.store)],
    ['retrieve version', 'read', () => ms.memoryVersions.retrieve(ids.oldVersion, on)],
    ['redact version', 'redact', () => ms.memoryVersions.redact(ids.oldVersion, on)],
    ['delete memory', 'write', () => ms.memories.delete(ids.memory, on)],
    ['archive store', 'write', () => ms.archive(ids.store)],
    ['delete store', 'write', () => ms.delete(ids.store)],
  ];
}

const ALLOWED: Record<Role, Need[]> = { admin: ['read', 'write', 'redact'], read_write: ['read', 'write'], read_only: ['read'] };

beforeAll(async () => {
  server = await startServer();
  operator = sdkClient(server.url, server.adminKey);
  ws2 = (await createWorkspace(server, 'team two')).id;
  for (const role of ['admin', 'read_write', 'read_only'] as Role[]) {
    keys.w1[role] = (await mintKey(server, role)).secret;
    keys.w2[role] = (await mintKey(server, role, { headers: { 'anthropic-workspace-id': ws2 } })).secret;
  }
});
afterAll(async () => {
  await server?.stop();
});

describe('workspace isolation', () => {
  it("every route on another workspace's store, memory and version is 404 for all three roles", async () => {
    const ids = await seed(operator, 'workspace one');
    for (const role of ['admin', 'read_write', 'read_only'] as Role[]) {
      const c = sdkClient(server.url, keys.w2[role]);
      for (const [name, , call] of routes(c, ids)) {
        await expectApiError(call(), 404, 'not_found_error').catch((e: Error) => {
          throw new Error(`${role} ${name}: ${e.message}`);
        });
      }
      expect((await collect(c.beta.memoryStores.list({ include_archived: true }))).map((s) => s.id)).not.toContain(ids.store);
      const session = await jsonRequest(server, 'POST', '/v1/sessions', keys.w2[role], { resources: [{ type: 'memory_store', memory_store_id: ids.store, access: 'read_only' }] });
      expectRawError(session, 404, 'not_found_error');
    }
    // Nothing changed: both versions still there, unredacted.
    const versions = await collect(operator.beta.memoryStores.memoryVersions.list(ids.store));
    expect(versions.map((v) => v.redacted_at)).toEqual([null, null]);
  });

  it('each workspace lists only its own stores', async () => {
    const mine = await sdkClient(server.url, keys.w2.admin).beta.memoryStores.create({ name: 'in two' });
    const w1Stores = (await collect(sdkClient(server.url, keys.w1.read_only).beta.memoryStores.list())).map((s) => s.id);
    const w2Stores = (await collect(sdkClient(server.url, keys.w2.read_only).beta.memoryStores.list())).map((s) => s.id);
    expect(w2Stores).toEqual([mine.id]);
    expect(w1Stores).not.toContain(mine.id);
  });
});

describe('roles', () => {
  it.each(['admin', 'read_write', 'read_only'] as Role[])('%s may do exactly what its role allows on every route', async (role) => {
    const c = sdkClient(server.url, keys.w1[role]);
    const ids = await seed(operator, `roles ${role}`);
    for (const [name, need, call] of routes(c, ids)) {
      if (ALLOWED[role].includes(need)) {
        await expect(call(), `${role} ${name}`).resolves.toBeDefined();
      } else {
        await expectApiError(call(), 403, 'permission_error').catch((e: Error) => {
          throw new Error(`${role} ${name}: ${e.message}`);
        });
      }
    }
    const created = c.beta.memoryStores.create({ name: 'new' });
    if (role === 'read_only') await expectApiError(created, 403, 'permission_error');
    else await expect(created).resolves.toMatchObject({ type: 'memory_store' });
    expect((await c.beta.memoryStores.list()).data.length).toBeGreaterThan(0);
  });

  it('only admin keys manage keys; read_write and read_only get 403 on every key route', async () => {
    const target = await mintKey(server, 'read_only');
    for (const role of ['read_write', 'read_only'] as Role[]) {
      const k = keys.w1[role];
      expectRawError(await jsonRequest(server, 'GET', '/v1/api_keys', k), 403, 'permission_error');
      expectRawError(await jsonRequest(server, 'POST', '/v1/api_keys', k, { name: 'x', role: 'read_only' }), 403, 'permission_error');
      expectRawError(await jsonRequest(server, 'GET', `/v1/api_keys/${target.id}`, k), 403, 'permission_error');
      expectRawError(await jsonRequest(server, 'POST', `/v1/api_keys/${target.id}/revoke`, k), 403, 'permission_error');
      expectRawError(await jsonRequest(server, 'POST', '/v1/workspaces', k, { name: 'x' }), 403, 'permission_error');
    }
    expect((await jsonRequest(server, 'GET', `/v1/api_keys/${target.id}`, keys.w1.admin)).status).toBe(200);
    // A workspace admin cannot create workspaces or reach another workspace's keys.
    expectRawError(await jsonRequest(server, 'POST', '/v1/workspaces', keys.w1.admin, { name: 'x' }), 403, 'permission_error');
    expectRawError(await jsonRequest(server, 'GET', `/v1/api_keys/${target.id}`, keys.w2.admin), 404, 'not_found_error');
    expectRawError(await jsonRequest(server, 'POST', `/v1/api_keys/${target.id}/revoke`, keys.w2.admin), 404, 'not_found_error');
  });

  it('a read_only key can create a read_only session but not a read_write one', async () => {
    const ids = await seed(operator, 'ro sessions');
    const rw = await jsonRequest(server, 'POST', '/v1/sessions', keys.w1.read_only, { resources: [{ type: 'memory_store', memory_store_id: ids.store }] });
    expectRawError(rw, 403, 'permission_error');
    const explicit = await jsonRequest(server, 'POST', '/v1/sessions', keys.w1.read_only, {
      resources: [{ type: 'memory_store', memory_store_id: ids.store, access: 'read_write' }],
    });
    expectRawError(explicit, 403, 'permission_error');
  });
});

describe('keys', () => {
  it('creates a key whose secret is shown once, lists keys without secrets, and a revoked key fails next time', async () => {
    const created = await mintKey(server, 'read_write', { apiKey: keys.w1.admin });
    expect(created).toMatchObject({ type: 'api_key', role: 'read_write', memory_store_ids: null, revoked_at: null });
    expect(created.secret).toMatch(/^mnemo-sk-/);
    const c = sdkClient(server.url, created.secret);
    await c.beta.memoryStores.list();
    const list = (await jsonRequest(server, 'GET', '/v1/api_keys', keys.w1.admin)).body as { data: WireKey[] };
    expect(list.data.map((k) => k.id)).toContain(created.id);
    expect(JSON.stringify(list)).not.toContain(created.secret);
    expect(list.data.every((k) => !('secret' in k))).toBe(true);
    const revoked = await jsonRequest(server, 'POST', `/v1/api_keys/${created.id}/revoke`, keys.w1.admin);
    expect((revoked.body as WireKey).revoked_at).not.toBeNull();
    await expectApiError(c.beta.memoryStores.list(), 401, 'authentication_error');
  });

  it('lists keys and workspaces a page at a time with limit and page, bounded and refused like the other lists', async () => {
    for (const path of ['/v1/api_keys', '/v1/workspaces']) {
      const whole = (await jsonRequest(server, 'GET', path, server.adminKey)).body as { data: { id: string }[]; next_page: string | null };
      expect(whole.next_page, path).toBeNull();
      expect(whole.data.length, path).toBeGreaterThanOrEqual(2);
      const paged: string[] = [];
      let page: string | null = '';
      while (page !== null) {
        const res = await jsonRequest(server, 'GET', `${path}?limit=1${page ? `&page=${page}` : ''}`, server.adminKey);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const body = res.body as { data: { id: string }[]; next_page: string | null };
        expect(body.data).toHaveLength(1);
        paged.push(body.data[0]!.id);
        page = body.next_page;
      }
      expect(paged, path).toEqual(whole.data.map((x) => x.id));
      for (const [q, message] of [
        ['limit=0', 'limit: must be from 1 to 100 (got 0)'],
        ['limit=101', 'limit: must be from 1 to 100 (got 101)'],
        ['limit=many', 'limit: must be an integer from 1 to 100'],
        ['page=page_nope', 'page: not a cursor this server issued'],
      ] as const) {
        const res = await jsonRequest(server, 'GET', `${path}?${q}`, server.adminKey);
        expectRawError(res, 400, 'invalid_request_error');
        expect((res.body as { error: { message: string } }).error.message, `${path}?${q}`).toBe(message);
      }
    }
  });

  it("a keys cursor pages on after its key, and is refused in another workspace; an unsealed one, on a database made after sealing, too", async () => {
    const whole = ((await jsonRequest(server, 'GET', '/v1/api_keys', server.adminKey)).body as { data: { id: string }[] }).data.map((k) => k.id);
    expect(whole.length).toBeGreaterThanOrEqual(2);
    const cursor = ((await jsonRequest(server, 'GET', '/v1/api_keys?limit=1', server.adminKey)).body as { next_page: string }).next_page;
    const rest = await jsonRequest(server, 'GET', `/v1/api_keys?limit=100&page=${cursor}`, server.adminKey);
    expect(rest.status, JSON.stringify(rest.body)).toBe(200);
    expect((rest.body as { data: { id: string }[] }).data.map((k) => k.id)).toEqual(whole.slice(1));
    expectRawError(await jsonRequest(server, 'GET', `/v1/api_keys?page=${cursor}`, keys.w2.admin), 400, 'invalid_request_error');
    // Unsealed cursors are taken only for an hour after an upgrade (test/src/sqlite.test.ts, "sqlite page cursors").
    const unsealed = 'page_' + Buffer.from(JSON.stringify({ i: whole[0]! })).toString('base64url');
    const refused = await jsonRequest(server, 'GET', `/v1/api_keys?page=${unsealed}`, server.adminKey);
    expectRawError(refused, 400, 'invalid_request_error');
    expect((refused.body as { error: { message: string } }).error.message).toBe('page: not a cursor this server issued');
  });

  it('refuses malformed key requests with 400', async () => {
    for (const body of [{}, { name: 'x' }, { name: 'x', role: 'root' }, { name: '', role: 'admin' }, { name: 'x', role: 'read_only', memory_store_ids: [] }, { name: 'x', role: 'admin', memory_store_ids: ['memstore_x'] }]) {
      const res = await jsonRequest(server, 'POST', '/v1/api_keys', keys.w1.admin, body);
      expect([400, 404], JSON.stringify(body)).toContain(res.status);
    }
  });

  it('the CLI creates workspaces and keys in them, lists keys without secrets and revokes them', async () => {
    const ws = await runCli(['workspaces', 'create', 'cli team', '--data-dir', server.dataDir]);
    expect(ws.code, ws.stderr).toBe(0);
    const wsId = ws.stdout.trim();
    const made = await runCli(['keys', 'create', '--role', 'read_write', '--workspace', wsId, '--name', 'cli rw', '--data-dir', server.dataDir]);
    expect(made.code, made.stderr).toBe(0);
    const secret = made.stdout.trim();
    const c = sdkClient(server.url, secret);
    const store = await c.beta.memoryStores.create({ name: 'cli store' });
    expect((await collect(operator.beta.memoryStores.list())).map((s) => s.id)).not.toContain(store.id);
    const listed = await runCli(['keys', 'list', '--workspace', wsId, '--json', '--data-dir', server.dataDir]);
    const rows = JSON.parse(listed.stdout) as { id: string; name: string }[];
    expect(rows.map((r) => r.name)).toEqual(['cli rw']);
    expect(listed.stdout).not.toContain(secret);
    const revoked = await runCli(['keys', 'revoke', rows[0]!.id, '--workspace', wsId, '--data-dir', server.dataDir]);
    expect(revoked.code, revoked.stderr).toBe(0);
    await expectApiError(c.beta.memoryStores.list(), 401, 'authentication_error');
  });
});

describe('key visibility', () => {
  /** The operator key seeded on start, as the operator itself lists it. */
  async function operatorKey(): Promise<WireKey & { all_workspaces: boolean }> {
    const list = (await jsonRequest(server, 'GET', '/v1/api_keys', server.adminKey)).body as { data: (WireKey & { all_workspaces: boolean })[] };
    const op = list.data.find((k) => k.all_workspaces);
    expect(op).toBeDefined();
    return op!;
  }

  it('a plain admin neither lists, retrieves nor revokes the operator key: 404, and the operator key keeps working', async () => {
    const op = await operatorKey();
    const listed = (await jsonRequest(server, 'GET', '/v1/api_keys', keys.w1.admin)).body as { data: WireKey[] };
    expect(listed.data.length).toBeGreaterThan(0);
    expect(listed.data.map((k) => k.id)).not.toContain(op.id);
    expectRawError(await jsonRequest(server, 'GET', `/v1/api_keys/${op.id}`, keys.w1.admin), 404, 'not_found_error');
    expectRawError(await jsonRequest(server, 'POST', `/v1/api_keys/${op.id}/revoke`, keys.w1.admin), 404, 'not_found_error');
    // Below admin it is just as invisible: 404 before any role check.
    for (const role of ['read_write', 'read_only'] as Role[]) {
      expectRawError(await jsonRequest(server, 'GET', `/v1/api_keys/${op.id}`, keys.w1[role]), 404, 'not_found_error');
      expectRawError(await jsonRequest(server, 'POST', `/v1/api_keys/${op.id}/revoke`, keys.w1[role]), 404, 'not_found_error');
    }
    expect(((await jsonRequest(server, 'GET', `/v1/api_keys/${op.id}`, server.adminKey)).body as WireKey).revoked_at).toBeNull();
    expect((await jsonRequest(server, 'GET', '/v1/api_keys', server.adminKey)).status).toBe(200);
  });

  it("a non-admin key asking for another workspace's key gets 404, and 403 only for a key of its own workspace", async () => {
    const elsewhere = await mintKey(server, 'read_only', { headers: { 'anthropic-workspace-id': ws2 } });
    const own = await mintKey(server, 'read_only');
    for (const role of ['read_write', 'read_only'] as Role[]) {
      expectRawError(await jsonRequest(server, 'GET', `/v1/api_keys/${elsewhere.id}`, keys.w1[role]), 404, 'not_found_error');
      expectRawError(await jsonRequest(server, 'POST', `/v1/api_keys/${elsewhere.id}/revoke`, keys.w1[role]), 404, 'not_found_error');
      expectRawError(await jsonRequest(server, 'GET', `/v1/api_keys/apikey_doesnotexist`, keys.w1[role]), 404, 'not_found_error');
      expectRawError(await jsonRequest(server, 'GET', `/v1/api_keys/${own.id}`, keys.w1[role]), 403, 'permission_error');
    }
    expect(((await jsonRequest(server, 'GET', `/v1/api_keys/${elsewhere.id}`, server.adminKey, undefined, { 'anthropic-workspace-id': ws2 })).body as WireKey).revoked_at).toBeNull();
  });
});

describe('store grants', () => {
  it('a key limited to some stores sees only those: others are 404, lists are filtered, new stores are 403', async () => {
    const a = await seed(operator, 'granted');
    const b = await seed(operator, 'not granted');
    const key = await mintKey(server, 'read_write', { body: { memory_store_ids: [a.store] } });
    expect(key.memory_store_ids).toEqual([a.store]);
    const c = sdkClient(server.url, key.secret);
    expect((await collect(c.beta.memoryStores.list())).map((s) => s.id)).toEqual([a.store]);
    for (const [name, , call] of routes(c, b)) {
      await expectApiError(call(), 404, 'not_found_error').catch((e: Error) => {
        throw new Error(`${name}: ${e.message}`);
      });
    }
    await expectApiError(c.beta.memoryStores.create({ name: 'new' }), 403, 'permission_error');
    expectRawError(await jsonRequest(server, 'POST', '/v1/sessions', key.secret, { resources: [{ type: 'memory_store', memory_store_id: b.store }] }), 404, 'not_found_error');
    await expect(c.beta.memoryStores.memories.create(a.store, { path: '/mine.md', content: 'ok' })).resolves.toMatchObject({ path: '/mine.md' });
  });

  it('a key cannot be granted a store of another workspace', async () => {
    const other = await sdkClient(server.url, keys.w2.admin).beta.memoryStores.create({ name: 'theirs' });
    expectRawError(await jsonRequest(server, 'POST', '/v1/api_keys', keys.w1.admin, { name: 'x', role: 'read_only', memory_store_ids: [other.id] }), 404, 'not_found_error');
  });
});

describe('anthropic-workspace-id', () => {
  it('selects the workspace for an operator key, and must match for any other key', async () => {
    const inTwo = await sdkClient(server.url, keys.w2.admin).beta.memoryStores.create({ name: 'selected' });
    const selected = sdkClient(server.url, server.adminKey);
    await expectApiError(selected.beta.memoryStores.retrieve(inTwo.id), 404, 'not_found_error');
    const viaHeader = await selected.beta.memoryStores.retrieve(inTwo.id, {}, { headers: { 'anthropic-workspace-id': ws2 } });
    expect(viaHeader.id).toBe(inTwo.id);

    const own = await sdkClient(server.url, keys.w2.read_only).beta.memoryStores.retrieve(inTwo.id, {}, { headers: { 'anthropic-workspace-id': ws2 } });
    expect(own.id).toBe(inTwo.id);
    const w1ws = ((await jsonRequest(server, 'GET', '/v1/workspaces', server.adminKey)).body as { data: { id: string }[] }).data[0]!.id;
    await expectApiError(
      sdkClient(server.url, keys.w2.admin).beta.memoryStores.list({}, { headers: { 'anthropic-workspace-id': w1ws } }),
      403,
      'permission_error',
    );
    await expectApiError(selected.beta.memoryStores.list({}, { headers: { 'anthropic-workspace-id': 'wrkspc_nope' } }), 404, 'not_found_error');
  });
});
