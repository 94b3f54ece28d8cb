/**
 * Session mounts honour keys: a read_only key mounts read-only and cannot open a read_write mount;
 * session creates and ends take an Idempotency-Key, and 20 concurrent retries mount once. Through
 * the real server, with the mounts driven by bash children. (issue 4)
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sh as shIn } from '../helpers/mount.js';
import { createWorkspace, expectRawError, jsonRequest, mintKey, rawRequest, sdkClient } from '../helpers/sdk.js';
import { startServer, type RunningServer } from '../helpers/server.js';

const fuseAvailable = existsSync('/dev/fuse');

interface WireSession {
  id: string;
  status: string;
  resources: { host_path: string; access: string; memory_store_id: string }[];
}

/** bash -c in a child process (never in this process); resolves with its exit code and output. */
const sh = (script: string) => shIn(script, '/');

const fuseMounts = () =>
  readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .map((l) => l.split(' '))
    .filter((f) => f[2]?.startsWith('fuse'))
    .map((f) => f[1]!);

describe.skipIf(!fuseAvailable)('session mounts and keys', () => {
  let server: RunningServer;
  let readOnlyKey: string;

  beforeAll(async () => {
    server = await startServer();
    readOnlyKey = (await mintKey(server, 'read_only', { body: { name: 'viewer' } })).secret;
  });
  afterAll(async () => {
    await server?.stop();
  });

  const post = (apiKey: string, body: unknown, headers: Record<string, string> = {}) => jsonRequest(server, 'POST', '/v1/sessions', apiKey, body, headers);
  const end = (apiKey: string, id: string, headers: Record<string, string> = {}) =>
    rawRequest(server.url, 'DELETE', `/v1/sessions/${id}`, { apiKey, headers });

  it('a read_only key mounts read-only: reads work, writes fail with EROFS, and it can end that session', async () => {
    const client = sdkClient(server.url, server.adminKey);
    const store = await client.beta.memoryStores.create({ name: 'viewer store' });
    await client.beta.memoryStores.memories.create(store.id, { path: '/fact.md', content: 'known\n' });
    const refused = await post(readOnlyKey, { resources: [{ type: 'memory_store', memory_store_id: store.id }] });
    expectRawError(refused, 403, 'permission_error');
    const res = await post(readOnlyKey, { resources: [{ type: 'memory_store', memory_store_id: store.id, access: 'read_only' }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const s = res.body as WireSession;
    const dir = s.resources[0]!.host_path;
    expect((await sh(`cat '${dir}/fact.md'`)).stdout).toBe('known\n');
    const write = await sh(`echo x > '${dir}/new.md'`);
    expect(write.stderr).toMatch(/Read-only file system/);
    expect((await end(readOnlyKey, s.id)).status).toBe(200);
    expect(fuseMounts()).not.toContain(dir);
  });

  it("a read_only key cannot end a read_write session (403), and the mount stays", async () => {
    const client = sdkClient(server.url, server.adminKey);
    const store = await client.beta.memoryStores.create({ name: 'writer store' });
    const s = (await post(server.adminKey, { resources: [{ type: 'memory_store', memory_store_id: store.id }] })).body as WireSession;
    expectRawError(await end(readOnlyKey, s.id), 403, 'permission_error');
    expect(fuseMounts()).toContain(s.resources[0]!.host_path);
    expect((await end(server.adminKey, s.id)).status).toBe(200);
  });

  it("another workspace's session is 404 to every role, and absent from its lists", async () => {
    const client = sdkClient(server.url, server.adminKey);
    const store = await client.beta.memoryStores.create({ name: 'isolated session' });
    // Read-write, so a read_only key of the other workspace would get 403 if the role came first (issue 11).
    const s = (await post(server.adminKey, { resources: [{ type: 'memory_store', memory_store_id: store.id, access: 'read_write' }] })).body as WireSession;
    const wsId = (await createWorkspace(server, 'elsewhere')).id;
    for (const role of ['admin', 'read_write', 'read_only']) {
      const { secret } = await mintKey(server, role, { headers: { 'anthropic-workspace-id': wsId }, body: { name: role } });
      expectRawError(await rawRequest(server.url, 'GET', `/v1/sessions/${s.id}`, { apiKey: secret }), 404, 'not_found_error');
      expectRawError(await end(secret, s.id), 404, 'not_found_error');
      const list = (await rawRequest(server.url, 'GET', '/v1/sessions?limit=100', { apiKey: secret })).body as { data: WireSession[] };
      expect(list.data.map((x) => x.id)).not.toContain(s.id);
    }
    expect(fuseMounts()).toContain(s.resources[0]!.host_path);
    expect((await end(server.adminKey, s.id)).status).toBe(200);
  });

  it('20 concurrent session creates with one Idempotency-Key make one session and one mount; ends replay', async () => {
    const client = sdkClient(server.url, server.adminKey);
    const store = await client.beta.memoryStores.create({ name: 'idempotent session' });
    const key = randomUUID();
    const body = { resources: [{ type: 'memory_store', memory_store_id: store.id }] };
    const results = await Promise.all(Array.from({ length: 20 }, () => post(server.adminKey, body, { 'idempotency-key': key })));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const ids = new Set(results.map((r) => (r.body as WireSession).id));
    expect(ids.size).toBe(1);
    const s = results[0]!.body as WireSession;
    const list = (await rawRequest(server.url, 'GET', '/v1/sessions?limit=100', { apiKey: server.adminKey })).body as { data: WireSession[] };
    expect(list.data.filter((x) => x.resources.some((r) => r.memory_store_id === store.id))).toHaveLength(1);
    expect(fuseMounts().filter((m) => m.endsWith('/idempotent-session'))).toHaveLength(1);

    const other = await post(server.adminKey, { resources: [{ type: 'memory_store', memory_store_id: store.id, access: 'read_only' }] }, { 'idempotency-key': key });
    expectRawError(other, 409, 'idempotency_conflict');

    const endKey = randomUUID();
    const first = await end(server.adminKey, s.id, { 'idempotency-key': endKey });
    const again = await end(server.adminKey, s.id, { 'idempotency-key': endKey });
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(fuseMounts()).not.toContain(s.resources[0]!.host_path);
  });
});
