/**
 * A wrong `--data-dir` is an error, not a new database (issue 11, item 11): every command but
 * `serve` (and `restore` into an empty or new directory) refuses a directory without mnemo.db,
 * names the path, exits 1 and creates nothing. File errors are sentences naming the path. And a
 * restore leaves its backup file as it was: no -wal/-shm beside it, the same bytes (item 15c).
 */
import { createHash, randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openCore, withRaw } from '../helpers/core.js';
import { UNDO_MIGRATION_25 } from '../helpers/schema-undo.js';
import { SCHEMA_VERSION } from '../../src/storage/sqlite/schema/migrations.js';
import { jsonRequest } from '../helpers/sdk.js';
import { runCli, startServer } from '../helpers/server.js';
import { tmpDir } from '../helpers/tmp.js';

const FAST = { timeoutMs: 15_000 };

/** A data dir holding a mnemo database with one store and a memory, nothing running on it. */
async function populatedDir(): Promise<string> {
  const core = await openCore();
  const s = await core.service.createStore(core.caller, { name: 'kept', description: '', metadata: {} });
  await core.service.createMemory(core.caller, s.id, { path: '/a.md', content: 'hello' });
  core.close();
  return core.dir;
}

/** Every command but serve and restore, as it would be typed against `dir`. */
const commands = (dir: string, scratch: string): string[][] => [
  ['check', '--data-dir', dir],
  ['keys', 'list', '--data-dir', dir],
  ['keys', 'create', '--role', 'admin', '--data-dir', dir],
  ['keys', 'revoke', 'apikey_nope', '--data-dir', dir],
  ['workspaces', 'list', '--data-dir', dir],
  ['workspaces', 'create', 'team', '--data-dir', dir],
  ['backup', join(scratch, 'copy.db'), '--data-dir', dir],
  ['mount', 'memstore_nope', join(scratch, 'mnt'), '--data-dir', dir],
  ['mcp', '--data-dir', dir],
];

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

describe('a data directory without a database', () => {
  it('every command but serve refuses a missing data directory, names it, exits 1 and creates nothing', async () => {
    const parent = tmpDir('mnemo-nodb-');
    const scratch = tmpDir('mnemo-nodb-scratch-');
    const dir = join(parent, 'typo');
    for (const args of commands(dir, scratch)) {
      const res = await runCli(args, { MNEMO_API_KEY: 'mnemo-sk-whatever' }, FAST);
      expect(res.timedOut, args.join(' ')).toBe(false);
      expect(res.code, `${args.join(' ')}\n${res.stderr}`).toBe(1);
      expect(res.stderr).toContain(`the data directory ${dir} does not exist`);
      expect(existsSync(dir), args.join(' ')).toBe(false);
    }
    expect(readdirSync(scratch)).toEqual([]);
  });

  it('every command but serve refuses an existing directory that holds no mnemo.db and leaves it unchanged', async () => {
    const dir = tmpDir('mnemo-nodb-');
    writeFileSync(join(dir, 'notes.txt'), 'mine\n');
    const scratch = tmpDir('mnemo-nodb-scratch-');
    for (const args of commands(dir, scratch)) {
      const res = await runCli(args, { MNEMO_API_KEY: 'mnemo-sk-whatever' }, FAST);
      expect(res.timedOut, args.join(' ')).toBe(false);
      expect(res.code, `${args.join(' ')}\n${res.stderr}`).toBe(1);
      expect(res.stderr).toContain(`no mnemo database in ${dir} (${join(dir, 'mnemo.db')} does not exist`);
      expect(readdirSync(dir), args.join(' ')).toEqual(['notes.txt']);
    }
    expect(readdirSync(scratch)).toEqual([]);
  });

  it('serve refuses a data directory that is a file, with a sentence', async () => {
    const file = join(tmpDir('mnemo-nodb-'), 'plain');
    writeFileSync(file, 'x');
    const res = await runCli(['serve', '--port', '0', '--data-dir', file], {}, FAST);
    expect(res.timedOut).toBe(false);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`the data directory ${file} is not a directory`);
    expect(readFileSync(file, 'utf8')).toBe('x');
  });
});

