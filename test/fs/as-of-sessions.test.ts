/**
 * Point-in-time sessions over the real server (issue 15, item 2): a resource's `as_of` mounts the
 * store as it was then, read-only (read_write with it is 400), reported on the resource and in the
 * system prompt, for archived stores too, and remounted the same way after a restart. The API
 * refuses memory paths under the reserved /.history/ prefix. A redaction made after a point-in-time
 * mount was read shows there as in a fresh mount for the same instant. Mounts driven by bash children.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, py, sh as shIn } from '../helpers/mount.js';
import { createDatabase, pgSkip } from '../helpers/postgres.js';
import { tmpDir } from '../helpers/tmp.js';
import { jsonRequest } from '../helpers/sdk.js';
import { makeTempDir, startServer, type RunningServer } from '../helpers/server.js';

const fuseAvailable = existsSync('/dev/fuse');
const sh = (script: string) => shIn(script, '/');

interface WireSession {
  id: string;
  resources: { host_path: string; access: string; as_of: string | null; mount_path: string }[];
  system_prompt: string;
}

const mountedPaths = () =>
  readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .map((l) => l.split(' '))
    .filter((f) => f[2]?.startsWith('fuse'))
    .map((f) => f[1]!);

function api(server: RunningServer) {
  return (method: string, path: string, body?: unknown) => jsonRequest(server, method, path, server.adminKey, body);
}

/** A store where /a.md was "old" up to the returned instant and "new" after it. */
async function storeWithTwoTimes(call: ReturnType<typeof api>): Promise<{ storeId: string; asOf: string }> {
  const store = (await call('POST', '/v1/memory_stores', { name: 'past' })).body as { id: string };
  const created = (await call('POST', `/v1/memory_stores/${store.id}/memories`, { path: '/a.md', content: 'old\n' })).body as { id: string; updated_at: string };
  const asOf = created.updated_at;
  // The next write must carry a later timestamp than asOf: wait out the millisecond (no assertion on time).
  while (Date.now() <= Date.parse(asOf)) await new Promise((r) => setTimeout(r, 2));
  expect((await call('POST', `/v1/memory_stores/${store.id}/memories/${created.id}`, { content: 'new\n' })).status).toBe(200);
  expect((await call('POST', `/v1/memory_stores/${store.id}/memories`, { path: '/b.md', content: 'later\n' })).status).toBe(200);
  return { storeId: store.id, asOf };
}

