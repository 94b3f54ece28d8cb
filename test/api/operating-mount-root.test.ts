/**
 * The mount root, through the real server: `serve` refuses to start (exit 1, a sentence naming the
 * path and why) when the mount root is a file or cannot be written; a mount that fails when a
 * session is created is a 503 envelope that says so, never a 500, and a warning in the log, as is a
 * session that cannot be remounted at start.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FUSE_AVAILABLE } from '../helpers/mount.js';
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