describe('a data directory with an older schema', () => {
  /** The file as an older release left it: schema 23, before migration 25. */
  const makeOlder = (dir: string) => withRaw(join(dir, 'mnemo.db'), (raw) => raw.exec(`${UNDO_MIGRATION_25} PRAGMA user_version = 24;`));
  const schemaOf = (dir: string) => withRaw(join(dir, 'mnemo.db'), (raw) => raw.pragma('user_version', { simple: true }));
  const migrating = (dir: string, scratch: string) => commands(dir, scratch).filter((c) => c[0] !== 'backup');

  it("no command migrates it under a running server: each refuses, naming the server's pid and to stop it first", async () => {
    const dir = await populatedDir();
    const scratch = tmpDir();
    const server = await startServer({ dataDir: dir });
    try {
      makeOlder(dir);
      for (const args of migrating(dir, scratch)) {
        const res = await runCli(args, { MNEMO_API_KEY: 'mnemo-sk-none' }, FAST);
        expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(1);
        expect(res.stderr, args.join(' ')).toContain(`has schema version 24, older than this mnemo's (${SCHEMA_VERSION}), and a mnemo server (pid ${server.pid}) of an older release is running on it`);
        expect(res.stderr, args.join(' ')).toContain('stop it first, then start this release\'s mnemo serve, which migrates it');
        expect(schemaOf(dir)).toBe(24);
      }
      // A backup only reads, and is what an operator takes before the upgrade.
      expect((await runCli(['backup', join(scratch, 'before.db'), '--data-dir', dir], {}, FAST)).code).toBe(0);
    } finally {
      await server.stop();
    }
  });

  it('serve migrates it and says so in one line: the file, from which schema version to which, how long; mnemo check then shows the version', async () => {
    const dir = await populatedDir();
    makeOlder(dir);
    const server = await startServer({ dataDir: dir });
    try {
      expect(server.stderr()).toMatch(new RegExp(`"msg":"mnemo: migrated ${join(dir, 'mnemo.db')} from schema 24 to ${SCHEMA_VERSION} in \\d+\\.\\d\\d s"`));
    } finally {
      await server.stop();
    }
    const check = await runCli(['check', '--data-dir', dir], {}, FAST);
    expect(check.stdout).toBe(`ok: ${join(dir, 'mnemo.db')} (schema version ${SCHEMA_VERSION}) passed the integrity check and every domain invariant\n`);
  });

  it('with no server, the admin commands refuse it alike, writing or not, while mcp (as mount and serve) migrates it', async () => {
    const dir = await populatedDir();
    makeOlder(dir);
    for (const args of migrating(dir, tmpDir()).filter((c) => c[0] !== 'mount' && c[0] !== 'mcp')) {
      const res = await runCli(args, {}, FAST);
      expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(1);
      expect(res.stderr, args.join(' ')).toContain('has schema version 24, older than this mnemo\'s');
      expect(res.stderr, args.join(' ')).toContain('start mnemo serve on it once to migrate it, then run this again');
      expect(schemaOf(dir)).toBe(24);
    }
    await runCli(['mcp', '--data-dir', dir], { MNEMO_API_KEY: 'mnemo-sk-none' }, FAST);
    expect(schemaOf(dir)).toBe(SCHEMA_VERSION);
  });
});

