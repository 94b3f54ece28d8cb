/**
 * What an operator meets at the command line, through real CLI children and a real server: an
 * explicit --data-dir wins over MNEMO_DATABASE_URL from the environment; a bad flag value is a usage
 * error (exit 2, the flag named, the usage) and a bad environment value exit 1 naming the variable;
 * `--log-level silent` still says why a start failed; every request counts once in the metrics
 * (`unmatched` outside /v1 too); `mnemo check` reports engine damage as `problem:` lines only; and
 * `--help` lists every variable of the README's Configuration table.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { cpSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSync, readSync, writeSync, closeSync } from 'node:fs';
import { makeTempDir, REPO_ROOT, runCli, startServer } from '../helpers/server.js';
import { rawRequest } from '../helpers/sdk.js';

const FAST = { timeoutMs: 20_000 };
const ADMIN_KEY = 'mnemo-test-cli-operator-0123456789abcdef';
const base = makeTempDir('mnemo-operator-');
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('flags and the environment', () => {
  it('an explicit --data-dir wins over MNEMO_DATABASE_URL from the environment', async () => {
    const dir = join(base, 'nothing-here');
    const res = await runCli(['check', '--data-dir', dir], { MNEMO_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }, FAST);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`the data directory ${dir} does not exist`);
    expect(res.stderr).not.toMatch(/PostgreSQL|unavailable/);
  });

  it('a bad flag value exits 2 naming the flag, with the usage; the same value from the environment exits 1 naming the variable', async () => {
    const dir = join(base, 'flags');
    const cases: [string, string, string][] = [
      ['--mount-cache-seconds', '3601', 'MNEMO_MOUNT_CACHE_SECONDS'],
      ['--port', 'abc', 'MNEMO_PORT'],
      ['--log-level', 'bogus', 'MNEMO_LOG_LEVEL'],
      ['--max-body-bytes', '0', 'MNEMO_MAX_BODY_BYTES'],
      ['--idempotency-ttl-seconds', '0', 'MNEMO_IDEMPOTENCY_TTL_SECONDS'],
      ['--checkpoint-max-bytes', '1', 'MNEMO_CHECKPOINT_MAX_BYTES'],
    ];
    for (const [flag, value, env] of cases) {
      const byFlag = await runCli(['serve', '--data-dir', dir, flag, value], { MNEMO_ADMIN_KEY: ADMIN_KEY }, FAST);
      expect([byFlag.code, byFlag.stdout], flag).toEqual([2, '']);
      expect(byFlag.stderr, flag).toContain(`mnemo serve: invalid ${flag}: ${value} (`);
      expect(byFlag.stderr, flag).toMatch(/^usage: mnemo serve /m);
      const byEnv = await runCli(['serve', '--data-dir', dir], { MNEMO_ADMIN_KEY: ADMIN_KEY, [env]: value }, FAST);
      expect(byEnv.code, env).toBe(1);
      expect(byEnv.stderr, env).toContain(`invalid ${env}: ${value} (`);
      expect(byEnv.stderr, env).not.toContain('usage:');
    }
    // mount takes --mount-cache-seconds too: the same rule.
    const mount = await runCli(['mount', 'memstore_x', join(base, 'm'), '--data-dir', dir, '--mount-cache-seconds', '3601'], {}, FAST);
    expect(mount.code).toBe(2);
    expect(mount.stderr).toContain('mnemo mount: invalid --mount-cache-seconds: 3601 (');
  }, 90_000);

  it('--log-level silent still writes why the server cannot start, at error', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const res = await runCli(['serve', '--port', String(port), '--data-dir', join(base, 'silent'), '--log-level', 'silent'], { MNEMO_ADMIN_KEY: ADMIN_KEY }, FAST);
      expect(res.code).toBe(1);
      const lines = res.stderr.trim().split('\n');
      expect(JSON.parse(lines.at(-1)!)).toMatchObject({ level: 'error', msg: `mnemo: cannot listen on 127.0.0.1:${port}: the address is already in use (another server on this port?)` });
    } finally {
      busy.close();
    }
  });

  it('mnemo --help lists every environment variable of the README\'s Configuration table', async () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('### Limits'));
    const names = [...new Set([...table.matchAll(/^\| `(MNEMO_[A-Z_]+)`/gm)].map((m) => m[1]!))];
    expect(names).toContain('MNEMO_FUSE_TRACE');
    const help = (await runCli(['--help'], {}, FAST)).stdout;
    expect(names.filter((n) => !help.includes(n))).toEqual([]);
  });
});

describe('metrics', () => {
  it('counts every request once, with its route template or unmatched, outside /v1 too', async () => {
    const server = await startServer({ env: { MNEMO_METRICS_PUBLIC: '1' } });
    try {
      const count = async (route: string, status: string): Promise<number> => {
        const text = await (await fetch(`${server.url}/metrics`)).text();
        const line = text.split('\n').find((l) => l.startsWith(`mnemo_http_requests_total{method="GET",route="${route}",status="${status}"} `));
        return line === undefined ? 0 : Number(line.split(' ').at(-1));
      };
      const before404 = await count('unmatched', '404');
      expect((await rawRequest(server.url, 'GET', '/zzz')).status).toBe(404);
      expect((await rawRequest(server.url, 'GET', '/v1/zzz', { apiKey: server.adminKey })).status).toBe(404);
      expect(await count('unmatched', '404')).toBe(before404 + 2);
      // A console path with a trailing slash is a 301 to the path without it, counted once.
      const admin = await fetch(`${server.url}/admin/`, { redirect: 'manual' });
      expect(admin.status).toBe(301);
      const redirects = (await (await fetch(`${server.url}/metrics`)).text()).split('\n').filter((l) => l.startsWith('mnemo_http_requests_total{method="GET"') && l.includes('status="301"'));
      expect(redirects.reduce((n, l) => n + Number(l.split(' ').at(-1)), 0), redirects.join('\n')).toBe(1);
    } finally {
      await server.stop();
    }
  }, 30_000);
});

describe('mnemo check on damage below the domain', () => {
  /** A copy of a healthy data dir, damaged by `damage(fd, pageSize, indexRoot)`. */
  async function damagedCopy(name: string, damage: (fd: number, pageSize: number, indexRoot: number) => void): Promise<string> {
    const source = join(base, 'healthy');
    if (readdirSync(base).indexOf('healthy') < 0) {
      const server = await startServer({ dataDir: source });
      await rawRequest(server.url, 'POST', '/v1/memory_stores', { apiKey: server.adminKey, body: JSON.stringify({ name: 'h' }) });
      await server.stop();
    }
    const dir = join(base, name);
    cpSync(source, dir, { recursive: true, filter: (f) => !f.endsWith('mnt') && !f.endsWith('.pid') });
    const file = join(dir, 'mnemo.db');
    const db = new Database(file);
    db.pragma('wal_checkpoint(TRUNCATE)');
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const root = (db.prepare("SELECT rootpage FROM sqlite_master WHERE type = 'index' AND rootpage > 1 ORDER BY rootpage LIMIT 1").get() as { rootpage: number }).rootpage;
    db.close();
    const fd = openSync(file, 'r+');
    try {
      damage(fd, pageSize, root);
    } finally {
      closeSync(fd);
    }
    return dir;
  }

  it('an index page\'s cell count off: every line a problem: line, exit 1', async () => {
    const dir = await damagedCopy('cells', (fd, pageSize, root) => {
      const b = Buffer.alloc(2);
      readSync(fd, b, 0, 2, (root - 1) * pageSize + 3);
      b.writeUInt16BE(b.readUInt16BE(0) + 3);
      writeSync(fd, b, 0, 2, (root - 1) * pageSize + 3);
    });
    const res = await runCli(['check', '--data-dir', dir], {}, FAST);
    expect(res.code).toBe(1);
    const lines = res.stdout.trim().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((l) => !l.startsWith('problem: '))).toEqual([]);
    expect(lines.some((l) => /^problem: sqlite: Tree \d+ page \d+/.test(l))).toBe(true);
    expect(res.stdout).not.toContain('*** in database');
  });

  it('a damaged schema page: one problem line naming the file, exit 1', async () => {
    const dir = await damagedCopy('schema', (fd, pageSize) => {
      writeSync(fd, Buffer.alloc(pageSize - 100, 0xab), 0, pageSize - 100, 100);
    });
    const res = await runCli(['check', '--data-dir', dir], {}, FAST);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe(`problem: sqlite: the database file ${join(dir, 'mnemo.db')} is damaged (database disk image is malformed); restore it from a backup (mnemo restore)\n`);
  });
});

