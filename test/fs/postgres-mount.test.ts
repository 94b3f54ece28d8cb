/**
 * A session on a server on PostgreSQL: its mount writes through the PostgreSQL adapter (a `sh -c`
 * child writes and renames files), and the API reads back the memories and the session's versions.
 */
import { existsSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createDatabase, pgSkip } from '../helpers/postgres.js';
import { eventually, py, sh } from '../helpers/mount.js';
import { rawRequest, sdkClient } from '../helpers/sdk.js';
import { startServer } from '../helpers/server.js';

const fuseAvailable = existsSync('/dev/fuse');

describe.skipIf(!fuseAvailable || pgSkip !== null)('a mount on PostgreSQL', () => {
  it('writes through a session mount on a server on PostgreSQL are memories and versions the API reads back', async () => {
    const db = await createDatabase();
    const server = await startServer({ databaseUrl: db.url, args: ['--node-id', 'pg-host'] });
    try {
      const client = sdkClient(server.url, server.adminKey);
      const store = await client.beta.memoryStores.create({ name: 'on pg' });
      const res = await rawRequest(server.url, 'POST', '/v1/sessions', {
        apiKey: server.adminKey,
        body: JSON.stringify({ resources: [{ type: 'memory_store', memory_store_id: store.id, access: 'read_write' }] }),
      });
      expect(res.status).toBe(200);
      const session = res.body as { id: string; node_id: string; resources: { host_path: string }[] };
      expect(session.node_id).toBe('pg-host');
      const dir = session.resources[0]!.host_path;
      const w = await sh(`mkdir -p notes && printf 'first\\n' > notes/a.md && printf 'draft' > b.md && mv b.md notes/b.md && cat notes/a.md`, dir);
      expect(w.code, w.stderr).toBe(0);
      expect(w.stdout).toBe('first\n');

      const listed = await client.beta.memoryStores.memories.list(store.id, { view: 'full' });
      expect(listed.data.map((m) => (m.type === 'memory' ? [m.path, m.content] : null))).toEqual([
        ['/notes/a.md', 'first\n'],
        ['/notes/b.md', 'draft'],
      ]);
      const versions = await client.beta.memoryStores.memoryVersions.list(store.id);
      expect(versions.data.length).toBeGreaterThanOrEqual(3);
      expect(versions.data.every((v) => v.created_by?.type === 'session_actor')).toBe(true);
      const ended = await rawRequest(server.url, 'DELETE', `/v1/sessions/${session.id}`, { apiKey: server.adminKey });
      expect(ended.status).toBe(200);
    } finally {
      await server.stop();
      await db.drop();
    }
  });

  it('a file the mount made is saved by one guarded statement, and saved again by the probe and the append', async () => {
    const db = await createDatabase();
    onTestFinished(() => db.drop());
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    onTestFinished(() => c.end());
    // The server's connections count their calls of PL/pgSQL functions (postgres/schema/v17.ts, v10.ts).
    const name = (await c.query<{ n: string }>('SELECT current_database() AS n')).rows[0]!.n;
    await c.query(`ALTER DATABASE ${name} SET track_functions = 'pl'`);
    const server = await startServer({ databaseUrl: db.url });
    onTestFinished(() => server.stop());
    const client = sdkClient(server.url, server.adminKey);
    const store = await client.beta.memoryStores.create({ name: 'guarded' });
    const res = await rawRequest(server.url, 'POST', '/v1/sessions', {
      apiKey: server.adminKey,
      body: JSON.stringify({ resources: [{ type: 'memory_store', memory_store_id: store.id, access: 'read_write' }] }),
    });
    const dir = (res.body as { resources: { host_path: string }[] }).resources[0]!.host_path;
    expect((await sh(`printf 'one' > a.md && printf 'two' > a.md && cat a.md`, dir)).stdout).toBe('two');
    // Each backend reports its counts within a second of going idle.
    await c.query("SET stats_fetch_consistency = 'none'");
    await eventually(async () => {
      const r = await c.query<{ funcname: string; calls: number }>(
        "SELECT funcname, calls::int FROM pg_stat_user_functions WHERE funcname IN ('mnemo_create_guarded', 'mnemo_append') ORDER BY funcname",
      );
      // The new file: one guarded create (its append inside it); the second save: an append after its probe.
      expect(r.rows).toEqual([{ funcname: 'mnemo_append', calls: 2 }, { funcname: 'mnemo_create_guarded', calls: 1 }]);
    });
    const listed = await client.beta.memoryStores.memories.list(store.id, { view: 'full' });
    expect(listed.data.map((m) => (m.type === 'memory' ? [m.path, m.content] : null))).toEqual([['/a.md', 'two']]);
    await rawRequest(server.url, 'DELETE', `/v1/sessions/${(res.body as { id: string }).id}`, { apiKey: server.adminKey });
  });
  it('appends from two sessions of one store at once are all kept, each close() that succeeded with its line', async () => {
    const db = await createDatabase();
    onTestFinished(() => db.drop());
    const server = await startServer({ databaseUrl: db.url });
    onTestFinished(() => server.stop());
    const client = sdkClient(server.url, server.adminKey);
    const store = await client.beta.memoryStores.create({ name: 'appended' });
    const log = await client.beta.memoryStores.memories.create(store.id, { path: '/log.md', content: 'start\n' });
    const mount = async (): Promise<string> => {
      const res = await rawRequest(server.url, 'POST', '/v1/sessions', {
        apiKey: server.adminKey,
        body: JSON.stringify({ resources: [{ type: 'memory_store', memory_store_id: store.id, access: 'read_write' }] }),
      });
      expect(res.status).toBe(200);
      return (res.body as { resources: { host_path: string }[] }).resources[0]!.host_path;
    };
    const dirs = [await mount(), await mount()];
    // Each child appends its lines one open/write/close at a time, as `echo … >> log.md` in a loop does.
    const appender = [
      'import os, sys',
      'for i in range(1, 41):',
      '    fd = os.open("log.md", os.O_WRONLY | os.O_APPEND)',
      '    os.write(fd, f"{sys.argv[1]} line {i}\\n".encode())',
      '    os.close(fd)',
    ].join('\n');
    const runs = await Promise.all(dirs.map((dir, i) => py(appender, dir, [i === 0 ? 'A' : 'B'])));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const stored = await client.beta.memoryStores.memories.retrieve(log.id, { memory_store_id: store.id });
    const lines = (stored.content ?? '').split('\n').slice(0, -1);
    const expected = ['start', ...['A', 'B'].flatMap((w) => Array.from({ length: 40 }, (_, i) => `${w} line ${i + 1}`))];
    expect([...lines].sort()).toEqual([...expected].sort());
    // Each writer's lines stay in the order it wrote them.
    for (const w of ['A', 'B']) expect(lines.filter((l) => l.startsWith(`${w} `))).toEqual(expected.filter((l) => l.startsWith(`${w} `)));
  }, 60_000);

  it('a request the mount has not answered for 10 s is logged by name, and so is its answer when it comes', async () => {
    const db = await createDatabase();
    onTestFinished(() => db.drop());
    const server = await startServer({ databaseUrl: db.url });
    onTestFinished(() => server.stop());
    const client = sdkClient(server.url, server.adminKey);
    const store = await client.beta.memoryStores.create({ name: 'held' });
    await client.beta.memoryStores.memories.create(store.id, { path: '/held.md', content: 'held\n' });
    const res = await rawRequest(server.url, 'POST', '/v1/sessions', {
      apiKey: server.adminKey,
      body: JSON.stringify({ resources: [{ type: 'memory_store', memory_store_id: store.id, access: 'read_write' }] }),
    });
    const dir = (res.body as { resources: { host_path: string }[] }).resources[0]!.host_path;
    // Another client holds the memories table: the mount's first look at the store waits for it.
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    onTestFinished(() => locker.end());
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE memories IN ACCESS EXCLUSIVE MODE');
    const reader = sh('cat held.md', dir);
    // The first request of the `cat` to reach the mount (the root's or the file's stat) waits.
    const named = /mnemo fs: \w+ '\/(held\.md)?' unanswered for 1\d\.\d s \(its handler has not replied yet\)/;
    await eventually(async () => expect(server.stderr()).toMatch(named), 25_000);
    await locker.query('COMMIT');
    expect((await reader).stdout).toBe('held\n');
    await eventually(async () => expect(server.stderr()).toMatch(/mnemo fs: \w+ '\/(held\.md)?' answered after 1\d\.\d s/));
  }, 60_000);
});