describe('file errors are sentences naming the path', () => {
  it('backup into a directory that does not exist names it', async () => {
    const dir = await populatedDir();
    const dest = join(tmpDir('mnemo-bk-'), 'missing', 'copy.db');
    const res = await runCli(['backup', dest, '--data-dir', dir], {}, FAST);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`cannot write ${dest}: the directory ${join(dest, '..')} does not exist`);
    expect(res.stderr).not.toMatch(/ENOENT|SQLITE_/);
  });

  it('backup to a place that takes no file, or under a name too long, says so and names the path, not SQLite\'s "unable to open database file"', async () => {
    const dir = await populatedDir();
    const scratch = tmpDir('mnemo-bk-');
    const long = join(scratch, `${'x'.repeat(300)}.db`);
    for (const [dest, why] of [['/proc/copy.db', /no such file or directory \(ENOENT\)|permission denied \(EACCES\)/], [long, /name too long \(ENAMETOOLONG\)/]] as const) {
      const res = await runCli(['backup', dest, '--data-dir', dir], {}, FAST);
      expect(res.code, res.stderr).toBe(1);
      expect(res.stderr).toContain(`mnemo: cannot write the backup to ${dest}: `);
      expect(res.stderr).toMatch(why);
      expect(res.stderr).not.toContain('unable to open database file');
    }
    expect(readdirSync(scratch)).toEqual([]);
  });

  it('backup onto an existing file refuses and leaves the file alone', async () => {
    const dir = await populatedDir();
    const dest = join(tmpDir('mnemo-bk-'), 'taken.db');
    writeFileSync(dest, 'precious');
    const res = await runCli(['backup', dest, '--data-dir', dir], {}, FAST);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`${dest} already exists; back up into a new file`);
    expect(readFileSync(dest, 'utf8')).toBe('precious');
  });

  it('restore from a missing file names it and creates no data directory', async () => {
    const target = join(tmpDir('mnemo-rs-'), 'new-data');
    const missing = join(tmpDir('mnemo-rs-'), 'nope.db');
    const res = await runCli(['restore', missing, '--data-dir', target], {}, FAST);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`refusing to restore: the backup file ${missing} does not exist`);
    expect(existsSync(target)).toBe(false);
  });

  it('restore from a file that is not a database into a new directory leaves no directory behind', async () => {
    const target = join(tmpDir('mnemo-rs-'), 'new-data');
    const junk = join(tmpDir('mnemo-rs-'), 'junk.db');
    writeFileSync(junk, 'not sqlite at all, just text that is long enough to have a header'.repeat(10));
    const res = await runCli(['restore', junk, '--data-dir', target], {}, FAST);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('refusing to restore');
    expect(res.stderr).toContain(junk);
    expect(existsSync(target)).toBe(false);
  });

  it('restore refuses a directory holding other files but no database, and leaves it unchanged', async () => {
    const dir = await populatedDir();
    const file = join(tmpDir('mnemo-rs-'), 'copy.db');
    expect((await runCli(['backup', file, '--data-dir', dir])).code).toBe(0);
    const other = tmpDir('mnemo-rs-other-');
    writeFileSync(join(other, 'report.txt'), 'q3');
    const res = await runCli(['restore', file, '--data-dir', other], {}, FAST);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`refusing to restore into ${other}: it holds no mnemo database but is not empty`);
    expect(readdirSync(other)).toEqual(['report.txt']);
  });
});

describe('restore', () => {
  it('restores into a new directory and leaves no -wal or -shm beside the backup, which keeps its bytes', async () => {
    const dir = await populatedDir();
    const out = tmpDir('mnemo-rs-');
    const file = join(out, 'copy.db');
    const backup = await runCli(['backup', file, '--data-dir', dir]);
    expect(backup.code, backup.stderr).toBe(0);
    const before = sha256(file);
    expect(readdirSync(out)).toEqual(['copy.db']);

    const target = join(out, 'restored');
    const res = await runCli(['restore', file, '--data-dir', target], {}, FAST);
    expect(res.code, res.stderr).toBe(0);
    expect(existsSync(`${file}-wal`)).toBe(false);
    expect(existsSync(`${file}-shm`)).toBe(false);
    expect(sha256(file)).toBe(before);
    expect(readdirSync(out).sort()).toEqual(['copy.db', 'restored']);
    expect(readdirSync(target).filter((f) => f.includes('restoring'))).toEqual([]);

    const check = await runCli(['check', '--data-dir', target], {}, FAST);
    expect(check.code, check.stdout + check.stderr).toBe(0);

    // And over an existing database: the same, the old one replaced.
    const over = await runCli(['restore', file, '--data-dir', dir], {}, FAST);
    expect(over.code, over.stderr).toBe(0);
    expect(existsSync(`${file}-wal`)).toBe(false);
    expect(existsSync(`${file}-shm`)).toBe(false);
    expect(sha256(file)).toBe(before);
  });
});

