/**
 * `mnemo mount <store> <dir> [--read-only]`: the local CLI shortcut mounts one store until it is
 * interrupted, attributes writes to a session of its own, and unmounts on SIGINT.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { rawRequest, sdkClient } from '../helpers/sdk.js';
import { MAIN_JS, makeTempDir, startServer } from '../helpers/server.js';
import { queuedForSearch } from '../helpers/core.js';
import { eventually, isMounted, sh, unmountHelperOf } from '../helpers/mount.js';
import { holdWriteLock } from '../helpers/write-lock.js';
import { createService } from '../../src/service/service.js';
import { openSqliteStorage } from '../../src/storage/sqlite/open.js';

/** Starts `mnemo mount` as a child; resolves once it printed the mount point. */
function mountCli(dataDir: string, storeId: string, dir: string, extra: string[] = [], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [MAIN_JS, 'mount', storeId, dir, '--data-dir', dataDir, ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let err = '';
  const ready = new Promise<void>((resolve, reject) => {
    let out = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      if (out.includes('\n')) resolve();
    });
    void exited.then((code) => reject(new Error(`mnemo mount exited (${code}) before mounting\n${err}`)));
  });
  /** The session id it logs once mounted ("… as sesn_…; Ctrl-C unmounts"). */
  const sessionId = async () => {
    await ready;
    // stderr may arrive just after the stdout line.
    return eventually(async () => {
      const id = /as (sesn_\w+)/.exec(err)?.[1];
      if (!id) throw new Error(`mnemo mount logged no session id:\n${err}`);
      return id;
    });
  };
  return { child, ready, exited, sessionId, stderr: () => err };
}

/**
 * A child process that takes the lock of session `sessionId` in the data dir as `mnemo mount` does
 * (storage/sqlite/lock.ts, from dist/) and records nothing: a `mnemo mount` between taking its lock
 * and recording its session. Resolves `ready` once it holds the lock.
 */
