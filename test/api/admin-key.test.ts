/**
 * The seeded admin key (MNEMO_ADMIN_KEY) is ONE key: a restart with another key is refused unless
 * `--rotate-admin-key`, which revokes the old key; keys shorter than 32 characters are refused.
 * Drives `mnemo serve` as a child process on one data directory.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN_JS, makeTempDir, startServer, type RunningServer } from '../helpers/server.js';
import { rawRequest } from '../helpers/sdk.js';

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

const newKey = () => `mnemo-test-${randomBytes(18).toString('hex')}`;

/** Runs `mnemo serve` expecting it to refuse and exit; one that keeps running is stopped (by its PID) after 20 s. */
function serveExpectingExit(dataDir: string, adminKey: string, args: string[] = []): Promise<Exit> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MNEMO_')) env[k] = v;
  const child = spawn(process.execPath, [MAIN_JS, 'serve', '--port', '0', '--data-dir', dataDir, '--mount-root', join(dataDir, 'mnt'), ...args], {
    env: { ...env, MNEMO_ADMIN_KEY: adminKey },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const timer = setTimeout(() => process.kill(child.pid!, 'SIGTERM'), 20_000);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function status(server: RunningServer, key: string): Promise<number> {
  return (await rawRequest(server.url, 'GET', '/v1/memory_stores', { apiKey: key })).status;
}

interface WireKey {
  id: string;
  all_workspaces: boolean;
  revoked_at: string | null;
}

async function liveOperatorKeys(server: RunningServer, key: string): Promise<WireKey[]> {
  const res = await rawRequest(server.url, 'GET', '/v1/api_keys?limit=100', { apiKey: key });
  expect(res.status).toBe(200);
  const keys = (res.body as { data: WireKey[] }).data;
  return keys.filter((k) => k.all_workspaces && k.revoked_at === null);
}

let dataDir: string;
const first = newKey();
const second = newKey();

beforeAll(() => {
  dataDir = makeTempDir('mnemo-admin-key-');
});
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the seeded admin key', () => {
  it('refuses a restart with another MNEMO_ADMIN_KEY (exit 1, naming --rotate-admin-key) and the first key keeps working', async () => {
    const s1 = await startServer({ dataDir, env: { MNEMO_ADMIN_KEY: first } });
    await s1.stop();

    const refused = await serveExpectingExit(dataDir, second);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/MNEMO_ADMIN_KEY is not the admin key this database was seeded with/);
    expect(refused.stderr).toContain('--rotate-admin-key');
    expect(refused.stdout).toBe('');

    const s2 = await startServer({ dataDir, env: { MNEMO_ADMIN_KEY: first } });
    try {
      expect(await status(s2, first)).toBe(200);
      expect(await status(s2, second)).toBe(401);
      expect(await liveOperatorKeys(s2, first)).toHaveLength(1);
    } finally {
      await s2.stop();
    }
  });

  it('with --rotate-admin-key makes the new key the only operator key and the old one fails with 401', async () => {
    const s = await startServer({ dataDir, env: { MNEMO_ADMIN_KEY: second }, args: ['--rotate-admin-key'] });
    try {
      expect(s.stderr()).toMatch(/admin key rotated: apikey_\S+ is revoked/);
      expect(await status(s, second)).toBe(200);
      expect(await status(s, first)).toBe(401);
      expect(await liveOperatorKeys(s, second)).toHaveLength(1);
    } finally {
      await s.stop();
    }
  });

  it('cannot be swapped back by a server that still has the old key', async () => {
    const refused = await serveExpectingExit(dataDir, first);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/revoked key apikey_/);
    const s = await startServer({ dataDir, env: { MNEMO_ADMIN_KEY: second } });
    try {
      expect(await status(s, second)).toBe(200);
      expect(await status(s, first)).toBe(401);
    } finally {
      await s.stop();
    }
  });

  it('refuses an MNEMO_ADMIN_KEY shorter than 32 characters with exit 1 and a message', async () => {
    const dir = makeTempDir('mnemo-admin-short-');
    try {
      const refused = await serveExpectingExit(dir, 'too-short-a-key');
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/MNEMO_ADMIN_KEY is 15 characters long; it must have at least 32/);
      expect(refused.stdout).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an MNEMO_ADMIN_KEY with a blank or a control character (no header could send it whole) with exit 1 and a message', async () => {
    for (const key of ['0123456789abcdef0123456789abcdef0123456789abcdef ', ' 0123456789abcdef0123456789abcdef', '0123456789abcdef\t0123456789abcdef0']) {
      const dir = makeTempDir('mnemo-admin-blank-');
      try {
        const refused = await serveExpectingExit(dir, key);
        expect(refused.code, JSON.stringify(key)).toBe(1);
        expect(refused.stderr).toMatch(/MNEMO_ADMIN_KEY holds a blank, a control character or a non-ASCII one/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });

  it('refuses --rotate-admin-key without MNEMO_ADMIN_KEY', async () => {
    const dir = makeTempDir('mnemo-admin-rot-');
    try {
      const refused = await serveExpectingExit(dir, '', ['--rotate-admin-key']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/--rotate-admin-key needs MNEMO_ADMIN_KEY/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a generated key is printed once on stdout (what docker logs shows), and a later MNEMO_ADMIN_KEY needs --rotate-admin-key', async () => {
    const dir = makeTempDir('mnemo-admin-gen-');
    try {
      const firstStart = await serveUntilLines(dir, 2);
      expect(firstStart[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const generated = /^admin key \(shown once, store it now\): (mnemo-sk-\S+)$/.exec(firstStart[1] ?? '')?.[1];
      expect(generated).toBeDefined();
      const again = await serveUntilLines(dir, 1, 1500);
      expect(again.join('\n')).not.toContain('admin key');

      const chosen = newKey();
      const refused = await serveExpectingExit(dir, chosen);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('--rotate-admin-key');
      const s = await startServer({ dataDir: dir, env: { MNEMO_ADMIN_KEY: chosen }, args: ['--rotate-admin-key'] });
      try {
        expect(await status(s, chosen)).toBe(200);
        expect(await status(s, generated!)).toBe(401);
        expect(await liveOperatorKeys(s, chosen)).toHaveLength(1);
      } finally {
        await s.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * Runs `mnemo serve` without MNEMO_ADMIN_KEY until it printed `lines` stdout lines (then waits
 * `linger` ms for more), stops it by its PID and returns what it printed.
 */
function serveUntilLines(dataDir: string, lines: number, linger = 0): Promise<string[]> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MNEMO_')) env[k] = v;
  const child = spawn(process.execPath, [MAIN_JS, 'serve', '--port', '0', '--data-dir', dataDir, '--mount-root', join(dataDir, 'mnt')], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  return new Promise((resolve, reject) => {
    const stop = () => process.kill(child.pid!, 'SIGTERM');
    const timer = setTimeout(stop, 20_000);
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      if (stdout.split('\n').length > lines) {
        clearTimeout(timer);
        setTimeout(stop, linger);
      }
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`serve exited ${code}\n${stderr}`));
      else resolve(stdout.split('\n').filter(Boolean));
    });
  });
}
