/**
 * One server owns a data directory (issue 11, item 9). A second `mnemo serve` on it, or a serve that
 * cannot bind its port, exits without touching the first server's session mounts; `mnemo restore`
 * refuses while a server or a `mnemo mount` uses the directory; the lock goes with the process,
 * even after kill -9. Servers, mounts and readers are all child processes.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { connectMcp } from '../helpers/mcp.js';
import { sh } from '../helpers/mount.js';
import { rawRequest, sdkClient } from '../helpers/sdk.js';
import { MAIN_JS, makeTempDir, runCli, startServer, type RunningServer } from '../helpers/server.js';

const FAST = { timeoutMs: 20_000 };

/** A server on its own data dir with one session mounting a store where kept.md holds "kept". */
async function serverWithSession(): Promise<{ server: RunningServer; dataDir: string; file: string }> {
  const dataDir = makeTempDir('mnemo-lock-');
  const server = await startServer({ dataDir });
  onTestFinished(async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const client = sdkClient(server.url, server.adminKey);
  const store = await client.beta.memoryStores.create({ name: 'owned' });
  await client.beta.memoryStores.memories.create(store.id, { path: '/kept.md', content: 'kept\n' });
  const res = await rawRequest(server.url, 'POST', '/v1/sessions', {
    apiKey: server.adminKey,
    body: JSON.stringify({ resources: [{ type: 'memory_store', memory_store_id: store.id }] }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const hostPath = (res.body as { resources: { host_path: string }[] }).resources[0]!.host_path;
  return { server, dataDir, file: join(hostPath, 'kept.md') };
}

/** Reads the file in a child process (never from this one), so a dead mount cannot hang the test. */
async function readThroughMount(file: string): Promise<string> {
  const r = await sh(`cat '${file}'`, '/');
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

describe.skipIf(!existsSync('/dev/fuse'))('one server per data directory', () => {
  it('a second serve on the same data dir exits 1 naming the owner, and the first server\'s session mount still works', async () => {
    const { server, dataDir, file } = await serverWithSession();
    expect(await readThroughMount(file)).toBe('kept\n');

    const second = await runCli(
      ['serve', '--port', '0', '--data-dir', dataDir, '--mount-root', join(dataDir, 'mnt')],
      { MNEMO_ADMIN_KEY: server.adminKey },
      FAST,
    );
    expect(second.timedOut, `the second server started:\n${second.stderr}`).toBe(false);
    expect(second.code).toBe(1);
    expect(second.stdout).toBe('');
    expect(second.stderr).toContain(`mnemo: another server owns ${dataDir} (pid ${server.pid})`);
    expect(second.stderr).not.toContain('cleared stale mount');

    expect(await readThroughMount(file)).toBe('kept\n');
    const health = await fetch(`${server.url}/v1/memory_stores`, { headers: { 'x-api-key': server.adminKey } });
    expect(health.status).toBe(200);
  });

  it('a serve whose port is taken exits non-zero and leaves the mounts under its mount root alone', async () => {
    const { server, dataDir, file } = await serverWithSession();
    const otherDir = makeTempDir('mnemo-lock-other-');
    onTestFinished(() => rmSync(otherDir, { recursive: true, force: true }));
    const port = new URL(server.url).port;

    // Another data dir, but the first server's mount root and port: the bind must fail before
    // anything under the mount root is cleared.
    const clash = await runCli(
      ['serve', '--port', port, '--data-dir', otherDir, '--mount-root', join(dataDir, 'mnt')],
      { MNEMO_ADMIN_KEY: server.adminKey },
      FAST,
    );
    expect(clash.timedOut).toBe(false);
    expect(clash.code).not.toBe(0);
    expect(clash.stderr).toContain(`cannot listen on 127.0.0.1:${port}: the address is already in use`);
    expect(clash.stderr).not.toContain('cleared stale mount');
    expect(await readThroughMount(file)).toBe('kept\n');
  });

  it('restore is refused while a server runs and while mnemo mount runs, and works once both are gone', async () => {
    const { server, dataDir } = await serverWithSession();
    const file = join(makeTempDir('mnemo-lock-bk-'), 'copy.db');
    onTestFinished(() => rmSync(join(file, '..'), { recursive: true, force: true }));
    expect((await runCli(['backup', file, '--data-dir', dataDir])).code).toBe(0);

    const underServer = await runCli(['restore', file, '--data-dir', dataDir], {}, FAST);
    expect(underServer.code).toBe(1);
    expect(underServer.stderr).toContain(`refusing to restore: a mnemo server (pid ${server.pid}) is running on ${dataDir}; stop it first`);

    const storeId = (await sdkClient(server.url, server.adminKey).beta.memoryStores.list()).data[0]!.id;
    await server.stop();

    const mnt = join(dataDir, 'local');
    mkdirSync(mnt);
    const mount = spawn(process.execPath, [MAIN_JS, 'mount', storeId, mnt, '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => mount.once('exit', (code) => resolve(code)));
    try {
      await new Promise<void>((resolve, reject) => {
        let err = '';
        mount.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
        mount.stdout.setEncoding('utf8').once('data', () => resolve());
        void exited.then((code) => reject(new Error(`mnemo mount exited (${code})\n${err}`)));
      });
      expect(await readThroughMount(join(mnt, 'kept.md'))).toBe('kept\n');

      const underMount = await runCli(['restore', file, '--data-dir', dataDir], {}, FAST);
      expect(underMount.code).toBe(1);
      expect(underMount.stderr).toContain(`refusing to restore: a mnemo process (mount, mcp or an admin command) is running on ${dataDir}`);
      expect(await readThroughMount(join(mnt, 'kept.md'))).toBe('kept\n');
    } finally {
      // Unmounted here (and waited for), before the data dir is removed.
      if (mount.exitCode === null && mount.signalCode === null) mount.kill('SIGINT');
      await exited;
    }
    expect(await exited).toBe(0);
    const restored = await runCli(['restore', file, '--data-dir', dataDir], {}, FAST);
    expect(restored.code, restored.stderr).toBe(0);
  });

  it('kill -9 of the server releases the data dir: a new serve starts on it and owns it', async () => {
    const { server, dataDir, file } = await serverWithSession();
    await server.kill9();
    const again = await startServer({ dataDir, env: { MNEMO_ADMIN_KEY: server.adminKey } });
    try {
      expect(await readThroughMount(file)).toBe('kept\n');
      const third = await runCli(['serve', '--port', '0', '--data-dir', dataDir], { MNEMO_ADMIN_KEY: server.adminKey }, FAST);
      expect(third.code).toBe(1);
      expect(third.stderr).toContain(`another server owns ${dataDir} (pid ${again.pid})`);
    } finally {
      // Stopped here, before the data dir is removed: a live mount must never be deleted under.
      await again.stop();
    }
  });
});

describe('restore beside mnemo mcp', () => {
  it('restore is refused while mnemo mcp runs on the data dir, and works after it exits', async () => {
    const dataDir = makeTempDir('mnemo-lock-mcp-');
    onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
    const server = await startServer({ dataDir });
    const file = join(dataDir, 'copy.db');
    expect((await runCli(['backup', file, '--data-dir', dataDir])).code).toBe(0);
    await server.stop();

    // A tool call answered means the mcp process is up and holds its lock.
    const mcp = await connectMcp('stdio', { dataDir } as RunningServer, server.adminKey);
    try {
      expect((await mcp.call('memory_list_stores')).isError).toBe(false);
      const refused = await runCli(['restore', file, '--data-dir', dataDir], {}, FAST);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`refusing to restore: a mnemo process (mount, mcp or an admin command) is running on ${dataDir}`);
    } finally {
      await mcp.close();
    }
    const restored = await runCli(['restore', file, '--data-dir', dataDir], {}, FAST);
    expect(restored.code, restored.stderr).toBe(0);
  });
});