function lockHolder(dataDir: string, sessionId: string) {
  const lockJs = pathToFileURL(join(dirname(MAIN_JS), 'storage', 'sqlite', 'lock.js')).href;
  const script = `const { mountLocks } = await import(${JSON.stringify(lockJs)});
mountLocks(${JSON.stringify(dataDir)}).hold(${JSON.stringify(sessionId)});
process.stdout.write('held\\n');
setInterval(() => {}, 60000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (c: string) => c.includes('held') && resolve());
    void exited.then(() => reject(new Error(`the lock holder of ${sessionId} exited before it held the lock`)));
  });
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  return { ready, kill };
}

/**
 * A child process that runs `mnemo mount`'s own taking of the lock of session `sessionId` (hold() in
 * storage/sqlite/lock.ts, from dist/) and stops for good at `at`, printing `paused`: at 'creating',
 * once SQLite has made `<id>.lock.new` and before it locks it (its first pragma on that file); at
 * 'renaming', with the file locked, just before it gets its session's name. Killed there with
 * SIGKILL, it leaves that file exactly as a `mnemo mount` killed at that point does.
 */
function pausedTaking(dataDir: string, sessionId: string, at: 'creating' | 'renaming') {
  const lockJs = join(dirname(MAIN_JS), 'storage', 'sqlite', 'lock.js');
  const script = `import fs, { writeSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
const stop = () => {
  writeSync(1, 'paused\\n');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
};
if (${JSON.stringify(at)} === 'renaming') {
  fs.renameSync = stop;
  syncBuiltinESMExports();
} else {
  const Database = createRequire(${JSON.stringify(lockJs)})('better-sqlite3');
  const pragma = Database.prototype.pragma;
  Database.prototype.pragma = function (...args) {
    if (this.name.endsWith('.lock.new')) stop();
    return pragma.apply(this, args);
  };
}
const { mountLocks } = await import(${JSON.stringify(pathToFileURL(lockJs).href)});
mountLocks(${JSON.stringify(dataDir)}).hold(${JSON.stringify(sessionId)});
writeSync(1, 'took it\\n');`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const paused = new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      if (out.includes('paused')) resolve();
    });
    void exited.then(() => reject(new Error(`the taking of the lock of ${sessionId} exited before it paused (${out.trim()})`)));
  });
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  return { paused, kill };
}

/**
 * The sessions' lock files in the data dir's mount-locks, sorted: all but `.taking`, the guard every
 * `mnemo mount` holds while it takes its lock (made once, and left).
 */
function sessionLocks(dataDir: string): string[] {
  return readdirSync(join(dataDir, 'mount-locks')).filter((name) => name !== '.taking').sort();
}

/**
 * A data dir with a running server, a new store named `name` and an empty directory `dir` to mount it
 * at. After the test, mounts started with `mount` are interrupted first, then the server stops and
 * the data dir goes.
 */
async function cliStore(name: string) {
  const dataDir = makeTempDir('mnemo-cli-');
  const server = await startServer({ dataDir });
  const mounts: ReturnType<typeof mountCli>[] = [];
  onTestFinished(async () => {
    for (const m of mounts) {
      if (m.child.exitCode === null && m.child.signalCode === null) m.child.kill('SIGINT');
      await m.exited;
    }
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const dir = join(dataDir, name);
  mkdirSync(dir);
  const client = sdkClient(server.url, server.adminKey);
  const store = await client.beta.memoryStores.create({ name });
  const mount = (extra: string[] = [], at = dir, env: Record<string, string> = {}) => {
    const m = mountCli(dataDir, store.id, at, extra, env);
    mounts.push(m);
    return m;
  };
  return { dataDir, server, dir, client, storeId: store.id, mount };
}

describe.skipIf(!existsSync('/dev/fuse'))('mnemo mount', () => {
  it('mounts a store at a directory until interrupted, writing as its own session', async () => {
    const { dir, client, storeId, mount } = await cliStore('here');
    await client.beta.memoryStores.memories.create(storeId, { path: '/seed.md', content: 'seeded\n' });

    const m = mount();
    await m.ready;
    expect(isMounted(dir)).toBe(true);
    expect((await sh('cat seed.md && echo local > mine.md', dir)).stdout).toBe('seeded\n');
    const versions = [];
    for await (const v of client.beta.memoryStores.memoryVersions.list(storeId)) versions.push(v);
    expect(versions[0]).toMatchObject({ operation: 'created', path: '/mine.md', created_by: { type: 'session_actor' } });

    m.child.kill('SIGINT');
    expect(await m.exited).toBe(0);
    expect(isMounted(dir)).toBe(false);
    expect(readFileSync('/proc/mounts', 'utf8')).not.toContain(dir);
  });

  it('runs its searches, listing pages, directory moves, heavy index turns and store removals on as many reader threads as MNEMO_READER_THREADS says, and says so', async () => {
    const { dataDir, dir, mount } = await cliStore('readers');
    const at = (name: string) => {
      const d = join(dataDir, name);
      mkdirSync(d);
      return d;
    };
    const mounts = [
      { m: mount(), dir, says: 'run on up to 2 reader threads (MNEMO_READER_THREADS)' },
      { m: mount([], at('one'), { MNEMO_READER_THREADS: '1' }), dir: join(dataDir, 'one'), says: 'run on up to 1 reader thread (MNEMO_READER_THREADS)' },
      { m: mount([], at('inline'), { MNEMO_READER_THREADS: '0' }), dir: join(dataDir, 'inline'), says: 'run on the serving thread (MNEMO_READER_THREADS=0)' },
    ];
    for (const [i, x] of mounts.entries()) {
      await x.m.ready;
      expect(x.m.stderr()).toContain(`mnemo: searches, listing pages, directory moves, heavy index turns and store removals ${x.says}`);
      // A directory move works wherever it runs.
      const r = await sh(`mkdir -p d${i}/x && echo note > d${i}/x/f.md && mv d${i} d${i}.moved && cat d${i}.moved/x/f.md`, x.dir);
      expect(r.stdout).toBe('note\n');
    }
    // Each sees the other processes' moves once it notices their writes (within 100 ms).
    for (const x of mounts) await eventually(async () => expect((await sh('ls -d *.moved', x.dir)).stdout).toBe('d0.moved\nd1.moved\nd2.moved\n'));
    // A value that is not a count is refused before anything is opened.
    const bad = mountCli(dataDir, 'memstore_x', at('bad'), [], { MNEMO_READER_THREADS: 'many' });
    await expect(bad.ready).rejects.toThrow(/invalid MNEMO_READER_THREADS: many/);
  });

  it('--read-only refuses writes with EROFS', async () => {
    const { dir, mount } = await cliStore('ro');
    const m = mount(['--read-only']);
    await m.ready;
    const r = await sh('echo x > f.md', dir);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/Read-only file system/);
    m.child.kill('SIGTERM');
    expect(await m.exited).toBe(0);
  });

  it('indexes its own writes for search when no server runs beside it', async () => {
    const { dataDir, server, dir, mount } = await cliStore('alone');
    await server.stop();
    const m = mount();
    await m.ready;
    expect((await sh('echo "a note about herons" > heron.md', dir)).code).toBe(0);
    await eventually(async () => expect(queuedForSearch(join(dataDir, 'mnemo.db'))).toBe(0));
  });

  it('leaves search indexing to the server beside it while that runs, and takes it up when it stops', async () => {
    const { dataDir, server, dir, mount } = await cliStore('beside');
    const m = mount();
    await m.ready;
    await eventually(async () => expect(m.stderr()).toContain(`server on this data directory (pid ${server.pid}) indexes writes for search; this process stands by`));
    // The server paused (still running, so the mount still stands by): nothing indexes this write.
    // The server holds no write lock between requests, so the mount's save goes through.
    process.kill(server.pid, 'SIGSTOP');
    try {
      expect((await sh('echo "a note about herons" > heron.md', dir)).code).toBe(0);
      // The upkeep indexes within a tick (200 ms) of writes pausing; ten ticks and still queued.
      await new Promise((r) => setTimeout(r, 2000));
      expect(queuedForSearch(join(dataDir, 'mnemo.db'))).toBe(1);
    } finally {
      process.kill(server.pid, 'SIGCONT');
    }
    await eventually(async () => expect(queuedForSearch(join(dataDir, 'mnemo.db'))).toBe(0));

    await server.stop();
    expect((await sh('echo "a note about egrets" > egret.md', dir)).code).toBe(0);
    await eventually(async () => expect(queuedForSearch(join(dataDir, 'mnemo.db'))).toBe(0));
    expect(m.stderr()).toContain('no server runs on this data directory: this process indexes writes for search');
  });

  it('empties once another process deletes its store, before the store\'s rows are purged', async () => {
    const { dataDir, server, dir, client, storeId, mount } = await cliStore('doomed');
    await client.beta.memoryStores.memories.create(storeId, { path: '/notes/kept.md', content: 'kept\n' });
    await server.stop();
    const m = mount();
    await m.ready;
    expect((await sh(`ls ${dir}/notes`, '/')).stdout.trim()).toBe('kept.md');

    // Another process (this one, straight on the file) deletes the store.
    const file = join(dataDir, 'mnemo.db');
    const storage = openSqliteStorage(file);
    onTestFinished(() => storage.close());
    const service = createService({ storage });
    const ws = await service.keys.defaultWorkspace();
    const { key } = await service.keys.createKey('deleter', 'admin', ws.id);
    await service.deleteStore({ workspaceId: ws.id, actor: { type: 'api_actor', apiKeyId: key.id } }, storeId);

    await eventually(async () => expect((await sh(`ls -A ${dir}`, '/')).stdout.trim()).toBe(''));
    expect((await sh(`cat ${dir}/notes/kept.md`, '/')).code).not.toBe(0);
    expect((await sh(`echo again > ${dir}/new.md`, '/')).code).not.toBe(0);
    // The mount process also purges deleted stores' rows in its upkeep turns (main.ts), which would
    // empty it too, a few hundred ms later: its own line says it emptied on seeing the store gone.
    await eventually(async () => expect(m.stderr()).toContain(`store ${storeId} was deleted elsewhere; ${dir} is empty now`));
  });

  it('drops the texts it keeps when the server beside it redacts a version, and says which', async () => {
    const { dir, client, storeId, mount } = await cliStore('redacted');
    const first = await client.beta.memoryStores.memories.create(storeId, { path: '/secret.md', content: 'the code is 0451\n' });
    const m = mount();
    await m.ready;
    // Read once through the mount: the process keeps the text (and the kernel its pages).
    expect((await sh('cat secret.md', dir)).stdout).toBe('the code is 0451\n');
    await client.beta.memoryStores.memories.update(first.id, { memory_store_id: storeId, content: 'rotated\n' });
    const other = await client.beta.memoryStores.memories.create(storeId, { path: '/other.md', content: 'other\n' });
    await client.beta.memoryStores.memories.update(other.id, { memory_store_id: storeId, content: 'other, later\n' });
    // Two redactions in one look are told together; a version of another store is not told at all.
    const elsewhere = await client.beta.memoryStores.create({ name: 'elsewhere' });
    const foreign = await client.beta.memoryStores.memories.create(elsewhere.id, { path: '/x.md', content: 'x\n' });
    await client.beta.memoryStores.memories.update(foreign.id, { memory_store_id: elsewhere.id, content: 'y\n' });
    await client.beta.memoryStores.memoryVersions.redact(foreign.memory_version_id, { memory_store_id: elsewhere.id });
    await client.beta.memoryStores.memoryVersions.redact(first.memory_version_id, { memory_store_id: storeId });
    await eventually(async () => expect(m.stderr()).toContain(`version ${first.memory_version_id} of store ${storeId} was redacted elsewhere; this process's cached texts are dropped`));
    expect(m.stderr()).not.toContain(foreign.memory_version_id);
    expect((await sh('cat secret.md', dir)).stdout).toBe('rotated\n');
    // Told once: a later write elsewhere (the change mark moves again) reads only what was logged since.
    await client.beta.memoryStores.memoryVersions.redact(other.memory_version_id, { memory_store_id: storeId });
    await eventually(async () => expect(m.stderr()).toContain(`version ${other.memory_version_id} of store ${storeId} was redacted elsewhere`));
    expect(m.stderr().split(first.memory_version_id).length - 1).toBe(1);
  });

  it('refuses a directory that holds files rather than hiding them under the mount', async () => {
    const { dir, mount } = await cliStore('full');
    writeFileSync(join(dir, 'mine.txt'), 'mine\n');
    const m = mount();
    await expect(m.ready).rejects.toThrow(/is not empty \(1 entry\); mount on an empty or new directory/);
    expect(await m.exited).toBe(1);
    expect(isMounted(dir)).toBe(false);
    expect(readFileSync(join(dir, 'mine.txt'), 'utf8')).toBe('mine\n');
  });

  it('a file named as the mount point is refused with a sentence naming it', async () => {
    const { dir, storeId, dataDir } = await cliStore('filed');
    const file = join(dir, 'plain.txt');
    writeFileSync(file, 'mine\n');
    const m = mountCli(dataDir, storeId, file);
    await expect(m.ready).rejects.toThrow(`mnemo mount: ${file} is a file, not a directory; mount on an empty or new directory`);
    expect(await m.exited).toBe(1);
    expect(readFileSync(file, 'utf8')).toBe('mine\n');
  });

  it('a mount point that does not exist yet is created and mounted', async () => {
    const { dataDir, client, storeId } = await cliStore('fresh');
    await client.beta.memoryStores.memories.create(storeId, { path: '/seed.md', content: 'seeded\n' });
    const target = join(dataDir, 'new', 'deeper');
    const m = mountCli(dataDir, storeId, target);
    try {
      await m.ready;
      expect(isMounted(target)).toBe(true);
      expect((await sh('cat seed.md', target)).stdout).toBe('seeded\n');
    } finally {
      m.child.kill('SIGINT');
      expect(await m.exited).toBe(0);
    }
    expect(isMounted(target)).toBe(false);
  });

  it('an unknown store is a clear error, not a mount', async () => {
    const dataDir = makeTempDir('mnemo-cli-');
    await openSqliteStorage(join(dataDir, 'mnemo.db')).close();
    try {
      const m = mountCli(dataDir, 'memstore_nope', join(dataDir, 'x'));
      await expect(m.ready).rejects.toThrow(/no memory store memstore_nope/);
      expect(await m.exited).toBe(1);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('records its session: GET /v1/sessions/{id} shows it active while mounted and ended after unmount', async () => {
    const { server, dir, storeId, mount } = await cliStore('listed');
    const get = (id: string) => rawRequest(server.url, 'GET', `/v1/sessions/${id}`, { apiKey: server.adminKey });
    const m = mount(['--read-only']);
    const id = await m.sessionId();

    const live = await get(id);
    expect(live.status).toBe(200);
    expect(live.body).toMatchObject({
      type: 'session',
      id,
      status: 'active',
      ended_at: null,
      resources: [{ type: 'memory_store', memory_store_id: storeId, access: 'read_only', name: 'listed', host_path: dir, mount_path: dir }],
    });
    const list = await rawRequest(server.url, 'GET', '/v1/sessions', { apiKey: server.adminKey });
    expect((list.body as { data: { id: string }[] }).data.map((s) => s.id)).toContain(id);
    // The server does not serve this mount, so it cannot end it: the mount process does.
    const del = await rawRequest(server.url, 'DELETE', `/v1/sessions/${id}`, { apiKey: server.adminKey });
    expect(del.status).toBe(409);
    expect(JSON.stringify(del.body)).toMatch(/served by a mnemo mount process/);
    expect(isMounted(dir)).toBe(true);

    m.child.kill('SIGINT');
    expect(await m.exited).toBe(0);
    const ended = await get(id);
    expect(ended.body).toMatchObject({ id, status: 'ended', ended_at: expect.any(String) });
  });

  it('a restarted server leaves a mnemo mount session to its process, and once that process was killed -9 ends it and clears its dead mount', async () => {
    const dataDir = makeTempDir('mnemo-cli-');
    const env = { MNEMO_ADMIN_KEY: `mnemo-test-${'k'.repeat(32)}` };
    let server = await startServer({ dataDir, env });
    const dir = join(dataDir, 'local');
    mkdirSync(dir);
    const m = mountCli(dataDir, (await sdkClient(server.url, server.adminKey).beta.memoryStores.create({ name: 'local' })).id, dir);
    onTestFinished(async () => {
      if (m.child.exitCode === null && m.child.signalCode === null) m.child.kill('SIGINT');
      await m.exited;
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });
    const id = await m.sessionId();
    const status = async () => ((await rawRequest(server.url, 'GET', `/v1/sessions/${id}`, { apiKey: server.adminKey })).body as { status: string }).status;

    await server.stop();
    server = await startServer({ dataDir, env });
    expect(await status()).toBe('active');
    expect(server.stderr()).not.toContain(id);
    expect(readFileSync('/proc/mounts', 'utf8').split('\n').filter((l) => l.split(' ')[1] === dir)).toHaveLength(1);
    expect((await sh('echo still > here.md && cat here.md', dir)).stdout).toBe('still\n');

    // The unmount helper (a child of the mount process) drops the dead mount as the process dies:
    // kill the helper first, so the mount is left dead for certain, and the next start must clear
    // it with the session it ends.
    process.kill(await unmountHelperOf(m.child.pid!), 'SIGKILL');
    process.kill(m.child.pid!, 'SIGKILL');
    await m.exited;
    expect(isMounted(dir)).toBe(true);
    await server.stop();
    server = await startServer({ dataDir, env });
    expect(await status()).toBe('ended');
    expect(isMounted(dir)).toBe(false);
  });
});

describe.skipIf(!existsSync('/dev/fuse'))('mnemo mount whose session cannot be recorded', () => {
  it('unmounts the store it mounted, removes its lock file and exits 1 saying why when recording its session fails', async () => {
    const dataDir = makeTempDir('mnemo-cli-');
    const server = await startServer({ dataDir });
    const storeId = (await sdkClient(server.url, server.adminKey).beta.memoryStores.create({ name: 'unrecorded' })).id;
    await server.stop();
    const dir = join(dataDir, 'here');
    mkdirSync(dir);
    // Another process (an operator's sqlite3 shell in a transaction) holds the database's write
    // lock throughout: the mount only reads, so it goes up, and the session's row waits for the
    // lock, then is refused.
    const writer = await holdWriteLock(join(dataDir, 'mnemo.db'));
    const m = mountCli(dataDir, storeId, dir);
    onTestFinished(async () => {
      if (m.child.exitCode === null && m.child.signalCode === null) m.child.kill('SIGINT');
      await m.exited;
      writer.kill();
      await writer.gone;
      if (isMounted(dir)) spawnSync('fusermount3', ['-uz', dir]);
      rmSync(dataDir, { recursive: true, force: true });
    });
    await expect(m.ready).rejects.toThrow(/exited \(1\) before mounting/);
    const err = m.stderr();
    // It was mounted, then the process unmounted it itself: nothing is left mounted with no owner.
    expect(err).toContain(`mnemo fs: mounted ${storeId} at ${dir}`);
    expect(err).toContain(`mnemo fs: unmounted ${dir}`);
    const at = dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    expect(err).toMatch(new RegExp(`mnemo mount: could not record the session of the mount at ${at}: .*database is locked.*; unmounted it`));
    expect(readFileSync('/proc/mounts', 'utf8').split('\n').filter((l) => l.split(' ')[1] === dir)).toEqual([]);
    expect(spawnSync('mountpoint', ['-q', dir]).status).not.toBe(0);
    // The plain, empty directory it was (its process is gone: nothing here can hang).
    expect(readdirSync(dir)).toEqual([]);
    expect(sessionLocks(dataDir)).toEqual([]);
    // Nothing was recorded: no session is left active for a process that is gone.
    await writer.release();
    const db = new Database(join(dataDir, 'mnemo.db'), { readonly: true });
    try {
      expect(db.prepare("SELECT count(*) FROM sessions WHERE status = 'active'").pluck().get()).toBe(0);
    } finally {
      db.close();
    }
  });
});

describe.skipIf(!existsSync('/dev/fuse'))('mnemo mount under another node id', () => {
  it('a mnemo mount session recorded by another node id whose process was killed -9 is ended by the next server start on the SQLite file, and a live one is left to its process', async () => {
    const dataDir = makeTempDir('mnemo-cli-');
    const env = { MNEMO_ADMIN_KEY: `mnemo-test-${'k'.repeat(32)}` };
    let server = await startServer({ dataDir, env });
    const storeId = (await sdkClient(server.url, server.adminKey).beta.memoryStores.create({ name: 'elsewhere' })).id;
    const [deadDir, liveDir] = [join(dataDir, 'dead'), join(dataDir, 'live')];
    mkdirSync(deadDir);
    mkdirSync(liveDir);
    const dead = mountCli(dataDir, storeId, deadDir, ['--node-id', 'host-before']);
    const live = mountCli(dataDir, storeId, liveDir, [], { MNEMO_NODE_ID: 'host-beside' });
    onTestFinished(async () => {
      for (const m of [dead, live]) {
        if (m.child.exitCode === null && m.child.signalCode === null) m.child.kill('SIGINT');
        await m.exited;
      }
      // Left by the killed process when the session was not ended (the defect this test pins).
      if (isMounted(deadDir)) spawnSync('fusermount3', ['-uz', deadDir]);
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });
    const [deadId, liveId] = [await dead.sessionId(), await live.sessionId()];
    const session = async (id: string) => (await rawRequest(server.url, 'GET', `/v1/sessions/${id}`, { apiKey: server.adminKey })).body as { status: string; node_id: string };
    expect(await session(deadId)).toMatchObject({ status: 'active', node_id: 'host-before' });

    process.kill(await unmountHelperOf(dead.child.pid!), 'SIGKILL');
    process.kill(dead.child.pid!, 'SIGKILL');
    await dead.exited;
    await server.stop();
    server = await startServer({ dataDir, env });
    expect(await session(deadId)).toMatchObject({ status: 'ended' });
    expect(isMounted(deadDir)).toBe(false);
    const lines = server.stderr().split('\n').filter((l) => l.includes(deadId));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`session ${deadId} of node host-before: its mnemo mount process is gone`);

    expect(await session(liveId)).toMatchObject({ status: 'active', node_id: 'host-beside' });
    expect(server.stderr()).not.toContain(liveId);
    expect((await sh('echo still > here.md && cat here.md', liveDir)).stdout).toBe('still\n');
    // Each process's lock says whether it runs: the dead one's file went with its session.
    expect(sessionLocks(dataDir)).toEqual([`${liveId}.lock`]);
    live.child.kill('SIGINT');
    expect(await live.exited).toBe(0);
    expect(await session(liveId)).toMatchObject({ status: 'ended' });
    expect(sessionLocks(dataDir)).toEqual([]);
  });

  it('the next mnemo mount on the SQLite file, no server running, ends the session of a mnemo mount killed -9 under another node id, and says so', async () => {
    const dataDir = makeTempDir('mnemo-cli-');
    const server = await startServer({ dataDir });
    const storeId = (await sdkClient(server.url, server.adminKey).beta.memoryStores.create({ name: 'renamed' })).id;
    await server.stop();
    const [deadDir, nextDir] = [join(dataDir, 'dead'), join(dataDir, 'next')];
    mkdirSync(deadDir);
    mkdirSync(nextDir);
    const dead = mountCli(dataDir, storeId, deadDir, ['--node-id', 'host-before']);
    let next: ReturnType<typeof mountCli> | null = null;
    onTestFinished(async () => {
      for (const m of [dead, next]) {
        if (m === null) continue;
        if (m.child.exitCode === null && m.child.signalCode === null) m.child.kill('SIGINT');
        await m.exited;
      }
      if (isMounted(deadDir)) spawnSync('fusermount3', ['-uz', deadDir]);
      rmSync(dataDir, { recursive: true, force: true });
    });
    const deadId = await dead.sessionId();
    process.kill(dead.child.pid!, 'SIGKILL');
    await dead.exited;

    next = mountCli(dataDir, storeId, nextDir);
    const nextId = await next.sessionId();
    expect(next.stderr()).toContain(`mnemo: ended session ${deadId} of node host-before: its mnemo mount process is gone`);
    const db = new Database(join(dataDir, 'mnemo.db'), { readonly: true });
    const status = (id: string) => db.prepare('SELECT status FROM sessions WHERE id = ?').pluck().get(id);
    try {
      expect([status(deadId), status(nextId)]).toEqual(['ended', 'active']);
    } finally {
      db.close();
    }
  });
});