describe.skipIf(!fuseAvailable)('point-in-time sessions', () => {
  let server: RunningServer;
  let call: ReturnType<typeof api>;
  beforeAll(async () => {
    server = await startServer();
    call = api(server);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('a resource with as_of mounts the store as it was then, read-only, and reports as_of and a snapshot line in system_prompt', async () => {
    const { storeId, asOf } = await storeWithTwoTimes(call);
    const res = await call('POST', '/v1/sessions', { resources: [{ type: 'memory_store', memory_store_id: storeId, as_of: asOf }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const s = res.body as unknown as WireSession;
    const r = s.resources[0]!;
    expect(r).toMatchObject({ access: 'read_only', as_of: asOf });
    expect(s.system_prompt).toContain(`${r.mount_path} (read_only, a snapshot of the store as it was at ${asOf})`);
    expect((await sh(`cd '${r.host_path}' && ls && cat a.md`)).stdout).toBe('a.md\nold\n');
    expect((await sh(`echo x > '${r.host_path}/a.md'`)).stderr).toMatch(/Read-only file system/);
    expect((await sh(`cat '${r.host_path}/.history/a.md/v2'`)).stdout).toBe('new\n');
    expect((await call('GET', `/v1/sessions/${s.id}`)).body).toMatchObject({ resources: [{ as_of: asOf }] });
    expect((await call('DELETE', `/v1/sessions/${s.id}`)).status).toBe(200);
  });

  it('refuses read_write with as_of, a malformed as_of and one in the future (400); a live resource reports as_of null', async () => {
    const { storeId, asOf } = await storeWithTwoTimes(call);
    const rw = await call('POST', '/v1/sessions', { resources: [{ type: 'memory_store', memory_store_id: storeId, as_of: asOf, access: 'read_write' }] });
    expect(rw.status).toBe(400);
    const bad = await call('POST', '/v1/sessions', { resources: [{ type: 'memory_store', memory_store_id: storeId, as_of: 'last tuesday' }] });
    expect(bad.status).toBe(400);
    // The future is still being written: a snapshot of it would not stay true.
    const future = await call('POST', '/v1/sessions', { resources: [{ type: 'memory_store', memory_store_id: storeId, as_of: '2999-01-01T00:00:00Z' }] });
    expect(future.status).toBe(400);
    const live = await call('POST', '/v1/sessions', { resources: [{ type: 'memory_store', memory_store_id: storeId }] });
    const s = live.body as unknown as WireSession;
    expect(s.resources[0]).toMatchObject({ access: 'read_write', as_of: null });
    expect(s.system_prompt).not.toContain('snapshot of the store');
    expect((await call('DELETE', `/v1/sessions/${s.id}`)).status).toBe(200);
  });

  it('an archived store can be mounted as of an instant, though not live', async () => {
    const { storeId, asOf } = await storeWithTwoTimes(call);
    expect((await call('POST', `/v1/memory_stores/${storeId}/archive`)).status).toBe(200);
    expect((await call('POST', '/v1/sessions', { resources: [{ type: 'memory_store', memory_store_id: storeId, access: 'read_only' }] })).status).toBe(409);
    const res = await call('POST', '/v1/sessions', { resources: [{ type: 'memory_store', memory_store_id: storeId, as_of: asOf }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const s = res.body as unknown as WireSession;
    expect((await sh(`cat '${s.resources[0]!.host_path}/a.md'`)).stdout).toBe('old\n');
    expect((await call('DELETE', `/v1/sessions/${s.id}`)).status).toBe(200);
  });

  it('the API refuses memory paths under the reserved /.history/ prefix (400)', async () => {
    const store = (await call('POST', '/v1/memory_stores', { name: 'reserved' })).body as { id: string };
    const res = await call('POST', `/v1/memory_stores/${store.id}/memories`, { path: '/.history/a.md', content: 'x' });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toMatch(/reserved/);
    const m = (await call('POST', `/v1/memory_stores/${store.id}/memories`, { path: '/a.md', content: 'x' })).body as { id: string };
    expect((await call('POST', `/v1/memory_stores/${store.id}/memories/${m.id}`, { path: '/.history/b.md' })).status).toBe(400);
  });
});

/** Each file of the mount at `dir` as `ls` lists it, with its size and what `cat` makes of it. */
async function look(dir: string): Promise<string> {
  const r = await sh(`cd '${dir}' && for f in $(ls); do echo "$f $(stat -c %s "$f")"; cat "$f" 2>&1 | sed 's/^cat: //'; done`);
  return r.stdout + r.stderr;
}

describe.skipIf(!fuseAvailable)('point-in-time sessions after a redaction', () => {
  let server: RunningServer;
  let call: ReturnType<typeof api>;
  beforeAll(async () => {
    // The kernel keeps names and sizes for 30 s: a mount that shows the change within the tests'
    // 5 s can only have dropped them itself.
    server = await startServer({ env: { MNEMO_MOUNT_CACHE_SECONDS: '30' } });
    call = api(server);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('a mount read before a redaction then shows what a fresh mount for that instant shows: the unredacted path, size 0, EACCES', async () => {
    const store = (await call('POST', '/v1/memory_stores', { name: 'leaky' })).body as { id: string };
    const memories = `/v1/memory_stores/${store.id}/memories`;
    const c = (await call('POST', memories, { path: '/c.md', content: 'secret2\n' })).body as { id: string; memory_version_id: string };
    const p = (await call('POST', memories, { path: '/p2-QQSECRET.md', content: 'secret1\n' })).body as { id: string; memory_version_id: string; created_at: string };
    const asOf = p.created_at;
    while (Date.now() <= Date.parse(asOf)) await new Promise((r) => setTimeout(r, 2));
    expect((await call('POST', `${memories}/${p.id}`, { path: '/p2-clean.md' })).status).toBe(200);
    expect((await call('POST', `${memories}/${c.id}`, { content: 'rotated\n' })).status).toBe(200);
    const session = async () => {
      const res = await call('POST', '/v1/sessions', { resources: [{ type: 'memory_store', memory_store_id: store.id, as_of: asOf }] });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body as unknown as WireSession;
    };
    const before = await session();
    const dir = before.resources[0]!.host_path;
    expect(await look(dir)).toBe('c.md 8\nsecret2\np2-QQSECRET.md 8\nsecret1\n');

    // The path is redacted with the first version; the content alone with c.md's (its path stays).
    for (const v of [p.memory_version_id, c.memory_version_id]) {
      expect((await call('POST', `/v1/memory_stores/${store.id}/memory_versions/${v}/redact`)).status).toBe(200);
    }
    const fresh = await session();
    const shown = 'c.md 0\nc.md: Permission denied\np2-clean.md 0\np2-clean.md: Permission denied\n';
    expect(await look(fresh.resources[0]!.host_path)).toBe(shown);
    await eventually(async () => expect(await look(dir)).toBe(shown));
    expect((await sh(`stat -c %s '${dir}/c.md'; ls '${dir}/p2-QQSECRET.md'`)).stdout).toBe('0\n');
    for (const s of [before, fresh]) expect((await call('DELETE', `/v1/sessions/${s.id}`)).status).toBe(200);
  });
});

/**
 * Holds `file` open in a python child: reads it whole, then waits for `go` to exist and reads it
 * again through the same descriptor (pread at 0). Resolves, once the first read is done, to the
 * child's whole output (the two reads) as a promise.
 */
async function holdOpen(file: string, go: string): Promise<{ done: Promise<string> }> {
  const ready = `${go}.ready`;
  const script = [
    'import os, sys, time',
    'fd = os.open(sys.argv[1], os.O_RDONLY)',
    "print('first:', os.read(fd, 100), flush=True)",
    "open(sys.argv[2] + '.ready', 'w').close()",
    'while not os.path.exists(sys.argv[2]): time.sleep(0.02)',
    "print('again:', os.pread(fd, 100, 0), flush=True)",
  ].join('\n');
  const done = py(script, '/', [file, go]).then((r) => r.stdout + r.stderr);
  await eventually(async () => expect(existsSync(ready)).toBe(true));
  return { done };
}

const engines: [string, () => Promise<{ databaseUrl?: string; drop: () => Promise<void> }>][] = [
  ['SQLite', async () => ({ drop: async () => {} })],
  ...(pgSkip === null ? [['PostgreSQL', async () => {
    const db = await createDatabase();
    return { databaseUrl: db.url, drop: db.drop };
  }] as [string, () => Promise<{ databaseUrl?: string; drop: () => Promise<void> }>]] : []),
];

describe.skipIf(!fuseAvailable).each(engines)('point-in-time sessions with a file held open, on %s', (_engine, database) => {
  let server: RunningServer;
  let call: ReturnType<typeof api>;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await database();
    drop = db.drop;
    // 30 s kernel timeouts, as above: only the mount's own drop can show the change within 5 s.
    server = await startServer({ env: { MNEMO_MOUNT_CACHE_SECONDS: '30' }, ...(db.databaseUrl === undefined ? {} : { databaseUrl: db.databaseUrl }) });
    call = api(server);
  });
  afterAll(async () => {
    await server?.stop();
    await drop?.();
  });

  // Issue: /tmp/findings/redact.md #1 (a held-open snapshot file kept serving the redacted text to every new open).
  it('a redaction reaches new stats and opens of a file another process holds open: size 0 and EACCES at once, while the holder keeps its descriptor', async () => {
    const store = (await call('POST', '/v1/memory_stores', { name: 'held' })).body as { id: string };
    const memories = `/v1/memory_stores/${store.id}/memories`;
    const a = (await call('POST', memories, { path: '/a.md', content: 'secret ZEBRA\n' })).body as { id: string; memory_version_id: string; updated_at: string };
    const asOf = a.updated_at;
    while (Date.now() <= Date.parse(asOf)) await new Promise((r) => setTimeout(r, 2));
    expect((await call('POST', `${memories}/${a.id}`, { content: 'clean\n' })).status).toBe(200);
    const res = await call('POST', '/v1/sessions', { resources: [{ type: 'memory_store', memory_store_id: store.id, as_of: asOf }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const s = res.body as unknown as WireSession;
    const dir = s.resources[0]!.host_path;
    const go = join(tmpDir('mnemo-hold-'), 'go');
    const holder = await holdOpen(`${dir}/a.md`, go);
    expect((await sh(`stat -c %s '${dir}/a.md'; cat '${dir}/a.md'`)).stdout).toBe('13\nsecret ZEBRA\n');

    expect((await call('POST', `/v1/memory_stores/${store.id}/memory_versions/${a.memory_version_id}/redact`)).status).toBe(200);
    // This server's own redaction: the mount has dropped its answers before the redaction answers.
    const redacted = '0\ncat: a.md: Permission denied\n';
    const now = await sh(`cd '${dir}' && stat -c %s a.md; cat a.md`);
    expect(now.stdout + now.stderr).toBe(redacted);
    writeFileSync(go, '');
    // Its reads fail nothing: they end where the size the kernel now holds for the name (0) says.
    expect(await holder.done).toMatch(/^first: b'secret ZEBRA\\n'\nagain: b'(secret ZEBRA\\n)?'\n$/);
    const after = await sh(`cd '${dir}' && stat -c %s a.md; cat a.md`);
    expect(after.stdout + after.stderr).toBe(redacted);
    expect((await call('DELETE', `/v1/sessions/${s.id}`)).status).toBe(200);
  });
});

describe.skipIf(!fuseAvailable)('point-in-time sessions across a restart', () => {
  it('a restart remounts an as_of session the same way', async () => {
    const dataDir = makeTempDir('mnemo-asof-');
    let server = await startServer({ dataDir });
    try {
      const { storeId, asOf } = await storeWithTwoTimes(api(server));
      const s = (await api(server)('POST', '/v1/sessions', { resources: [{ type: 'memory_store', memory_store_id: storeId, as_of: asOf }] })).body as unknown as WireSession;
      const dir = s.resources[0]!.host_path;
      await server.stop();
      server = await startServer({ dataDir, env: { MNEMO_ADMIN_KEY: server.adminKey } });
      expect(mountedPaths()).toContain(dir);
      expect((await sh(`cat '${dir}/a.md'; ls '${dir}'`)).stdout).toBe('old\na.md\n');
      expect((await sh(`echo x > '${dir}/c.md'`)).stderr).toMatch(/Read-only file system/);
    } finally {
      await server.stop();
      await sh(`rm -rf '${dataDir}'`);
    }
  });
});

describe.skipIf(!fuseAvailable).each(engines)('point-in-time sessions and file times, on %s', (_engine, database) => {
  let server: RunningServer;
  let call: ReturnType<typeof api>;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await database();
    drop = db.drop;
    server = await startServer(db.databaseUrl === undefined ? {} : { databaseUrl: db.databaseUrl });
    call = api(server);
  });
  afterAll(async () => {
    await server?.stop();
    await drop?.();
  });

  const later = async (t: string) => {
    while (Date.now() <= Date.parse(t)) await new Promise((r) => setTimeout(r, 2));
  };
  // A file a mount made keeps the atime its first save carried (the draft's), which no version records: its atime is left out.
  const times = async (dir: string) => (await sh(`cd '${dir}' && stat -c '%n mtime=%y atime=%x ctime=%z' r2.md && stat -c '%n mtime=%y ctime=%z' m2.md`)).stdout;

  // Issue: /tmp/findings/timetravel.md #1 (an as_of mount dated a renamed file at its rename, the live mount at its content).
  it('an as_of mount shows a renamed file with the times the live mount showed then: mtime its content, atime its creation, ctime its rename', async () => {
    const store = (await call('POST', '/v1/memory_stores', { name: 'times' })).body as { id: string };
    const memories = `/v1/memory_stores/${store.id}/memories`;
    const made = (await call('POST', memories, { path: '/r1.md', content: 'hello\n' })).body as { id: string; created_at: string };
    await later(made.created_at);
    const edited = (await call('POST', `${memories}/${made.id}`, { content: 'hello again\n' })).body as { updated_at: string };
    await later(edited.updated_at);
    const moved = (await call('POST', `${memories}/${made.id}`, { path: '/r2.md' })).body as { updated_at: string };
    await later(moved.updated_at);
    const liveRes = await call('POST', '/v1/sessions', { resources: [{ type: 'memory_store', memory_store_id: store.id }] });
    expect(liveRes.status, JSON.stringify(liveRes.body)).toBe(200);
    const live = liveRes.body as unknown as WireSession;
    const liveDir = live.resources[0]!.host_path;
    expect((await sh(`cd '${liveDir}' && echo data > m1.md && sleep 0.05 && mv m1.md m2.md`)).stderr).toBe('');
    const asOf = new Date(Date.now() + 5).toISOString();
    await later(asOf);
    const pastRes = await call('POST', '/v1/sessions', { resources: [{ type: 'memory_store', memory_store_id: store.id, as_of: asOf }] });
    expect(pastRes.status, JSON.stringify(pastRes.body)).toBe(200);
    const past = pastRes.body as unknown as WireSession;

    const shown = await times(liveDir);
    expect(await times(past.resources[0]!.host_path)).toBe(shown);
    const r2 = await sh(`stat -c '%.3Y %.3X %.3Z' '${liveDir}/r2.md'`);
    const [mtime, atime, ctime] = r2.stdout.trim().split(' ').map((s) => Math.round(Number(s) * 1000));
    expect({ mtime, atime, ctime }).toEqual({ mtime: Date.parse(edited.updated_at), atime: Date.parse(made.created_at), ctime: Date.parse(moved.updated_at) });
    for (const s of [live, past]) expect((await call('DELETE', `/v1/sessions/${s.id}`)).status).toBe(200);
  });
});
