/**
 * `mnemo mount <store> <dir> [--read-only]`: the local CLI shortcut mounts one store until it is
 * interrupted, attributes writes to a session of its own, and unmounts on SIGINT.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sdkClient } from '../helpers/sdk.js';
import { MAIN_JS, makeTempDir, startServer } from '../helpers/server.js';
import { queuedForSearch } from '../helpers/core.js';
import { eventually, isMounted, sh } from '../helpers/mount.js';

/** Starts `mnemo mount` as a child; resolves once it printed the mount point. */
function mountCli(dataDir: string, storeId: string, dir: string, extra: string[] = []) {
  const child = spawn(process.execPath, [MAIN_JS, 'mount', storeId, dir, '--data-dir', dataDir, ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<void>((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      if (out.includes('\n')) resolve();
    });
    void exited.then((code) => reject(new Error(`mnemo mount exited (${code}) before mounting\n${err}`)));
  });
  return { child, ready, exited };
}

describe.skipIf(!existsSync('/dev/fuse'))('mnemo mount', () => {
  it('mounts a store at a directory until interrupted, writing as its own session', async () => {
    const dataDir = makeTempDir('mnemo-cli-');
    const server = await startServer({ dataDir });
    const dir = join(dataDir, 'here');
    mkdirSync(dir);
    try {
      const client = sdkClient(server.url, server.adminKey);
      const store = await client.beta.memoryStores.create({ name: 'local' });
      await client.beta.memoryStores.memories.create(store.id, { path: '/seed.md', content: 'seeded\n' });

      const m = mountCli(dataDir, store.id, dir);
      await m.ready;
      expect(isMounted(dir)).toBe(true);
      expect((await sh('cat seed.md && echo local > mine.md', dir)).stdout).toBe('seeded\n');
      const versions = [];
      for await (const v of client.beta.memoryStores.memoryVersions.list(store.id)) versions.push(v);
      expect(versions[0]).toMatchObject({ operation: 'created', path: '/mine.md', created_by: { type: 'session_actor' } });

      m.child.kill('SIGINT');
      expect(await m.exited).toBe(0);
      expect(isMounted(dir)).toBe(false);
      expect(readFileSync('/proc/mounts', 'utf8')).not.toContain(dir);
    } finally {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('--read-only refuses writes with EROFS', async () => {
    const dataDir = makeTempDir('mnemo-cli-');
    const server = await startServer({ dataDir });
    const dir = join(dataDir, 'ro');
    mkdirSync(dir);
    try {
      const client = sdkClient(server.url, server.adminKey);
      const store = await client.beta.memoryStores.create({ name: 'ro' });
      const m = mountCli(dataDir, store.id, dir, ['--read-only']);
      await m.ready;
      const r = await sh('echo x > f.md', dir);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/Read-only file system/);
      m.child.kill('SIGTERM');
      expect(await m.exited).toBe(0);
    } finally {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('indexes its own writes for search when no server runs beside it', async () => {
    const dataDir = makeTempDir('mnemo-cli-');
    const server = await startServer({ dataDir });
    const dir = join(dataDir, 'alone');
    mkdirSync(dir);
    let m: ReturnType<typeof mountCli> | undefined;
    try {
      const client = sdkClient(server.url, server.adminKey);
      const store = await client.beta.memoryStores.create({ name: 'alone' });
      await server.stop();
      m = mountCli(dataDir, store.id, dir);
      await m.ready;
      expect((await sh('echo "a note about herons" > heron.md', dir)).code).toBe(0);
      const db = join(dataDir, 'mnemo.db');
      await eventually(async () => expect(queuedForSearch(db)).toBe(0), 5000);
    } finally {
      m?.child.kill('SIGINT');
      await m?.exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses a directory that holds files rather than hiding them under the mount', async () => {
    const dataDir = makeTempDir('mnemo-cli-');
    const server = await startServer({ dataDir });
    const dir = join(dataDir, 'full');
    mkdirSync(dir);
    writeFileSync(join(dir, 'mine.txt'), 'mine\n');
    try {
      const store = await sdkClient(server.url, server.adminKey).beta.memoryStores.create({ name: 'full' });
      const m = mountCli(dataDir, store.id, dir);
      await expect(m.ready).rejects.toThrow(/is not empty \(1 entry\); mount on an empty or new directory/);
      expect(await m.exited).toBe(1);
      expect(isMounted(dir)).toBe(false);
      expect(readFileSync(join(dir, 'mine.txt'), 'utf8')).toBe('mine\n');
    } finally {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('an unknown store is a clear error, not a mount', async () => {
    const dataDir = makeTempDir('mnemo-cli-');
    try {
      const m = mountCli(dataDir, 'memstore_nope', join(dataDir, 'x'));
      await expect(m.ready).rejects.toThrow(/no memory store memstore_nope/);
      expect(await m.exited).toBe(1);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