describe.skipIf(!existsSync('/dev/fuse'))('mnemo mount lock files', () => {
  it('the next start removes the lock file of a mnemo mount killed -9 between taking its lock and recording its session, and leaves one a live process holds', async () => {
    const dataDir = makeTempDir('mnemo-cli-');
    const env = { MNEMO_ADMIN_KEY: `mnemo-test-${'k'.repeat(32)}` };
    let server = await startServer({ dataDir, env });
    const storeId = (await sdkClient(server.url, server.adminKey).beta.memoryStores.create({ name: 'locks' })).id;
    await server.stop();
    const dir = join(dataDir, 'here');
    mkdirSync(dir);
    const [killed, starting] = [lockHolder(dataDir, 'sesn_killedbeforerecording'), lockHolder(dataDir, 'sesn_stillstarting')];
    let mount: ReturnType<typeof mountCli> | null = null;
    onTestFinished(async () => {
      await killed.kill();
      await starting.kill();
      if (mount && mount.child.exitCode === null && mount.child.signalCode === null) mount.child.kill('SIGINT');
      await mount?.exited;
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });
    await Promise.all([killed.ready, starting.ready]);
    const locks = () => sessionLocks(dataDir);
    expect(locks()).toEqual(['sesn_killedbeforerecording.lock', 'sesn_stillstarting.lock']);
    await killed.kill();

    mount = mountCli(dataDir, storeId, dir);
    const id = await mount.sessionId();
    expect(locks()).toEqual([`${id}.lock`, 'sesn_stillstarting.lock'].sort());
    expect(mount.stderr()).toContain('removed the lock file of sesn_killedbeforerecording: no mnemo mount process holds it, and no active session is its');
    expect(mount.stderr()).not.toContain('sesn_stillstarting');
    // A normal end removes its own.
    mount.child.kill('SIGINT');
    expect(await mount.exited).toBe(0);
    expect(locks()).toEqual(['sesn_stillstarting.lock']);

    // A server's start removes one left since, as a mount's does.
    await starting.kill();
    server = await startServer({ dataDir, env });
    expect(locks()).toEqual([]);
    // Logged before the URL is printed, on another pipe: it may be read a moment after.
    await eventually(async () => expect(server.stderr()).toContain('removed the lock file of sesn_stillstarting: '));
  });

  it('the next start removes the file a mnemo mount killed -9 while taking its lock left, before or after locking it, and leaves those of mounts still taking theirs', async () => {
    const dataDir = makeTempDir('mnemo-cli-');
    const env = { MNEMO_ADMIN_KEY: `mnemo-test-${'k'.repeat(32)}` };
    let server = await startServer({ dataDir, env });
    const storeId = (await sdkClient(server.url, server.adminKey).beta.memoryStores.create({ name: 'taking' })).id;
    await server.stop();
    const dir = join(dataDir, 'here');
    mkdirSync(dir);
    const takings = [
      pausedTaking(dataDir, 'sesn_killedaftermaking', 'creating'),
      pausedTaking(dataDir, 'sesn_killedbeforerenaming', 'renaming'),
      pausedTaking(dataDir, 'sesn_stillrenaming', 'renaming'),
    ];
    const [killedMaking, killedRenaming, stillRenaming] = takings;
    let mount: ReturnType<typeof mountCli> | null = null;
    onTestFinished(async () => {
      for (const t of takings) await t.kill();
      if (mount && mount.child.exitCode === null && mount.child.signalCode === null) mount.child.kill('SIGINT');
      await mount?.exited;
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });
    await Promise.all(takings.map((t) => t.paused));
    await killedMaking!.kill();
    await killedRenaming!.kill();
    const locks = () => sessionLocks(dataDir);
    expect(locks()).toEqual(['sesn_killedaftermaking.lock.new', 'sesn_killedbeforerenaming.lock.new', 'sesn_stillrenaming.lock.new']);

    mount = mountCli(dataDir, storeId, dir);
    const id = await mount.sessionId();
    expect(locks()).toEqual([`${id}.lock`, 'sesn_stillrenaming.lock.new'].sort());
    for (const left of ['sesn_killedaftermaking.lock.new', 'sesn_killedbeforerenaming.lock.new']) {
      expect(mount.stderr()).toContain(`mnemo: removed the unfinished lock file ${left}: a mnemo mount was killed while taking it, and no process holds it`);
    }
    expect(mount.stderr()).not.toContain('sesn_stillrenaming');
    mount.child.kill('SIGINT');
    expect(await mount.exited).toBe(0);

    // A mount paused between making its file and locking it: that file is free, yet it is the
    // mount's. A start leaves it (and so, this once, a leftover beside it, for the next start).
    const stillMaking = pausedTaking(dataDir, 'sesn_stillmaking', 'creating');
    const killedBeside = pausedTaking(dataDir, 'sesn_killedbeside', 'renaming');
    takings.push(stillMaking, killedBeside);
    await Promise.all([stillMaking.paused, killedBeside.paused]);
    await killedBeside.kill();
    expect(locks()).toEqual(['sesn_killedbeside.lock.new', 'sesn_stillmaking.lock.new', 'sesn_stillrenaming.lock.new']);
    server = await startServer({ dataDir, env });
    expect(locks()).toEqual(['sesn_killedbeside.lock.new', 'sesn_stillmaking.lock.new', 'sesn_stillrenaming.lock.new']);
    expect(server.stderr()).not.toContain('lock.new');
    await server.stop();

    // Once those mounts are gone, the next start removes every one.
    await stillMaking.kill();
    await stillRenaming!.kill();
    server = await startServer({ dataDir, env });
    expect(locks()).toEqual([]);
    // Logged before the URL is printed, on another pipe: it may be read a moment after.
    for (const left of ['sesn_killedbeside', 'sesn_stillmaking', 'sesn_stillrenaming']) {
      await eventually(async () => expect(server.stderr()).toContain(`removed the unfinished lock file ${left}.lock.new: `));
    }
  });

  it('while a mnemo mount is taking its lock, a start still removes a free .lock.new over a minute old, and leaves a newer free one, a held old one and the taking mount\'s own', async () => {
    const dataDir = makeTempDir('mnemo-cli-');
    const env = { MNEMO_ADMIN_KEY: `mnemo-test-${'k'.repeat(32)}` };
    const takings = [
      // Between making its file and locking it: holds .taking shared, its file free and new.
      pausedTaking(dataDir, 'sesn_stillmaking', 'creating'),
      pausedTaking(dataDir, 'sesn_killedlongago', 'renaming'),
      pausedTaking(dataDir, 'sesn_killedjustnow', 'renaming'),
      pausedTaking(dataDir, 'sesn_stilllocked', 'renaming'),
    ];
    const [, killedLongAgo, killedJustNow] = takings;
    let server: Awaited<ReturnType<typeof startServer>> | null = null;
    onTestFinished(async () => {
      for (const t of takings) await t.kill();
      await server?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });
    await Promise.all(takings.map((t) => t.paused));
    await killedLongAgo!.kill();
    await killedJustNow!.kill();
    // Two of them a minute and a second old: one free, one its process still holds.
    const old = (Date.now() - 61_000) / 1000;
    for (const name of ['sesn_killedlongago.lock.new', 'sesn_stilllocked.lock.new']) utimesSync(join(dataDir, 'mount-locks', name), old, old);
    const locks = () => sessionLocks(dataDir);
    expect(locks()).toEqual(['sesn_killedjustnow.lock.new', 'sesn_killedlongago.lock.new', 'sesn_stilllocked.lock.new', 'sesn_stillmaking.lock.new']);

    server = await startServer({ dataDir, env });
    expect(locks()).toEqual(['sesn_killedjustnow.lock.new', 'sesn_stilllocked.lock.new', 'sesn_stillmaking.lock.new']);
    // Logged before the URL is printed, on another pipe: it may be read a moment after.
    await eventually(async () =>
      expect(server!.stderr()).toContain('removed the unfinished lock file sesn_killedlongago.lock.new: a mnemo mount was killed while taking it, and no process holds it'),
    );
    for (const kept of ['sesn_killedjustnow', 'sesn_stilllocked', 'sesn_stillmaking']) expect(server.stderr()).not.toContain(kept);
  });
});
