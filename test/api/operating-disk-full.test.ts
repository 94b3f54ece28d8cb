/**
 * A full disk under the database, through the real server: with the data directory on a 2 MiB
 * tmpfs, writes that no longer fit answer 507 `api_error` saying the disk holding the database is
 * full (never a bare 500), a mount's save fails with ENOSPC (never EIO), and once space is freed
 * the same writes succeed again; the background WAL checkpoints that fail meanwhile log why once
 * and resume, and a server started on a full disk says so. Needs root to mount the tmpfs; skipped otherwise.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { FUSE_AVAILABLE, sh } from '../helpers/mount.js';
import { jsonRequest } from '../helpers/sdk.js';
import { makeTempDir, runCli, startServer, type RunningServer } from '../helpers/server.js';

function tryMountTmpfs(dir: string, size: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const base = makeTempDir('mnemo-full-');
const disk = join(base, 'disk');
const walDisk = join(base, 'wal-disk');
const startDisk = join(base, 'start-disk');
for (const dir of [disk, walDisk, startDisk]) mkdirSync(dir);
const MOUNTED = tryMountTmpfs(disk, '2m');
afterAll(() => {
  // A block that was skipped (-t) left its tmpfs mounted.
  for (const dir of [disk, walDisk, startDisk]) spawnSync('umount', ['-l', dir], { stdio: 'ignore' });
  rmSync(base, { recursive: true, force: true });
});

describe.skipIf(!MOUNTED)('a full disk under the database', () => {
  let server: RunningServer;
  const filler = join(disk, 'filler');
  beforeAll(async () => {
    // Room to free later: the test's stand-in for an operator deleting old logs.
    writeFileSync(filler, Buffer.alloc(600 * 1024));
    server = await startServer({ dataDir: join(disk, 'data'), args: ['--mount-root', join(base, 'mnt')] });
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
    execFileSync('umount', ['-l', disk], { stdio: 'ignore' });
  });

  it('answers 507 "the disk holding the database is full", mounts ENOSPC, and works again once space is freed', async () => {
    const post = (path: string, body: unknown) => jsonRequest(server, 'POST', path, server.adminKey, body);
    const store = (await post('/v1/memory_stores', { name: 'full' })).body as { id: string };
    // Mounted before the disk fills: a session's own row is a write too.
    let mnt: string | null = null;
    if (FUSE_AVAILABLE) {
      const session = await post('/v1/sessions', { resources: [{ type: 'memory_store', memory_store_id: store.id }] });
      expect(session.status).toBe(200);
      mnt = (session.body as { resources: { host_path: string }[] }).resources[0]!.host_path;
    }
    const content = 'x'.repeat(20 * 1024);
    // Writes until one is refused. A WAL checkpoint may free room at any moment (the WAL shrinks as
    // its pages move into the database), so "full" is reached again by writing on, not assumed.
    let written = 0;
    const writeUntilRefused = async () => {
      for (let i = 0; i < 200; i++) {
        const res = await post(`/v1/memory_stores/${store.id}/memories`, { path: `/m${written}.md`, content: `${written++}${content}` });
        if (res.status !== 200) return res;
      }
      return null;
    };
    const expectFull = (res: Awaited<ReturnType<typeof post>> | null) => {
      expect(res).not.toBeNull();
      expect(res!.status).toBe(507);
      expect(res!.body).toMatchObject({ type: 'error', error: { type: 'api_error', message: expect.stringContaining('the disk holding the database is full') } });
    };
    expectFull(await writeUntilRefused());
    // The disk fills again and meets the same answer: no 500 anywhere.
    expectFull(await writeUntilRefused());
    expect(server.stderr()).not.toMatch(/internal server error|SqliteError/);
    expect(server.stderr()).toContain('is full');

    if (mnt !== null) {
      // A save on a full disk fails with ENOSPC, never EIO; should a checkpoint have made room just
      // before it, the save lands, the disk is filled again and the save tried once more.
      let save = { code: 0, stderr: '' };
      for (let round = 0; round < 5 && save.code === 0; round++) {
        if (round > 0) expectFull(await writeUntilRefused());
        save = await sh(`head -c 40000 /dev/zero | tr '\\0' y > big${round}.md`, mnt);
      }
      expect(save.code).not.toBe(0);
      expect(save.stderr).toMatch(/No space left on device/);
    }

    rmSync(filler);
    const after = await post(`/v1/memory_stores/${store.id}/memories`, { path: '/after.md', content: 'small' });
    expect(after.status).toBe(200);
  }, 60_000);
});

// The background checkpoint thread died on a full disk (its SqliteError crossed the thread as a
// bare object and was logged as "undefined"), so once space was freed the WAL only ever grew.
const WAL_MOUNTED = MOUNTED && tryMountTmpfs(walDisk, '2m');

describe.skipIf(!WAL_MOUNTED)('WAL checkpoints on a full disk', () => {
  let server: RunningServer;
  const filler = join(walDisk, 'filler');
  const wal = join(walDisk, 'data', 'mnemo.db-wal');
  beforeAll(async () => {
    // Most of the disk: once freed, the database file has room for every page in the WAL.
    writeFileSync(filler, Buffer.alloc(1200 * 1024));
    server = await startServer({ dataDir: join(walDisk, 'data'), args: ['--mount-root', join(base, 'wal-mnt')] });
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
    execFileSync('umount', ['-l', walDisk], { stdio: 'ignore' });
  });

  it('logs the real error once, keeps trying, and checkpoints the WAL again once space is freed', async () => {
    const post = (path: string, body: unknown) => jsonRequest(server, 'POST', path, server.adminKey, body);
    const store = (await post('/v1/memory_stores', { name: 'wal' })).body as { id: string };
    const content = 'x'.repeat(20 * 1024);
    let written = 0;
    const failing = () => /background WAL checkpoints fail/.test(server.stderr());
    // Fills the disk until a pass fails too: the frames written last need the database file to grow.
    for (let round = 0; round < 20 && !failing(); round++) {
      for (let i = 0; i < 200; i++) {
        const res = await post(`/v1/memory_stores/${store.id}/memories`, { path: `/m${written}.md`, content: `${written++}${content}` });
        if (res.status !== 200) break;
      }
      await until(failing, 3_000);
    }
    expect(server.stderr()).toMatch(/background WAL checkpoints fail on \S+mnemo\.db \(the disk is full: free space on it\): SQLITE_FULL: database or disk is full/);
    // Several failed passes later (the backoff's first waits), still one line for the one failure.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(server.stderr().match(/background WAL checkpoints fail/g)).toHaveLength(1);
    expect(server.stderr()).not.toMatch(/checkpoints stopped|: undefined/);

    rmSync(filler);
    // A WAL starts over (its header's checkpoint count and salts change) only once a pass has copied
    // every frame into the database: the sign that checkpoints run again.
    const header = () => readFileSync(wal).subarray(12, 24).toString('hex');
    const before = header();
    let restarted = false;
    for (let i = 0; i < 60 && !restarted; i++) {
      const res = await post(`/v1/memory_stores/${store.id}/memories`, { path: `/after${i}.md`, content: 'small' });
      expect(res.status).toBe(200);
      restarted = await until(() => header() !== before, 500);
    }
    expect(restarted).toBe(true);
    expect(server.stderr()).toContain('background WAL checkpoints resumed');
  }, 90_000);
});

const START_MOUNTED = MOUNTED && tryMountTmpfs(startDisk, '2m');

describe.skipIf(!START_MOUNTED)('starting on a full disk', () => {
  afterAll(() => void spawnSync('umount', ['-l', startDisk], { stdio: 'ignore' }));

  it('exits 1 naming the data directory and saying its disk is full, with existing data or none, and starts once space is freed', async () => {
    const data = join(startDisk, 'data');
    const made = await startServer({ dataDir: data, args: ['--mount-root', join(base, 'start-mnt')] });
    await made.stop();
    const filler = join(startDisk, 'filler');
    fillDisk(filler);
    const serve = (dir: string) => runCli(['serve', '--port', '0', '--data-dir', dir, '--mount-root', join(base, 'start-mnt')], { MNEMO_ADMIN_KEY: made.adminKey }, { timeoutMs: 30_000 });
    // Existing data: SQLite itself says only "disk I/O error" (it cannot grow the -shm file).
    const existing = await serve(data);
    expect(existing.code).toBe(1);
    expect(existing.stderr).toContain(`cannot open the database in the data directory ${data}: the disk holding it is full (SQLITE_IOERR`);
    expect(existing.stderr).toContain('free space on it, then start again');
    const fresh = await serve(join(startDisk, 'fresh'));
    expect(fresh.code).toBe(1);
    expect(fresh.stderr).toContain(`cannot open the database in the data directory ${join(startDisk, 'fresh')}: the disk holding it is full (SQLITE_FULL: database or disk is full)`);

    rmSync(filler);
    const again = await startServer({ dataDir: data, args: ['--mount-root', join(base, 'start-mnt')], env: { MNEMO_ADMIN_KEY: made.adminKey } });
    await again.stop();
  }, 90_000);
});

/** Writes `file` until the disk holding it is full. */
function fillDisk(file: string): void {
  const fd = openSync(file, 'w');
  try {
    for (const chunk = Buffer.alloc(64 * 1024); ; ) writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
}

/** Polls `ok` every 50 ms for up to `ms`: whether it held. */
async function until(ok: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) if (ok()) return true;
  return ok();
}

if (!MOUNTED) {
  console.warn('cannot mount a tmpfs (needs root): the full-disk test is skipped');
}
