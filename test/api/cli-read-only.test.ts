/**
 * The commands that only read, on a database they may not write, through real CLI children: a
 * healthy copy owned by `nobody` with mode 444, checked, listed and backed up as `nobody` (twice,
 * so the -wal/-shm the first run left are there the second time), is reported healthy and copied,
 * with no re-index recommended; on a read-only file system every command says which path and why
 * (EROFS), never SQLite's "unable to open database file". Needs root (runuser, mount); skipped otherwise.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { rawRequest } from '../helpers/sdk.js';
import { MAIN_JS, runCli, startServer, type CliResult } from '../helpers/server.js';
import { SCHEMA_VERSION } from '../../src/storage/sqlite/schema/migrations.js';

const IS_ROOT = process.getuid?.() === 0;
const HAS_RUNUSER = IS_ROOT && (() => {
  try {
    execFileSync('runuser', ['-u', 'nobody', '--', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** `node main.js <args>` as nobody, stopped after `timeoutMs` (timedOut then). */
function asNobody(args: string[], timeoutMs = 30_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MNEMO_')) env[k] = v;
    const child = spawn('runuser', ['-u', 'nobody', '--', process.execPath, MAIN_JS, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}

const base = mkdtempSync('/tmp/mnemo-ro-');
chmodSync(base, 0o755);
const source = join(base, 'source');
afterAll(() => {
  if (existsSync(join(base, 'ro'))) {
    try {
      execFileSync('umount', ['-l', join(base, 'ro')], { stdio: 'ignore' });
    } catch {
      // not mounted
    }
  }
  rmSync(base, { recursive: true, force: true });
});

beforeAll(async () => {
  if (!IS_ROOT) return;
  const server = await startServer({ dataDir: source });
  const res = await rawRequest(server.url, 'POST', '/v1/memory_stores', { apiKey: server.adminKey, body: JSON.stringify({ name: 'ro' }) });
  expect(res.status).toBe(200);
  await server.stop();
}, 30_000);

/** A copy of the healthy data dir owned by nobody, its database mode 444. */
function nobodysCopy(name: string): string {
  const dir = join(base, name);
  cpSync(source, dir, { recursive: true, filter: (f) => !f.endsWith('mnt') && !f.endsWith('.pid') });
  execFileSync('chown', ['-R', 'nobody', dir]);
  chmodSync(join(dir, 'mnemo.db'), 0o444);
  return dir;
}

describe.skipIf(!HAS_RUNUSER)('commands that only read, on a database this user may not write', () => {
  it('check, keys list and workspaces list report it healthy, twice, recommending no re-index', async () => {
    const dir = nobodysCopy('check');
    for (let i = 0; i < 2; i++) {
      const check = await asNobody(['check', '--data-dir', dir]);
      expect(check.stderr).not.toMatch(/readonly|re-index/);
      expect([check.code, check.stdout]).toEqual([0, `ok: ${dir}/mnemo.db (schema version ${SCHEMA_VERSION}) passed the integrity check and every domain invariant\n`]);
      const keys = await asNobody(['keys', 'list', '--data-dir', dir]);
      expect([keys.code, keys.stderr]).toEqual([0, '']);
      expect(keys.stdout).toMatch(/^apikey_/);
      const ws = await asNobody(['workspaces', 'list', '--data-dir', dir]);
      expect([ws.code, ws.stderr]).toEqual([0, '']);
    }
    // The database file itself is untouched.
    expect(statSync(join(dir, 'mnemo.db')).mode & 0o777).toBe(0o444);
  }, 60_000);

  it('backup finishes, twice, with whole copies and nothing else left', async () => {
    const dir = nobodysCopy('backup');
    const out = join(base, 'out');
    mkdirSync(out);
    chmodSync(out, 0o777);
    for (const name of ['one.db', 'two.db']) {
      const res = await asNobody(['backup', join(out, name), '--data-dir', dir]);
      expect(res.timedOut).toBe(false);
      expect([res.code, res.stderr]).toEqual([0, `backed up ${dir}/mnemo.db to ${join(out, name)}\n`]);
      expect(statSync(join(out, name)).size).toBeGreaterThan(0);
    }
    expect(readdirSync(out).sort()).toEqual(['one.db', 'two.db']);
  }, 90_000);
});

describe.skipIf(!IS_ROOT)('a data directory on a read-only file system', () => {
  const ro = join(base, 'ro');
  let mounted = false;
  beforeAll(() => {
    mkdirSync(ro, { recursive: true });
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', ro], { stdio: 'ignore' });
      // Without a -wal or -shm (a server that exits cleanly leaves none): with them, SQLite can read a
      // WAL database on a read-only file system, and `check` rightly succeeds.
      cpSync(source, join(ro, 'd'), { recursive: true, filter: (f) => !f.endsWith('mnt') && !f.includes('lock') && !f.endsWith('.pid') && !/-(wal|shm)$/.test(f) });
      execFileSync('mount', ['-o', 'remount,ro', ro], { stdio: 'ignore' });
      mounted = true;
    } catch {
      mounted = false;
    }
  });

  it('every command says which path it cannot use and why, never "unable to open database file"', async (ctx) => {
    if (!mounted) ctx.skip();
    const d = join(ro, 'd');
    const env = { MNEMO_ADMIN_KEY: 'mnemo-test-read-only-fs-0123456789abcdef' };
    const backup = join(base, 'ro-copy.db');
    const cases: [string[], RegExp][] = [
      [['check', '--data-dir', d], /cannot read the database file .*\/d\/mnemo\.db: .*read-only file system \(EROFS\)/],
      [['keys', 'list', '--data-dir', d], /cannot read the database file .*\/d\/mnemo\.db: .*read-only file system \(EROFS\)/],
      [['keys', 'create', '--role', 'admin', '--data-dir', d], /cannot use the lock file .*\/d\/mnemo\.users\.lock: .*read-only file system \(EROFS\)/],
      [['backup', backup, '--data-dir', d], /cannot read the database file .*\/d\/mnemo\.db: .*read-only file system \(EROFS\)/],
      [['restore', join(source, 'mnemo.db'), '--data-dir', d], /cannot use the lock file .*\/d\/mnemo\.lock: .*read-only file system \(EROFS\)/],
      [['serve', '--port', '0', '--data-dir', d], /cannot use the lock file .*\/d\/mnemo\.users\.lock: .*read-only file system \(EROFS\)/],
      [['serve', '--port', '0', '--data-dir', join(ro, 'new')], /cannot create the data directory .*\/ro\/new: .*read-only file system \(EROFS\)/],
    ];
    for (const [args, said] of cases) {
      const res = await runCli(args, env, { timeoutMs: 20_000 });
      expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(1);
      expect(res.stderr, args.join(' ')).toMatch(said);
      expect(res.stderr).not.toMatch(/unable to open database file|does not exist/);
    }
    expect(existsSync(backup)).toBe(false);
  }, 120_000);
});
