/**
 * A full disk under the database, through the real server: with the data directory on a 2 MiB
 * tmpfs, writes that no longer fit answer 507 `api_error` saying the disk holding the database is
 * full (never a bare 500), a mount's save fails with ENOSPC (never EIO), and once space is freed
 * the same writes succeed again. Needs root to mount the tmpfs; skipped otherwise.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FUSE_AVAILABLE, sh } from '../helpers/mount.js';
import { rawRequest } from '../helpers/sdk.js';
import { makeTempDir, startServer, type RunningServer } from '../helpers/server.js';

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
mkdirSync(disk);
const MOUNTED = tryMountTmpfs(disk, '2m');

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
    rmSync(base, { recursive: true, force: true });
  });

  it('answers 507 "the disk holding the database is full", mounts ENOSPC, and works again once space is freed', async () => {
    const post = (path: string, body: unknown) => rawRequest(server.url, 'POST', path, { apiKey: server.adminKey, body: JSON.stringify(body) });
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

if (!MOUNTED) {
  rmSync(base, { recursive: true, force: true });
  console.warn('cannot mount a tmpfs (needs root): the full-disk test is skipped');
}
