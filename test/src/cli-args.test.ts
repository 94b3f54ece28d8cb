/**
 * The command line refuses what it does not understand (issue 11, item 10): unknown flags and
 * missing or extra arguments exit 2 with the command's usage on stderr; `--help`, `-h`,
 * `<cmd> --help` and `--version` answer on stdout; `keys create` needs `--role`; `--json` speaks
 * the API's snake_case. Every case drives `node dist/src/main.js` as a child process.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openCore } from '../helpers/core.js';
import { REPO_ROOT, runCli, startServer } from '../helpers/server.js';
import { tmpDir } from '../helpers/tmp.js';
import { loadConfig } from '../../src/cli/config.js';
import { commandFlags, parseArgs, USAGE } from '../../src/cli/args.js';
import { SCHEMA_VERSION } from '../../src/storage/sqlite/schema/migrations.js';
import { PG_SCHEMA_VERSION } from '../../src/storage/postgres/schema/migrations.js';

/** A data dir holding a mnemo database (and nothing running on it). */
async function dataDir(): Promise<string> {
  const core = await openCore();
  core.close();
  return core.dir;
}

const FAST = { timeoutMs: 15_000 };

describe('the command line', () => {
  it('refuses an unknown flag with exit 2 and the command\'s usage instead of starting with defaults', async () => {
    const dir = tmpDir('mnemo-args-');
    const res = await runCli(['serve', '--prot', '8000', '--data-dir', dir], {}, FAST);
    expect(res.timedOut, 'serve started despite --prot').toBe(false);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain('mnemo serve: unknown option --prot');
    expect(res.stderr).toMatch(/^usage: mnemo serve /m);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses extra and missing positional arguments with exit 2 and creates nothing', async () => {
    const dir = await dataDir();
    const cwd = tmpDir('mnemo-args-cwd-');
    const extra = await runCli(['backup', 'a', 'b', '--data-dir', dir], {}, { ...FAST, cwd });
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain('mnemo backup: unexpected argument: b');
    expect(extra.stderr).toContain('usage: mnemo backup <file> [--data-dir D | --database-url URL]');
    expect(readdirSync(cwd)).toEqual([]);

    const missing = await runCli(['mount', 'memstore_x', '--data-dir', dir], {}, FAST);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('mnemo mount: missing <dir>');
    expect(missing.stderr).toContain('usage: mnemo mount <memory_store_id> <dir>');

    const revoke = await runCli(['keys', 'revoke', '--data-dir', dir], {}, FAST);
    expect(revoke.code).toBe(2);
    expect(revoke.stderr).toContain('mnemo keys revoke: missing <apikey_id>');

    const sub = await runCli(['keys', 'rotate', '--data-dir', dir], {}, FAST);
    expect(sub.code).toBe(2);
    expect(sub.stderr).toContain('mnemo keys: unknown subcommand: rotate');

    const none = await runCli([], {}, FAST);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^usage: mnemo /m);

    const cmd = await runCli(['serv'], {}, FAST);
    expect(cmd.code).toBe(2);
    expect(cmd.stderr).toContain('mnemo: unknown command: serv');
  });

  it('a flag that needs a value and has none, or a switch given one, is exit 2', async () => {
    const dir = tmpDir('mnemo-args-');
    const noValue = await runCli(['serve', '--data-dir', dir, '--port'], {}, FAST);
    expect(noValue.timedOut).toBe(false);
    expect(noValue.code).toBe(2);
    expect(noValue.stderr).toContain('--port');
    const switchValue = await runCli(['keys', 'list', '--json=yes', '--data-dir', await dataDir()], {}, FAST);
    expect(switchValue.code).toBe(2);
    expect(switchValue.stderr).toContain('--json');
  });

  it('mnemo --help, -h and help print the usage to stdout and exit 0', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const res = await runCli(args, {}, FAST);
      expect(res.code, args.join(' ')).toBe(0);
      expect(res.stderr).toBe('');
      expect(res.stdout).toMatch(/^mnemo — versioned memory stores/);
      for (const cmd of ['serve', 'keys create', 'keys list', 'keys revoke', 'workspaces', 'check', 'backup', 'restore', 'mount', 'mcp']) {
        expect(res.stdout).toContain(`mnemo ${cmd}`);
      }
    }
  });

  it('mnemo help with a command it does not know says so and exits 2, like an unknown command', async () => {
    const res = await runCli(['help', 'nonsense'], {}, FAST);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain('mnemo help: unknown command: nonsense');
    expect(res.stderr).toMatch(/^usage: mnemo /m);

    const known = await runCli(['help', 'backup'], {}, FAST);
    expect(known.code).toBe(0);
    expect(known.stdout).toMatch(/^mnemo backup <file>/);
  });

  it('each command\'s usage, in its own help and in mnemo --help, names every flag its parser accepts and no other', () => {
    for (const { name, usage, flags } of commandFlags()) {
      const named = new Set([...usage.matchAll(/--([a-z-]+)/g)].map((m) => m[1]));
      expect([...named].sort(), name).toEqual([...flags].sort());
      expect(USAGE, name).toContain(usage.replace(/\n/g, '\n  '));
    }
  });

  it('mnemo <command> --help prints that command\'s usage to stdout and exits 0 without running it', async () => {
    const dir = tmpDir('mnemo-args-');
    const serve = await runCli(['serve', '--help', '--data-dir', dir], {}, FAST);
    expect(serve.timedOut).toBe(false);
    expect(serve.code).toBe(0);
    expect(serve.stdout).toMatch(/^mnemo serve \[--host H\] \[--port P\]/);
    expect(serve.stdout).toContain('--rotate-admin-key');
    expect(readdirSync(dir)).toEqual([]);

    const keys = await runCli(['keys', '--help'], {}, FAST);
    expect(keys.code).toBe(0);
    expect(keys.stdout).toContain('mnemo keys create --role');
    expect(keys.stdout).toContain('mnemo keys revoke <apikey_id>');

    const create = await runCli(['keys', 'create', '-h'], {}, FAST);
    expect(create.code).toBe(0);
    expect(create.stdout).toMatch(/^mnemo keys create --role admin\|read_write\|read_only/);
    expect(create.stdout).not.toContain('keys list');

    const backup = await runCli(['backup', '--help'], {}, FAST);
    expect(backup.code).toBe(0);
    expect(backup.stdout).toMatch(/^mnemo backup <file>/);
  });

  it('an empty path argument is exit 2 with the usage, not the working directory', async () => {
    const dir = await dataDir();
    const cwd = tmpDir('mnemo-args-cwd-');
    for (const args of [['backup', ''], ['restore', ''], ['mount', 'memstore_x', '']]) {
      const res = await runCli([...args, '--data-dir', dir], {}, { ...FAST, cwd });
      const name = args.length === 2 ? 'file' : 'dir';
      expect(res.timedOut, args.join(' ')).toBe(false);
      expect(res.code, `${args.join(' ')}\n${res.stderr}`).toBe(2);
      expect(res.stderr).toContain(`mnemo ${args[0]}: <${name}> is an empty path`);
      expect(res.stderr).toMatch(new RegExp(`^usage: mnemo ${args[0]} `, 'm'));
    }
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('a setting flag given an empty value is exit 2, while an empty environment variable counts as unset', async () => {
    // Run where an empty --data-dir would have landed: a working directory that holds a database.
    const cwd = await dataDir();
    for (const flag of [['--data-dir', ''], ['--data-dir='], ['--database-url', '']]) {
      const res = await runCli(['keys', 'list', ...flag], {}, { ...FAST, cwd });
      expect(res.code, `${flag.join(' ')}\n${res.stderr}`).toBe(2);
      expect(res.stdout).toBe('');
      expect(res.stderr).toContain(`mnemo keys list: ${flag[0]!.replace('=', '')} is empty (leave the flag out for its default)`);
      expect(res.stderr).toMatch(/^usage: mnemo keys list /m);
    }
    // Given as is, an empty --host listened on every interface.
    const host = await runCli(['serve', '--port', '0', '--host', '', '--data-dir', tmpDir('mnemo-args-')], {}, FAST);
    expect(host.timedOut, 'serve started with an empty --host').toBe(false);
    expect(host.code).toBe(2);
    expect(host.stderr).toContain('mnemo serve: --host is empty');

    expect(loadConfig({ MNEMO_DATA_DIR: '' }).dataDir).toBe(loadConfig({}).dataDir);
    expect(loadConfig({ MNEMO_HOST: '' }).host).toBe('127.0.0.1');
  });

  it('--data-dir and --database-url together are exit 2 for every command whose usage makes them alternatives, but not for serve', async () => {
    const dir = await dataDir();
    for (const args of [['keys', 'list'], ['check'], ['workspaces', 'create', 'team'], ['mount', 'memstore_x', join(dir, 'mnt')], ['mcp']]) {
      const res = await runCli([...args, '--data-dir', dir, '--database-url', 'postgres://nobody@nope.invalid/x'], { MNEMO_API_KEY: 'mnemo-sk-any' }, FAST);
      const name = args.slice(0, args[0] === 'keys' || args[0] === 'workspaces' ? 2 : 1).join(' ');
      expect(res.timedOut, name).toBe(false);
      expect(res.code, `${name}\n${res.stderr}`).toBe(2);
      expect(res.stderr).toContain(`mnemo ${name}: --data-dir and --database-url are alternatives: give one or the other`);
      expect(res.stderr).toMatch(new RegExp(`^usage: mnemo ${name} `, 'm'));
    }
    // serve keeps its pid file, locks and default mount root in the data directory beside PostgreSQL.
    expect(parseArgs(['serve', '--data-dir', dir, '--database-url', 'postgres://nobody@db/x'])).toMatchObject({ kind: 'run', command: 'serve' });
  });

  it('mnemo --version prints the package version, then the schema versions it reads and writes, and exits 0', async () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    const res = await runCli(['--version'], {}, FAST);
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(`${version}\nschema versions: SQLite ${SCHEMA_VERSION}, PostgreSQL ${PG_SCHEMA_VERSION} (mnemo check shows a database's)\n`);
  });

  it('keys create without --role is exit 2 and mints no key', async () => {
    const dir = await dataDir();
    const count = async () => (JSON.parse((await runCli(['keys', 'list', '--json', '--data-dir', dir])).stdout) as unknown[]).length;
    const before = await count();
    const res = await runCli(['keys', 'create', '--name', 'who', '--data-dir', dir], {}, FAST);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain('mnemo keys create: --role is required');
    expect(res.stderr).toContain('usage: mnemo keys create --role admin|read_write|read_only');
    expect(await count()).toBe(before);

    const bad = await runCli(['keys', 'create', '--role', 'root', '--data-dir', dir], {}, FAST);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('invalid role: root');
    expect(await count()).toBe(before);
  });

  it('--json output uses the API\'s snake_case field names', async () => {
    const dir = await dataDir();
    const ws = await runCli(['workspaces', 'create', 'json team', '--data-dir', dir]);
    expect(ws.code, ws.stderr).toBe(0);
    const wsId = ws.stdout.trim();
    const made = await runCli(['keys', 'create', '--role', 'read_only', '--name', 'reader', '--workspace', wsId, '--data-dir', dir]);
    expect(made.code, made.stderr).toBe(0);

    const keys = await runCli(['keys', 'list', '--workspace', wsId, '--json', '--data-dir', dir]);
    expect(keys.code, keys.stderr).toBe(0);
    const [key] = JSON.parse(keys.stdout) as Record<string, unknown>[];
    expect(Object.keys(key!).sort()).toEqual(
      ['all_workspaces', 'created_at', 'id', 'memory_store_ids', 'name', 'revoked_at', 'role', 'type', 'workspace_id'].sort(),
    );
    expect(key).toMatchObject({ type: 'api_key', name: 'reader', role: 'read_only', workspace_id: wsId, memory_store_ids: null, all_workspaces: false, revoked_at: null });

    const list = await runCli(['workspaces', 'list', '--json', '--data-dir', dir]);
    expect(list.code, list.stderr).toBe(0);
    const workspaces = JSON.parse(list.stdout) as Record<string, unknown>[];
    expect(workspaces.find((w) => w['id'] === wsId)).toEqual({ type: 'workspace', id: wsId, name: 'json team', created_at: expect.any(String) });
  });

  it('serve accepts every configuration flag, --log-level and --rotate-admin-key', async () => {
    const dir = tmpDir('mnemo-args-');
    const server = await startServer({
      dataDir: dir,
      args: [
        '--host', '127.0.0.1',
        '--max-body-bytes', '65536',
        '--idempotency-ttl-seconds', '60',
        '--checkpoint-max-bytes', '4096',
        '--log-level', 'info',
        '--mount-sync', 'close',
        '--mount-cache-seconds', '5',
        '--rotate-admin-key',
      ],
    });
    try {
      const res = await fetch(`${server.url}/v1/memory_stores`, { headers: { 'x-api-key': server.adminKey } });
      expect(res.status).toBe(200);
    } finally {
      await server.stop();
    }
    expect(existsSync(join(dir, 'mnemo.db'))).toBe(true);
  });

  it('the kernel cache of mounts is whole seconds from 0 to 3600, default 1, the flag over the environment', () => {
    expect(loadConfig({}).mountCacheSeconds).toBe(1);
    expect(loadConfig({ MNEMO_MOUNT_CACHE_SECONDS: '0' }).mountCacheSeconds).toBe(0);
    expect(loadConfig({ MNEMO_MOUNT_CACHE_SECONDS: '30' }, { 'mount-cache-seconds': '3600' }).mountCacheSeconds).toBe(3600);
    for (const bad of ['-1', '1.5', '3601', 'soon', ' 2']) {
      expect(() => loadConfig({ MNEMO_MOUNT_CACHE_SECONDS: bad })).toThrow(`invalid MNEMO_MOUNT_CACHE_SECONDS: ${bad} (whole seconds, 0 to 3600)`);
    }
  });

  it('MNEMO_MOUNT_SPIN_US is whole microseconds from 0 to 10000, default 0 (off)', () => {
    expect(loadConfig({}).mountSpinUs).toBe(0);
    expect(loadConfig({ MNEMO_MOUNT_SPIN_US: '0' }).mountSpinUs).toBe(0);
    expect(loadConfig({ MNEMO_MOUNT_SPIN_US: '500' }).mountSpinUs).toBe(500);
    expect(loadConfig({ MNEMO_MOUNT_SPIN_US: '10000' }).mountSpinUs).toBe(10_000);
    for (const bad of ['-1', '1.5', '10001', '99999', 'fast', ' 500']) {
      expect(() => loadConfig({ MNEMO_MOUNT_SPIN_US: bad })).toThrow(`invalid MNEMO_MOUNT_SPIN_US: ${bad} (whole microseconds, 0 to 10000)`);
    }
  });

  it('a bad MNEMO_MOUNT_SPIN_US stops serve at start with a sentence naming it, and --help lists it', async () => {
    const dir = tmpDir('mnemo-args-');
    const env = await runCli(['serve', '--port', '0', '--data-dir', dir], { MNEMO_MOUNT_SPIN_US: 'fast' }, FAST);
    expect(env.timedOut).toBe(false);
    expect(env.code).toBe(1);
    expect(env.stderr).toContain('invalid MNEMO_MOUNT_SPIN_US: fast (whole microseconds, 0 to 10000)');
    expect(env.stdout).toBe('');
    expect((await runCli(['--help'], {}, FAST)).stdout).toContain('MNEMO_MOUNT_SPIN_US');
  });

  // Item 5: it was accepted, and the first SIGUSR2 or session end crashed the server.
  it('a MNEMO_FUSE_TRACE file that cannot be written stops serve at start with a sentence naming it', async () => {
    const dir = tmpDir('mnemo-args-');
    const trace = join(dir, 'missing', 'trace.json');
    const res = await runCli(['serve', '--port', '0', '--data-dir', join(dir, 'data')], { MNEMO_FUSE_TRACE: trace }, FAST);
    expect(res.timedOut).toBe(false);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`invalid MNEMO_FUSE_TRACE: ${trace} (the directory ${join(dir, 'missing')} does not exist; a file this process can write, or unset)`);
    expect(res.stdout).toBe('');
  });

  it('--mount-sync takes only fsync or close: anything else exits 2 with the usage, and a bad MNEMO_MOUNT_SYNC stops serve at start', async () => {
    const dir = tmpDir('mnemo-args-');
    const bad = await runCli(['serve', '--port', '0', '--data-dir', dir, '--mount-sync', 'always'], {}, FAST);
    expect(bad.timedOut).toBe(false);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('mnemo serve: invalid --mount-sync: always (fsync or close)');
    expect(bad.stderr).toMatch(/^usage: mnemo serve /m);
    expect(readdirSync(dir)).toEqual([]);

    const mount = await runCli(['mount', 'memstore_x', dir, '--mount-sync', 'never'], {}, FAST);
    expect(mount.code).toBe(2);
    expect(mount.stderr).toContain('mnemo mount: invalid --mount-sync: never (fsync or close)');

    // Like every other bad setting from the environment: a sentence naming it, exit 1, nothing started.
    const env = await runCli(['serve', '--port', '0', '--data-dir', dir], { MNEMO_MOUNT_SYNC: 'sometimes' }, FAST);
    expect(env.timedOut).toBe(false);
    expect(env.code).toBe(1);
    expect(env.stderr).toContain('invalid MNEMO_MOUNT_SYNC: sometimes (fsync or close)');
    expect(env.stdout).toBe('');

    const help = await runCli(['serve', '--help'], {}, FAST);
    expect(help.stdout).toContain('[--mount-sync fsync|close]');
    const all = await runCli(['--help'], {}, FAST);
    expect(all.stdout).toContain('--mount-sync fsync (default)');
    expect(all.stdout).toContain('MNEMO_MOUNT_SYNC');
  });
});