const AS_ROOT = typeof process.getuid === 'function' && process.getuid() === 0;

describe.skipIf(!AS_ROOT)('restore as root', () => {
  // A container often runs the server as its own user; a restore run as root left mnemo.db owned by root,
  // which that server could not write.
  it('leaves every file in the data directory owned by the directory\'s owner, into an empty directory and over a database', async () => {
    const dir = await populatedDir();
    const out = tmpDir('mnemo-rs-');
    const file = join(out, 'copy.db');
    expect((await runCli(['backup', file, '--data-dir', dir])).code).toBe(0);
    const target = join(out, 'theirs');
    mkdirSync(target);
    chownSync(target, NOBODY, NOBODY);
    const owners = () => readdirSync(target).map((f) => ({ f, uid: statSync(join(target, f)).uid, gid: statSync(join(target, f)).gid }));
    for (let round = 0; round < 2; round++) {
      const res = await runCli(['restore', file, '--data-dir', target], {}, FAST);
      expect(res.code, res.stderr).toBe(0);
      expect(owners().map((o) => o.f)).toContain('mnemo.db');
      expect(owners().filter((o) => o.uid !== NOBODY || o.gid !== NOBODY)).toEqual([]);
    }
  });
});

/** nobody:nogroup on Debian, the image's base. */
const NOBODY = 65534;

describe('backup', () => {
  // Item 16: SQLite's backup API starts over when another connection commits between two of its
  // steps; at 100 pages a step, a copy of a 60 MB file never got through the server's steady saves,
  // and gave up after 15 s blaming "another process".
  it('finishes a whole, consistent copy of a 60 MB database while the server keeps saving', async () => {
    const core = await openCore();
    const big = await core.service.createStore(core.caller, { name: 'big', description: '', metadata: {} });
    for (let i = 0; i < 600; i += 10) {
      await Promise.all(Array.from({ length: 10 }, (_, j) => core.service.createMemory(core.caller, big.id, { path: `/big/f${i + j}.md`, content: randomBytes(50_000).toString('hex') })));
    }
    core.close();
    const server = await startServer({ dataDir: core.dir });
    const post = (path: string) =>
      jsonRequest(server, 'POST', `/v1/memory_stores/${big.id}/memories`, server.adminKey, { path, content: path });
    let writing = true;
    let saves = 0;
    // Four saves in flight at a time, each answered before the next: the server commits all along.
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; writing; i++) {
        expect((await post(`/tick/${w}-${i}.md`)).status).toBe(200);
        saves++;
      }
    });
    try {
      const file = join(tmpDir('mnemo-bk-'), 'live.db');
      const before = saves;
      const res = await runCli(['backup', file, '--data-dir', core.dir], {}, { timeoutMs: 40_000 });
      expect(res.stderr).toContain(`backed up ${core.file} to ${file}`);
      expect(res.code).toBe(0);
      expect(saves).toBeGreaterThan(before);
      withRaw(file, (raw) => {
        expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
        expect(raw.prepare("SELECT count(*) FROM memories WHERE path LIKE '/big/%'").pluck().get()).toBe(600);
      });
    } finally {
      writing = false;
      await Promise.all(writers);
      await server.stop();
    }
  });
});
