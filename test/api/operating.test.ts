/**
 * The operator's faces, through the real server: /healthz and /readyz without a key (readiness
 * follows the database and every active session's mount), and /metrics in Prometheus text with
 * requests by route template, saves and versions by face (api, mount, mcp), session and mount
 * gauges, commit and search latency; operator-only unless MNEMO_METRICS_PUBLIC=1.
 */
import { describe, expect, it } from 'vitest';
import { connectMcp } from '../helpers/mcp.js';
import { FUSE_AVAILABLE, NO_FUSE_REASON, eventually, outcomes, run, sh } from '../helpers/mount.js';
import { jsonRequest, mintKey, mountedStore, rawRequest, type RawResponse, useServer } from '../helpers/sdk.js';
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir, runCli, startServer, type RunningServer } from '../helpers/server.js';
import { holdWriteLock } from '../helpers/write-lock.js';

interface WireSession {
  id: string;
  resources: { host_path: string }[];
}

async function metricsText(server: RunningServer, apiKey: string | null): Promise<{ status: number; type: string | null; text: string }> {
  const res = await fetch(`${server.url}/metrics`, { headers: apiKey ? { 'x-api-key': apiKey } : {} });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

/** The value of one series line, e.g. sample(text, 'mnemo_saves_total{face="api"}'); undefined if absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const post = (server: RunningServer, path: string, body: unknown, apiKey = server.adminKey): Promise<RawResponse> => jsonRequest(server, 'POST', path, apiKey, body);

describe('health and readiness', () => {
  let server: RunningServer;
  useServer((s) => {
    server = s;
  });

  it('answers GET /healthz with 200 {"status":"ok"} without a key, and /health as before', async () => {
    const healthz = await rawRequest(server.url, 'GET', '/healthz');
    expect([healthz.status, healthz.body]).toEqual([200, { status: 'ok' }]);
    const health = await rawRequest(server.url, 'GET', '/health');
    expect([health.status, health.body]).toEqual([200, { status: 'ok' }]);
  });

  it('answers GET /readyz with 200 without a key when the database answers and no session needs a mount', async () => {
    const res = await rawRequest(server.url, 'GET', '/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ready', checks: { database: 'ok', mounts: 'ok' }, active_sessions: 0 });
  });

  // Item 15: an operator's sqlite3 shell (or any other process) holding the write lock past the 5 s busy timeout.
  it('answers a write 503 api_error with Retry-After, logged as a warning without a stack, while another process holds the database\'s write lock, and takes it once the lock is gone', async () => {
    const store = (await post(server, '/v1/memory_stores', { name: 'locked' })).body as { id: string };
    const other = new Database(join(server.dataDir, 'mnemo.db'));
    try {
      other.exec('BEGIN IMMEDIATE');
      const res = await post(server, `/v1/memory_stores/${store.id}/memories`, { path: '/busy.md', content: 'b' });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('2');
      expect(res.body).toMatchObject({ error: { type: 'api_error', message: expect.stringContaining('the database is locked by another process') } });
      const line = server.stderr().split('\n').find((l) => l.includes('database is locked'))!;
      expect(line).toContain('"level":"warn"');
      expect(line).not.toContain(' at ');
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
    }
    expect((await post(server, `/v1/memory_stores/${store.id}/memories`, { path: '/busy.md', content: 'b' })).status).toBe(200);
  });

  // SQLITE_BUSY reached a mount's operation as EIO and an MCP tool call as an internal error.
  it.skipIf(!FUSE_AVAILABLE)('a mount\'s write fails with EBUSY and an MCP write with a retryable database_locked error while another process holds the write lock, and both work once it is gone', async () => {
    const { storeId, mnt } = await mountedStore(server, 'locked-faces');
    expect((await sh('printf one > f.md', mnt)).code).toBe(0);
    const mcp = await connectMcp('http', server, server.adminKey);
    const holder = await holdWriteLock(join(server.dataDir, 'mnemo.db'));
    try {
      // Each write waits up to 5 s for the lock (on a timer), queued behind the server's own background
      // writes (search upkeep) that wait too, so this may wait for more than one: not `outcomes`' 20 s.
      const unlink = await run('python3', ['-c', "import errno, os\ntry:\n    os.unlink('f.md')\n    print('ok')\nexcept OSError as e:\n    print(errno.errorcode[e.errno])"], { cwd: mnt, timeoutMs: 90_000 });
      expect(unlink.stdout.trim()).toBe('EBUSY');
      const tool = await mcp.call('memory_write', { memory_store_id: storeId, path: '/m.md', content: 'm' });
      expect(tool.isError).toBe(true);
      expect(tool.text).toMatch(/^Error database_locked: the database is locked by another process/);
      expect(tool.text).toContain('retry in a few seconds');
    } finally {
      holder.kill();
      await holder.gone;
    }
    expect(await outcomes(mnt, [['unlink', "os.unlink('f.md')"]])).toEqual({ unlink: 'ok' });
    expect((await mcp.call('memory_write', { memory_store_id: storeId, path: '/m.md', content: 'm' })).isError).toBe(false);
    await mcp.close();
  }, 150_000);

  // The serving thread waited inside SQLite (busy_timeout 5 s) for every write that met the lock, and mount operations queued behind it for 20 s.
  it.skipIf(!FUSE_AVAILABLE)('while another process holds the write lock, an API write waits for it without holding the server: a stat through a mount and HTTP GETs answer meanwhile, and the write, then a mount save queued behind it, land once the lock goes', async () => {
    const { storeId, mnt } = await mountedStore(server, 'lock-wait');
    expect((await sh('printf seen > seen.md', mnt)).code).toBe(0);
    const gauge = async (name: string) => sample((await metricsText(server, server.adminKey)).text, name);
    // The search upkeep has indexed the save: no background write of the server's own meets the lock.
    await eventually(async () => expect(await gauge('mnemo_search_backlog')).toBe(0));
    const holder = await holdWriteLock(join(server.dataDir, 'mnemo.db'));
    try {
      let answered = false;
      const write = post(server, `/v1/memory_stores/${storeId}/memories`, { path: '/landed.md', content: 'landed' }).finally(() => (answered = true));
      // The write has met the lock and waits (the metrics request is answered meanwhile too).
      await eventually(async () => expect(await gauge('mnemo_sqlite_lock_waits')).toBe(1));
      const stat = await run('python3', ['-c', "import os\nprint(os.stat('seen.md').st_size, os.path.exists('missing.md'))"], { cwd: mnt });
      expect(stat.stdout.trim()).toBe('4 False');
      const store = await rawRequest(server.url, 'GET', `/v1/memory_stores/${storeId}`, { apiKey: server.adminKey });
      expect(store.status).toBe(200);
      const listed = await rawRequest(server.url, 'GET', `/v1/memory_stores/${storeId}/memories`, { apiKey: server.adminKey });
      expect((listed.body as { data: { path: string }[] }).data.map((m) => m.path)).toEqual(['/seen.md']);
      // A mount save closed now queues behind the API write: its close() returns once the lock goes.
      const saver = spawn('python3', ['-c', "f = open('saved.md', 'w')\nf.write('saved')\nprint('closing', flush=True)\nf.close()\nprint('closed', flush=True)"], { cwd: mnt, stdio: ['ignore', 'pipe', 'inherit'] });
      let saverOut = '';
      const saved = new Promise<number | null>((resolve) => saver.once('exit', resolve));
      await new Promise<void>((resolve) => saver.stdout.on('data', (b: Buffer) => ((saverOut += b.toString()).includes('closing') ? resolve() : undefined)));
      expect((await rawRequest(server.url, 'GET', `/v1/memory_stores/${storeId}`, { apiKey: server.adminKey })).status).toBe(200);
      expect(answered).toBe(false);
      expect(saverOut).not.toContain('closed');
      expect(await gauge('mnemo_sqlite_lock_waits')).toBe(1);
      await holder.release();
      const res = await write;
      expect(res.status).toBe(200);
      expect(await saved).toBe(0);
      expect(saverOut).toContain('closed');
      expect(await gauge('mnemo_sqlite_lock_waits')).toBe(0);
    } finally {
      holder.kill();
      await holder.gone;
    }
    const versions = await rawRequest(server.url, 'GET', `/v1/memory_stores/${storeId}/memory_versions`, { apiKey: server.adminKey });
    expect((versions.body as { data: { path: string }[] }).data.map((v) => v.path)).toEqual(['/saved.md', '/landed.md', '/seen.md']);
    expect((await sh('cat landed.md saved.md', mnt)).stdout).toBe('landedsaved');
  });

  it.skipIf(!FUSE_AVAILABLE)('a write lock held past the 5 s wait refuses an API write with 503 and Retry-After and a mount save with EBUSY, and neither leaves anything behind', async () => {
    const { storeId, mnt } = await mountedStore(server, 'lock-past');
    expect((await sh('printf old > kept.md', mnt)).code).toBe(0);
    const before = await rawRequest(server.url, 'GET', `/v1/memory_stores/${storeId}/memory_versions`, { apiKey: server.adminKey });
    const holder = await holdWriteLock(join(server.dataDir, 'mnemo.db'));
    try {
      const [api, save] = await Promise.all([
        post(server, `/v1/memory_stores/${storeId}/memories`, { path: '/refused.md', content: 'no' }),
        run('python3', ['-c', "import errno\ntry:\n    with open('kept.md', 'w') as f:\n        f.write('new')\n    print('ok')\nexcept OSError as e:\n    print(errno.errorcode[e.errno])"], { cwd: mnt, timeoutMs: 60_000 }),
      ]);
      expect(api.status).toBe(503);
      expect(api.headers.get('retry-after')).toBe('2');
      expect(api.body).toMatchObject({ error: { type: 'api_error', message: expect.stringContaining('nothing was written') } });
      expect(save.stdout.trim()).toBe('EBUSY');
    } finally {
      await holder.release();
    }
    const after = await rawRequest(server.url, 'GET', `/v1/memory_stores/${storeId}/memory_versions`, { apiKey: server.adminKey });
    expect(after.body).toEqual(before.body);
    expect((await rawRequest(server.url, 'GET', `/v1/memory_stores/${storeId}/memories`, { apiKey: server.adminKey, headers: {} })).body).toMatchObject({ data: [{ path: '/kept.md' }] });
    expect((await sh('cat kept.md', mnt)).stdout).toBe('old');
    expect((await post(server, `/v1/memory_stores/${storeId}/memories`, { path: '/refused.md', content: 'yes' })).status).toBe(200);
  }, 60_000);

  it.skipIf(!FUSE_AVAILABLE)('answers GET /readyz with 503 counting the missing mount, without naming it, once an active session is no longer mounted', async () => {
    // Counted from what the tests before left mounted (the EBUSY one keeps its session).
    const before = (await rawRequest(server.url, 'GET', '/readyz')).body as { active_sessions: number; mounts: number };
    const store = (await post(server, '/v1/memory_stores', { name: 'ready' })).body as { id: string };
    const session = (await post(server, '/v1/sessions', { resources: [{ type: 'memory_store', memory_store_id: store.id }] })).body as WireSession;
    const hostPath = session.resources[0]!.host_path;
    const ready = await rawRequest(server.url, 'GET', '/readyz');
    expect([ready.status, ready.body]).toMatchObject([200, { status: 'ready', active_sessions: before.active_sessions + 1, mounts: before.mounts + 1 }]);

    // Someone unmounts it behind the server's back (from a child process, never this one).
    expect((await run('fusermount', ['-uz', hostPath])).code).toBe(0);
    const notReady = await rawRequest(server.url, 'GET', '/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.body).toMatchObject({ status: 'not_ready', checks: { database: 'ok', mounts: expect.stringMatching(/^1 of /) } });
    // Unauthenticated: it never names a session's host path.
    expect(JSON.stringify(notReady.body)).not.toContain(session.id);

    expect((await rawRequest(server.url, 'DELETE', `/v1/sessions/${session.id}`, { apiKey: server.adminKey })).status).toBe(200);
    expect((await rawRequest(server.url, 'GET', '/readyz')).status).toBe(200);
  });
});

// Item 5: the trace write threw from the signal handler and from the unmount, and took the server down.
describe.skipIf(!FUSE_AVAILABLE)('MNEMO_FUSE_TRACE', () => {
  it('a trace file that cannot be written any more is a warning on SIGUSR2 and at a session end, and the server goes on', async () => {
    const traceDir = makeTempDir('mnemo-trace-');
    const server = await startServer({ env: { MNEMO_FUSE_TRACE: join(traceDir, 'trace.json') } });
    try {
      const store = (await post(server, '/v1/memory_stores', { name: 'traced' })).body as { id: string };
      const session = (await post(server, '/v1/sessions', { resources: [{ type: 'memory_store', memory_store_id: store.id }] })).body as WireSession;
      rmSync(traceDir, { recursive: true, force: true });
      process.kill(server.pid, 'SIGUSR2');
      await eventually(async () => expect(server.stderr()).toContain('could not write the FUSE trace'));
      expect((await rawRequest(server.url, 'DELETE', `/v1/sessions/${session.id}`, { apiKey: server.adminKey })).status).toBe(200);
      expect(server.exit()).toBeNull();
      expect((await rawRequest(server.url, 'GET', '/healthz')).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});

if (!FUSE_AVAILABLE) console.warn(NO_FUSE_REASON);

describe('GET /metrics', () => {
  let server: RunningServer;
  useServer((s) => {
    server = s;
  });

  it('needs an operator key: 401 without a key, 403 for an admin key of one workspace', async () => {
    expect((await metricsText(server, null)).status).toBe(401);
    expect((await metricsText(server, 'mnemo-not-a-key')).status).toBe(401);
    const minted = await mintKey(server, 'admin', { body: { name: 'plain admin' } });
    const plain = await metricsText(server, minted.secret);
    expect(plain.status).toBe(403);
    expect(JSON.parse(plain.text)).toMatchObject({ type: 'error', error: { type: 'permission_error' } });
  });

  it('reports requests by route template, saves and versions by face, sessions, mounts, commit and search latency', async () => {
    const store = (await post(server, '/v1/memory_stores', { name: 'metered' })).body as { id: string };
    expect((await post(server, `/v1/memory_stores/${store.id}/memories`, { path: '/api.md', content: 'from the api' })).status).toBe(200);
    const search = await rawRequest(server.url, 'GET', `/v1/memory_stores/${store.id}/search?q=api`, { apiKey: server.adminKey });
    expect(search.status).toBe(200);

    const mcp = await connectMcp('http', server, server.adminKey);
    try {
      const wrote = await mcp.call('memory_write', { memory_store_id: store.id, path: '/mcp.md', content: 'from mcp' });
      expect(wrote.isError, wrote.text).toBe(false);
    } finally {
      await mcp.close();
    }

    let dir = '';
    if (FUSE_AVAILABLE) {
      const session = (await post(server, '/v1/sessions', { resources: [{ type: 'memory_store', memory_store_id: store.id }] })).body as WireSession;
      dir = session.resources[0]!.host_path;
      expect((await sh(`echo 'from the mount' > '${dir}/mount.md'`, '/')).code).toBe(0);
    }

    const { status, type, text } = await eventually(async () => {
      const m = await metricsText(server, server.adminKey);
      if (FUSE_AVAILABLE && !(sample(m.text, 'mnemo_saves_total{face="mount"}')! >= 1)) throw new Error('the mount save is not counted yet');
      return m;
    });
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/);

    const route = '/v1/memory_stores/:store/memories';
    expect(sample(text, `mnemo_http_requests_total{method="POST",route="${route}",status="200"}`)).toBeGreaterThanOrEqual(1);
    expect(sample(text, `mnemo_http_request_duration_seconds_count{method="POST",route="${route}",status="200"}`)).toBeGreaterThanOrEqual(1);
    expect(sample(text, `mnemo_http_requests_total{method="GET",route="/metrics",status="401"}`)).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'mnemo_http_requests_total{method="POST",route="/mcp",status="200"}')).toBeGreaterThanOrEqual(1);
    // Route templates only: no store id (or any other raw URL part) becomes a label.
    expect(text).not.toContain(store.id);

    expect(sample(text, 'mnemo_saves_total{face="api"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'mnemo_versions_total{face="api"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'mnemo_saves_total{face="mcp"}')).toBe(1);
    expect(sample(text, 'mnemo_versions_total{face="mcp"}')).toBe(1);
    if (FUSE_AVAILABLE) {
      expect(sample(text, 'mnemo_versions_total{face="mount"}')).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'mnemo_active_sessions')).toBe(1);
      expect(sample(text, 'mnemo_mounts')).toBe(1);
      // Stats reach the mount once the kernel's 1 s cache lapses; once the mount keeps the file's
      // stat, the binding answers the next ones on its own threads, and says how many it did.
      await eventually(async () => {
        await sh(`stat '${dir}/mount.md' > /dev/null`, '/');
        const m = await metricsText(server, server.adminKey);
        if (sample(m.text, 'mnemo_mount_stats_answered_by_binding_total')! >= 1) return;
        await new Promise((r) => setTimeout(r, 400));
        throw new Error('no stat answered by the binding yet');
      }, 15_000);
    }
    expect(text).toContain('# TYPE mnemo_mount_stats_answered_by_binding_total counter');
    expect(sample(text, 'mnemo_commit_duration_seconds_count')).toBeGreaterThanOrEqual(3);
    expect(sample(text, 'mnemo_commit_duration_seconds_sum')).toBeGreaterThan(0);
    expect(sample(text, 'mnemo_search_duration_seconds_count')).toBe(1);
    expect(text).toContain('# TYPE mnemo_commit_duration_seconds histogram');
    // The serving thread's delay since the last scrape: a number of seconds, p99 never above max.
    const p99 = sample(text, 'mnemo_event_loop_delay_seconds{stat="p99"}')!;
    expect(p99).toBeGreaterThanOrEqual(0);
    expect(p99).toBeLessThanOrEqual(sample(text, 'mnemo_event_loop_delay_seconds{stat="max"}')!);
  });
});

describe('GET /metrics: the search backlog', () => {
  let server: RunningServer;
  useServer((s) => {
    server = s;
  });

  it('mnemo_search_backlog counts writes the upkeep has not indexed during a burst, and falls to 0 after it', async () => {
    const store = (await post(server, '/v1/memory_stores', { name: 'backlog' })).body as { id: string };
    const backlog = async () => sample((await metricsText(server, server.adminKey)).text, 'mnemo_search_backlog');
    expect(await backlog()).toBe(0);
    // The upkeep waits while writes keep coming (up to 5 s): a scrape between them sees the queue.
    let seen = 0;
    for (let i = 0; i < 30; i++) {
      expect((await post(server, `/v1/memory_stores/${store.id}/memories`, { path: `/m${i}.md`, content: `note ${i}` })).status).toBe(200);
      seen = Math.max(seen, (await backlog())!);
    }
    expect(seen).toBeGreaterThan(0);
    expect(await eventually(async () => {
      const n = await backlog();
      if (n !== 0) throw new Error(`${n} still queued`);
      return n;
    }, 15_000)).toBe(0);
    // Indexed for real: a search finds the burst's last write.
    const found = await rawRequest(server.url, 'GET', `/v1/memory_stores/${store.id}/search?q=29`, { apiKey: server.adminKey });
    expect(found.status).toBe(200);
    expect(JSON.stringify(found.body)).toContain('/m29.md');
  });

  it('a deleted store is gone at once, and the upkeep then removes its rows from the database file', async () => {
    const store = (await post(server, '/v1/memory_stores', { name: 'doomed' })).body as { id: string };
    for (let i = 0; i < 30; i++) expect((await post(server, `/v1/memory_stores/${store.id}/memories`, { path: `/m${i}.md`, content: `tern ${i}` })).status).toBe(200);
    const db = new Database(join(server.dataDir, 'mnemo.db'), { readonly: true });
    try {
      const rows = () => db.prepare('SELECT (SELECT count(*) FROM stores WHERE id = ?) + (SELECT count(*) FROM versions WHERE store_id = ?)').pluck().get(store.id, store.id) as number;
      expect(rows()).toBe(31);
      expect((await rawRequest(server.url, 'DELETE', `/v1/memory_stores/${store.id}`, { apiKey: server.adminKey })).status).toBe(200);
      expect((await rawRequest(server.url, 'GET', `/v1/memory_stores/${store.id}`, { apiKey: server.adminKey })).status).toBe(404);
      expect(await eventually(async () => {
        const n = rows();
        if (n !== 0) throw new Error(`${n} rows left`);
        return n;
      }, 15_000)).toBe(0);
    } finally {
      db.close();
    }
  });
});

describe('GET /metrics with MNEMO_METRICS_PUBLIC=1', () => {
  let server: RunningServer;
  useServer((s) => {
    server = s;
  }, { env: { MNEMO_METRICS_PUBLIC: '1' } });

  it('refuses to start when MNEMO_METRICS_PUBLIC is neither 1 nor 0', async () => {
    const dir = makeTempDir();
    try {
      const r = await runCli(['serve', '--port', '0', '--data-dir', dir], { MNEMO_METRICS_PUBLIC: 'yes' });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('invalid MNEMO_METRICS_PUBLIC: yes');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('serves the metrics without a key', async () => {
    const { status, text } = await metricsText(server, null);
    expect(status).toBe(200);
    expect(text).toContain('# TYPE mnemo_http_requests_total counter');
  });
});
