/**
 * PostgreSQL stops under a running server and comes back (issue 14, failure): meanwhile the API
 * answers 503 api_error "database unavailable", /healthz stays 200 and /readyz says the database
 * is down, and a session's mount keeps answering what it holds and gives EIO for what needs the
 * database; once PostgreSQL is back, both work again without a restart, with everything written
 * before still there. A server started while PostgreSQL is down waits for it.
 *
 * Its own throwaway cluster (pg-cluster.ts), which it stops and starts: the run's shared cluster
 * serves the other files.
 */
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type Anthropic from '@anthropic-ai/sdk';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterUnavailable, startCluster, type Cluster } from '../helpers/pg-cluster.js';
import { withDatabase } from '../helpers/postgres.js';
import { isMounted, outcomes, py, run, sh } from '../helpers/mount.js';
import { expectApiError, rawRequest, sdkClient } from '../helpers/sdk.js';
import { MAIN_JS, makeTempDir, runCli, startServer, type RunningServer } from '../helpers/server.js';

const noFuse = existsSync('/dev/fuse') ? null : 'no /dev/fuse';
const skip = noFuse ?? clusterUnavailable();
// CI has both (.ci/run runs as root with postgresql and fuse3 installed): there it must not skip.
if (skip !== null && process.env['CI']) throw new Error(`the PostgreSQL outage test cannot run in CI: ${skip}`);

/** A database like the ones the README asks for (UTF-8 LC_CTYPE) on the cluster. */
async function makeDatabase(cluster: Cluster): Promise<string> {
  const c = new pg.Client({ connectionString: cluster.url });
  await c.connect();
  try {
    await c.query(`CREATE DATABASE mnemo TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C.utf8'`);
  } finally {
    await c.end();
  }
  return withDatabase(cluster.url, 'mnemo');
}

