/**
 * The mount root, through the real server: `serve` refuses to start (exit 1, a sentence naming the
 * path and why) when the mount root is a file or cannot be written; a mount that fails when a
 * session is created is a 503 envelope that says so, never a 500, and a warning in the log, as is a
 * session that cannot be remounted at start; a server mounts only under its own mount root, so
 * one started on a restored backup moves the copy's active sessions there.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FUSE_AVAILABLE, isMounted } from '../helpers/mount.js';
import { expectRawError, rawRequest } from '../helpers/sdk.js';
import { makeTempDir, runCli, startServer } from '../helpers/server.js';

const ADMIN_KEY = 'mnemo-test-mount-root-0123456789abcdef0123';
const base = makeTempDir('mnemo-mount-root-');
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('the mount root at start', () => {
  it('refuses a mount root that is a file: exit 1 naming the path, before anything listens', async () => {
    const file = join(base, 'afile');
    writeFileSync(file, '');
    const res = await runCli(['serve', '--port', '0', '--data-dir', join(base, 'd1')], { MNEMO_MOUNT_ROOT: file, MNEMO_ADMIN_KEY: ADMIN_KEY }, { timeoutMs: 15_000 });
    expect(res.timedOut).toBe(false);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain(`cannot use the mount root ${file}: it is a file, not a directory`);
  });

  it('refuses a mount root below a file (it cannot be created)', async () => {
    const root = join(base, 'afile2', 'mnt');
    writeFileSync(join(base, 'afile2'), '');
    const res = await runCli(['serve', '--port', '0', '--data-dir', join(base, 'd2'), '--mount-root', root], { MNEMO_ADMIN_KEY: ADMIN_KEY }, { timeoutMs: 15_000 });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`cannot use the mount root ${root}: a part of the path is a file, not a directory (ENOTDIR)`);
  });

  it.skipIf(!FUSE_AVAILABLE)('a mount that fails when a session is created is a 503 api_error saying why, not a 500', async () => {
    const root = join(base, 'later');
    mkdirSync(root);
    const server = await startServer({ args: ['--mount-root', root] });
    try {
      // The root goes bad behind the server's back.
      rmSync(root, { recursive: true });
      writeFileSync(root, '');
      const store = await rawRequest(server.url, 'POST', '/v1/memory_stores', { apiKey: server.adminKey, body: JSON.stringify({ name: 'mr' }) });
      const res = await rawRequest(server.url, 'POST', '/v1/sessions', {
        apiKey: server.adminKey,
        body: JSON.stringify({ resources: [{ type: 'memory_store', memory_store_id: (store.body as { id: string }).id }] }),
      });
      expectRawError(res, 503, 'api_error');
      expect((res.body as { error: { message: string } }).error.message).toMatch(/^could not mount the session's stores: .*ENOTDIR/);
      expect(server.stderr()).not.toContain('internal server error');
      expect(server.stderr()).toMatch(/"level":"warn".*"msg":"mnemo: warn: could not mount session sesn_\w+: .*ENOTDIR/);
    } finally {
      await server.stop();
    }
  });
});

interface WireSession {
  id: string;
  resources: { host_path: string }[];
}

async function openSession(url: string, name: string): Promise<WireSession> {
  const store = await rawRequest(url, 'POST', '/v1/memory_stores', { apiKey: ADMIN_KEY, body: JSON.stringify({ name }) });
  const res = await rawRequest(url, 'POST', '/v1/sessions', {
    apiKey: ADMIN_KEY,
    body: JSON.stringify({ resources: [{ type: 'memory_store', memory_store_id: (store.body as { id: string }).id }] }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as WireSession;
}

describe.skipIf(!FUSE_AVAILABLE)('active sessions at start', () => {
  it('a server started on a restored backup mounts its sessions under its own mount root, says so at warn, and leaves the original its mounts', async () => {
    const prodDir = join(base, 'prod');
    const drillDir = join(base, 'drill');
    const env = { MNEMO_ADMIN_KEY: ADMIN_KEY };
    let prod = await startServer({ dataDir: prodDir, env });
    let drill: Awaited<ReturnType<typeof startServer>> | null = null;
    try {
      const session = await openSession(prod.url, 'project notes');
      const prodPath = session.resources[0]!.host_path;
      expect(prodPath).toBe(join(prodDir, 'mnt', session.id, 'project-notes'));
      expect((await runCli(['backup', join(base, 'bk.db'), '--data-dir', prodDir])).code).toBe(0);
      expect((await runCli(['restore', join(base, 'bk.db'), '--data-dir', drillDir])).code).toBe(0);
      // A maintenance window: the original's mount points are free for the taking.
      await prod.stop();

      drill = await startServer({ dataDir: drillDir, env, args: ['--log-level', 'warn'] });
      const drillPath = join(drillDir, 'mnt', session.id, 'project-notes');
      expect(isMounted(prodPath)).toBe(false);
      expect(isMounted(drillPath)).toBe(true);
      const seen = (await rawRequest(drill.url, 'GET', `/v1/sessions/${session.id}`, { apiKey: ADMIN_KEY })).body as WireSession;
      expect(seen.resources[0]!.host_path).toBe(drillPath);
      expect((await rawRequest(drill.url, 'GET', '/readyz')).status).toBe(200);
      const moved = drill.stderr().split('\n').filter((l) => l.includes(`session ${session.id}`));
      expect(moved).toHaveLength(1);
      expect(moved[0]).toContain('"level":"warn"');
      expect(moved[0]).toContain(`mnemo: warn: session ${session.id} was mounted outside this server's mount root ${join(drillDir, 'mnt')}`);
      expect(moved[0]).toContain(`${prodPath} → ${drillPath}`);

      // The original comes back beside the copy and remounts its own session where it was.
      prod = await startServer({ dataDir: prodDir, env });
      expect(isMounted(prodPath)).toBe(true);
      expect((await rawRequest(prod.url, 'GET', '/readyz')).status).toBe(200);

      // The move is recorded: the copy's next start mounts there again without a word.
      await drill.stop();
      drill = await startServer({ dataDir: drillDir, env, args: ['--log-level', 'warn'] });
      expect(isMounted(drillPath)).toBe(true);
      expect(drill.stderr()).not.toContain(session.id);
    } finally {
      await drill?.stop();
      await prod.stop();
    }
  });

  it('a session that cannot be remounted at start is a warning naming it, kept at --log-level warn', async () => {
    const dataDir = join(base, 'blocked');
    const env = { MNEMO_ADMIN_KEY: ADMIN_KEY };
    let server = await startServer({ dataDir, env, args: ['--log-level', 'warn'] });
    try {
      const session = await openSession(server.url, 'blocked');
      await server.stop();
      // The session's directory becomes a file: its mount point cannot be made any more.
      rmSync(join(dataDir, 'mnt', session.id), { recursive: true });
      writeFileSync(join(dataDir, 'mnt', session.id), '');

      server = await startServer({ dataDir, env, args: ['--log-level', 'warn'] });
      expect((await rawRequest(server.url, 'GET', '/readyz')).status).toBe(503);
      expect(server.stderr()).toMatch(new RegExp(`"level":"warn".*"msg":"mnemo: warn: could not remount session ${session.id}: .*ENOTDIR`));
    } finally {
      await server.stop();
    }
  });
});