describe.skipIf(skip !== null)(`PostgreSQL stopped under a running server${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let cluster: Cluster;
  let server: RunningServer;
  let client: Anthropic;
  let storeId: string;
  let sessionId: string;
  let dir: string;

  beforeAll(async () => {
    cluster = await startCluster();
    server = await startServer({ databaseUrl: await makeDatabase(cluster) });
    client = sdkClient(server.url, server.adminKey);
    const store = await client.beta.memoryStores.create({ name: 'outage' });
    storeId = store.id;
    await client.beta.memoryStores.memories.create(storeId, { path: '/notes/a.md', content: 'first\n' });
    await client.beta.memoryStores.memories.create(storeId, { path: '/deep/x.md', content: 'deep\n' });
    const res = await rawRequest(server.url, 'POST', '/v1/sessions', {
      apiKey: server.adminKey,
      body: JSON.stringify({ resources: [{ type: 'memory_store', memory_store_id: storeId, access: 'read_write' }] }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const session = res.body as { id: string; resources: { host_path: string }[] };
    sessionId = session.id;
    dir = session.resources[0]!.host_path;
    // A save through the mount, then what the mount will hold: the root's listing, notes/ and the
    // content of notes/a.md (read last, so no later change drops them).
    const w = await sh('printf "mine\\n" > notes/b.md && ls -a . notes >/dev/null && cat notes/a.md', dir);
    expect(w.code, w.stderr).toBe(0);
    expect(w.stdout).toBe('first\n');
    cluster.stop('fast');
  });

  afterAll(async () => {
    await server?.stop();
    if (dir && isMounted(dir)) await run('fusermount3', ['-uz', dir]);
    cluster?.remove();
  });

  it('answers API calls with 503 api_error "database unavailable" while PostgreSQL is stopped, and keeps the process alive', async () => {
    const calls = [
      () => client.beta.memoryStores.retrieve(storeId),
      () => client.beta.memoryStores.memories.list(storeId),
      () => client.beta.memoryStores.memories.create(storeId, { path: '/during.md', content: 'lost?' }),
    ];
    for (const call of calls) {
      const error = await expectApiError(call(), 503, 'api_error');
      expect(error.message).toBe('database unavailable');
    }
    const raw = await rawRequest(server.url, 'GET', `/v1/memory_stores/${storeId}`, { apiKey: server.adminKey });
    expect(raw.status).toBe(503);
    expect(raw.headers.get('retry-after')).toBe('2');
    expect(process.kill(server.pid, 0)).toBe(true);
  });

  it('keeps /healthz at 200 and reports the database down on /readyz while PostgreSQL is stopped', async () => {
    const health = await rawRequest(server.url, 'GET', '/healthz');
    expect([health.status, health.body]).toEqual([200, { status: 'ok' }]);
    const ready = await rawRequest(server.url, 'GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ status: 'not_ready', checks: { database: 'database unavailable' } });
  });

  it('keeps a mount reading what it holds and answers EIO for what needs the database while PostgreSQL is stopped', async () => {
    const cached = await py("import os\nprint(open('notes/a.md').read(), end='')\nprint(sorted(os.listdir('.')), os.stat('notes/a.md').st_size)", dir);
    expect(cached.code, cached.stderr).toBe(0);
    expect(cached.stdout).toBe("first\n['deep', 'notes'] 6\n");
    expect(
      await outcomes(dir, [
        ['list a directory not listed before', "os.listdir('deep')"],
        ['save a new file', "with open('new.md', 'w') as f:\n    f.write('new')"],
        ['save a change to a file', "with open('notes/a.md', 'a') as f:\n    f.write('more')"],
      ]),
    ).toEqual({
      'list a directory not listed before': 'EIO',
      'save a new file': 'EIO',
      'save a change to a file': 'EIO',
    });
  });

  it('serves the API and the mount again once PostgreSQL is back, without a restart, with everything written before', async () => {
    cluster.start();
    const store = await client.beta.memoryStores.retrieve(storeId);
    expect(store.name).toBe('outage');
    const listed = await client.beta.memoryStores.memories.list(storeId, { view: 'full' });
    expect(listed.data.map((m) => (m.type === 'memory' ? [m.path, m.content] : null))).toEqual([
      ['/deep/x.md', 'deep\n'],
      ['/notes/a.md', 'first\n'],
      ['/notes/b.md', 'mine\n'],
    ]);
    // What failed during the outage was not stored: no new.md, and notes/a.md without its append.
    const w = await sh('ls . deep && printf "after\\n" > after.md && printf "more\\n" >> notes/a.md && cat notes/a.md', dir);
    expect(w.code, w.stderr).toBe(0);
    expect(w.stdout).toBe('.:\ndeep\nnotes\n\ndeep:\nx.md\nfirst\nmore\n');
    const after = await client.beta.memoryStores.memories.list(storeId, { view: 'full' });
    expect(after.data.map((m) => (m.type === 'memory' ? [m.path, m.content] : null))).toEqual([
      ['/after.md', 'after\n'],
      ['/deep/x.md', 'deep\n'],
      ['/notes/a.md', 'first\nmore\n'],
      ['/notes/b.md', 'mine\n'],
    ]);
    const ready = await rawRequest(server.url, 'GET', '/readyz');
    expect([ready.status, ready.body]).toMatchObject([200, { status: 'ready', checks: { database: 'ok' }, active_sessions: 1, mounts: 1 }]);
    const ended = await rawRequest(server.url, 'DELETE', `/v1/sessions/${sessionId}`, { apiKey: server.adminKey });
    expect(ended.status).toBe(200);
    // The same process throughout, which said once that the database went and once that it came back.
    expect(process.kill(server.pid, 0)).toBe(true);
    expect(server.stderr()).toMatch(/PostgreSQL is unavailable .*requests answer 503/);
    expect(server.stderr()).toMatch(/PostgreSQL answers again/);
    expect(server.stderr()).not.toMatch(/uncaught|unhandled/i);
  });

  it('waits for PostgreSQL when the server starts while it is down, saying so, and serves once it is up; a one-shot command exits 1 instead', async () => {
    cluster.stop('immediate');
    const dataDir = makeTempDir();
    const check = await runCli(['check', '--database-url', withDatabase(cluster.url, 'mnemo')], {}, { timeoutMs: 30_000 });
    expect([check.code, check.timedOut]).toEqual([1, false]);
    expect(check.stderr).toMatch(/mnemo: database unavailable \(.+\)/);
    const child = spawn(process.execPath, [MAIN_JS, 'serve', '--port', '0', '--data-dir', dataDir, '--mount-root', join(dataDir, 'mnt'), '--database-url', withDatabase(cluster.url, 'mnemo')], {
      env: { ...process.env, MNEMO_ADMIN_KEY: server.adminKey },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      let stderr = '';
      await new Promise<void>((resolve, reject) => {
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
          stderr += chunk;
          if (/waiting for PostgreSQL \(database unavailable: .*\); trying again in/.test(stderr)) resolve();
        });
        void exited.then((code) => reject(new Error(`exited (${code}) instead of waiting:\n${stderr}`)));
      });
      cluster.start();
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
          if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')).trim());
        });
        void exited.then((code) => reject(new Error(`exited (${code}) instead of serving:\n${stderr}`)));
      });
      const store = await sdkClient(url, server.adminKey).beta.memoryStores.retrieve(storeId);
      expect(store.name).toBe('outage');
    } finally {
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/**
 * PostgreSQL out of connections (SQLSTATE 53300 too_many_connections: max_connections full, or a
 * role's connection limit, as here) is an outage that waiting fixes, like a restart: 503 with
 * Retry-After, /readyz "database unavailable", and a server starting meanwhile waits.
 */
const noCluster = clusterUnavailable();

describe.skipIf(noCluster !== null)(`PostgreSQL refusing new connections${noCluster ? ` (skipped: ${noCluster})` : ''}`, () => {
  let cluster: Cluster;
  let admin: pg.Client;
  let server: RunningServer;
  let url = '';
  let storeId = '';

  beforeAll(async () => {
    cluster = await startCluster();
    admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    // Superusers are exempt from a role's connection limit: the server logs in as a plain role.
    await admin.query('CREATE ROLE mnemo_app LOGIN');
    await admin.query(`CREATE DATABASE mnemo OWNER mnemo_app TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C.utf8'`);
    url = withDatabase(cluster.url, 'mnemo').replace('postgres://postgres@', 'postgres://mnemo_app@');
    server = await startServer({ databaseUrl: url });
    storeId = (await sdkClient(server.url, server.adminKey).beta.memoryStores.create({ name: 'crowded' })).id;
    await admin.query('ALTER ROLE mnemo_app CONNECTION LIMIT 0');
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'mnemo_app'`);
  });

  afterAll(async () => {
    await server?.stop();
    await admin?.end();
    cluster?.remove();
  });

  it('answers 503 "database unavailable" with Retry-After and reports the database down on /readyz, never 500', async () => {
    for (const [method, path] of [['GET', `/v1/memory_stores/${storeId}`], ['GET', `/v1/memory_stores/${storeId}/memories`], ['POST', `/v1/memory_stores/${storeId}/memories`]] as const) {
      const body = method === 'POST' ? JSON.stringify({ path: '/crowded.md', content: 'x' }) : undefined;
      const res = await rawRequest(server.url, method, path, { apiKey: server.adminKey, ...(body ? { body } : {}) });
      expect([res.status, res.body], path).toMatchObject([503, { type: 'error', error: { type: 'api_error', message: 'database unavailable' } }]);
      expect(res.headers.get('retry-after')).toBe('2');
    }
    const ready = await rawRequest(server.url, 'GET', '/readyz');
    expect([ready.status, ready.body]).toMatchObject([503, { status: 'not_ready', checks: { database: 'database unavailable' } }]);
    expect(server.stderr()).toMatch(/PostgreSQL is unavailable \(too many connections for role \\"mnemo_app\\"\)/);
    expect(server.stderr()).not.toMatch(/request req_\w+ failed/);
  });

  it('has a server started meanwhile wait for PostgreSQL, and serve once connections are allowed again', async () => {
    const dataDir = makeTempDir();
    const child = spawn(process.execPath, [MAIN_JS, 'serve', '--port', '0', '--data-dir', dataDir, '--mount-root', join(dataDir, 'mnt'), '--database-url', url], {
      env: { ...process.env, MNEMO_ADMIN_KEY: server.adminKey },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      let stderr = '';
      await new Promise<void>((resolve, reject) => {
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
          stderr += chunk;
          if (/waiting for PostgreSQL \(database unavailable: too many connections for role \\"mnemo_app\\"\); trying again in/.test(stderr)) resolve();
        });
        void exited.then((code) => reject(new Error(`exited (${code}) instead of waiting:\n${stderr}`)));
      });
      await admin.query('ALTER ROLE mnemo_app CONNECTION LIMIT -1');
      const second = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
          if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')).trim());
        });
        void exited.then((code) => reject(new Error(`exited (${code}) instead of serving:\n${stderr}`)));
      });
      for (const base of [second, server.url]) expect((await sdkClient(base, server.adminKey).beta.memoryStores.retrieve(storeId)).name).toBe('crowded');
    } finally {
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
