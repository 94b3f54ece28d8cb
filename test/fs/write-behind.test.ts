/**
 * Write-behind through a real mount (sqlite/write-behind.ts, DESIGN §5): the host holds its batch
 * open for an hour, so nothing a test does through the mount commits unless something commits it.
 * The file is looked at from a second connection in this process, as any other process sees it.
 */
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, statSync, watch } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { journalFileOf } from '../../src/storage/sqlite/journal.js';
import { FUSE_AVAILABLE, NO_FUSE_REASON, py, run, sh, sleep, startMount } from '../helpers/mount.js';
import { MAIN_JS, runCli } from '../helpers/server.js';
import { tmpDir } from '../helpers/tmp.js';

if (!FUSE_AVAILABLE) console.warn(NO_FUSE_REASON);

const HOUR = 3_600_000;

/** "operation path" of each version a session wrote, oldest first, as committed in the file. */
function committedMountLog(db: string, storeId: string): string[] {
  const conn = new Database(db, { readonly: true });
  try {
    const rows = conn
      .prepare("SELECT operation, path FROM versions WHERE store_id = ? AND actor_type = 'session_actor' ORDER BY seq")
      .all(storeId) as { operation: string; path: string }[];
    return rows.map((r) => `${r.operation} ${r.path}`);
  } finally {
    conn.close();
  }
}

describe.skipIf(!FUSE_AVAILABLE)('write-behind through a mount', () => {
  it('answers close(), rename and rm before their commit, and a kill -9 then loses none of them: the next start replays the journal', async () => {
    const host = await startMount({ holdMs: HOUR, seed: { '/old.md': 'old\n', '/gone.md': 'gone\n' } });
    expect(host.writeBehind).toBe(true);
    const r = await sh(
      `printf 'a\\n' > a.md && printf 'b\\n' > b.md && mv b.md c.md && rm gone.md && sed -i 's/old/new/' old.md && cat a.md c.md old.md`,
      host.mnt,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('a\nb\nnew\n');
    // Answered, and not committed: only the journal holds them.
    expect(committedMountLog(host.db, host.storeId)).toEqual([]);
    expect(statSync(journalFileOf(host.db)).size).toBeGreaterThan(0);

    process.kill(host.pid, 'SIGKILL');
    await host.stop();

    const next = await startMount({ dir: host.dir, store: host.storeId, mountName: 'mnt2' });
    expect(next.stderr()).toMatch(/replayed \d+ mount write/);
    expect(await next.tree()).toEqual({ '/a.md': 'a\n', '/c.md': 'b\n', '/old.md': 'new\n' });
    expect(committedMountLog(host.db, host.storeId)).toEqual([
      'created /a.md',
      'created /b.md',
      'modified /c.md',
      'deleted /gone.md',
      'modified /old.md',
    ]);
    expect(statSync(journalFileOf(host.db)).size).toBe(0);
  });

  // Item 9: `mnemo mount` on the data dir after the crash did not see the journal, and the next
  // server's replay put the acknowledged older save over its newer one.
  it('after a kill -9, mnemo mount replays the journal at its start: it shows the acknowledged save, and its own later save stays the head', async () => {
    const host = await startMount({ holdMs: HOUR });
    expect((await sh(`printf 'old text\\n' > plan.md`, host.mnt)).code).toBe(0);
    expect(committedMountLog(host.db, host.storeId)).toEqual([]);
    process.kill(host.pid, 'SIGKILL');
    await host.stop();

    const check = await runCli(['check', '--data-dir', host.dir]);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain(`problem: ${journalFileOf(host.db)} holds 1 mount write(s) a server acknowledged but had not committed when it stopped (a crash)`);

    const backup = await runCli(['backup', join(host.dir, 'copy.db'), '--data-dir', host.dir]);
    expect(backup.code).toBe(0);
    expect(backup.stderr).toContain('mnemo: warn: the backup lacks 1 mount write(s): ');

    const local = join(host.dir, 'local');
    mkdirSync(local);
    const cli = spawn(process.execPath, [MAIN_JS, 'mount', host.storeId, local, '--data-dir', host.dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<void>((resolve) => cli.once('exit', () => resolve()));
    let err = '';
    cli.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    try {
      await new Promise<void>((resolve, reject) => {
        cli.stdout.setEncoding('utf8').on('data', (c: string) => c.includes('\n') && resolve());
        void exited.then(() => reject(new Error(`mnemo mount exited before mounting\n${err}`)));
      });
      expect(err).toMatch(/replayed 1 mount write/);
      expect((await run('cat', [join(local, 'plan.md')])).stdout).toBe('old text\n');
      expect((await sh(`printf 'new text\\n' > plan.md`, local)).code).toBe(0);
    } finally {
      cli.kill('SIGINT');
      await exited;
    }
    expect(statSync(journalFileOf(host.db)).size).toBe(0);

    const next = await startMount({ dir: host.dir, store: host.storeId, mountName: 'mnt2' });
    expect(next.stderr()).not.toMatch(/replayed/);
    expect(await next.tree()).toEqual({ '/plan.md': 'new text\n' });
    expect(committedMountLog(host.db, host.storeId)).toEqual(['created /plan.md', 'modified /plan.md']);
  });

  it('a stop (SIGTERM) commits what is held and leaves an empty journal, which the next start has nothing to replay from', async () => {
    const host = await startMount({ holdMs: HOUR });
    expect((await sh(`printf 'kept\\n' > kept.md`, host.mnt)).code).toBe(0);
    expect(committedMountLog(host.db, host.storeId)).toEqual([]);
    await host.stop();
    expect(committedMountLog(host.db, host.storeId)).toEqual(['created /kept.md']);
    expect(statSync(journalFileOf(host.db)).size).toBe(0);
    const next = await startMount({ dir: host.dir, store: host.storeId, mountName: 'mnt2' });
    expect(await next.tree()).toEqual({ '/kept.md': 'kept\n' });
    expect(next.stderr()).not.toMatch(/replayed/);
  });

  it('a held save is read at once by another mount and the API, a listing on a reader thread commits it, and fsync() commits it', async () => {
    // The other mount is the same session's: another session's mount follows the store's changes
    // (fs/writes-elsewhere.ts), and its look after each save, a read on a reader thread, commits the
    // batch within 100 ms, as the listing below does; here nothing but the test's own steps may.
    const host = await startMount({ holdMs: HOUR, session: 'sesn_held', also: { other: 'sesn_held' } });
    expect(host.writeBehind).toBe(true);
    expect((await sh(`printf 'held\\n' > one.md`, host.mnt)).code).toBe(0);
    expect(committedMountLog(host.db, host.storeId)).toEqual([]);
    // Another mount's and the API's point reads go through the connection that holds it.
    expect((await run('cat', [`${host.dir}/other/one.md`])).stdout).toBe('held\n');
    expect(await host.call('memory', { path: '/one.md' })).toMatchObject({ content: 'held\n' });
    expect(committedMountLog(host.db, host.storeId)).toEqual([]);
    // A listing runs on a reader thread (its own connection): the batch commits first.
    expect(await host.tree()).toEqual({ '/one.md': 'held\n' });
    expect(committedMountLog(host.db, host.storeId)).toEqual(['created /one.md']);

    expect((await sh(`printf 'two\\n' > two.md`, host.mnt)).code).toBe(0);
    expect(committedMountLog(host.db, host.storeId)).toEqual(['created /one.md']);
    const synced = await py(`import os\nfd = os.open('one.md', os.O_RDONLY)\nos.fsync(fd)\nos.close(fd)`, host.mnt);
    expect(synced.code, synced.stderr).toBe(0);
    expect(committedMountLog(host.db, host.storeId)).toEqual(['created /one.md', 'created /two.md']);
  });

  it('a text a redaction erases is gone from the journal too, with the rest of the data dir', async () => {
    const host = await startMount({ holdMs: HOUR });
    const secret = `journalsecret${randomBytes(8).toString('hex')}`;
    expect((await sh(`printf 'token ${secret}\\n' > notes.md && printf 'rotated\\n' > notes.md`, host.mnt)).code).toBe(0);
    // Both saves are held: only the journal has the secret so far.
    expect(readFileSync(journalFileOf(host.db)).includes(secret)).toBe(true);
    const first = (await host.versions()).find((v) => v.operation === 'created' && v.path === '/notes.md')!;
    await host.call('redact', { versionId: first.id });
    const files = readdirSync(host.dir).filter((f) => f.startsWith('mnemo.db')).map((f) => join(host.dir, f));
    expect(files).toContain(journalFileOf(host.db));
    for (const f of files) expect(readFileSync(f).includes(secret), f).toBe(false);
    expect((await run('cat', [`${host.mnt}/notes.md`])).stdout).toBe('rotated\n');
  });

  it('saves that join a held batch and a redaction write no page to a temp file: SQLite\'s temp directory sees no file come or go', async () => {
    const tmp = tmpDir('mnemo-sqlite-tmp-');
    const host = await startMount({ holdMs: HOUR, env: { SQLITE_TMPDIR: tmp } });
    // Watched from here: the migrations at open may still use one (sqlite/open.ts).
    const seen: string[] = [];
    const watcher = watch(tmp, (event, name) => seen.push(`${event} ${name}`));
    onTestFinished(() => watcher.close());
    const secret = `tempsecret${randomBytes(8).toString('hex')}`;
    // 4 KiB saves joining one held batch: each is a savepoint that changes about 20 pages already
    // dirty, past the 64 KiB a sub-journal keeps in memory unless temp_store is MEMORY.
    const saved = await py(
      `for i in range(40):\n    open(f'n{i:02d}.md', 'w').write((f'note {i} ${secret} ' * 200)[:4096])\nopen('n00.md', 'w').write('rotated')`,
      host.mnt,
    );
    expect(saved.code, saved.stderr).toBe(0);
    const first = (await host.versions()).find((v) => v.path === '/n00.md')!;
    await host.call('redact', { versionId: first.id });
    expect((await host.versions()).filter((v) => v.createdBy.type === 'session_actor')).toHaveLength(41);
    await sleep(100); // inotify events arrive on the event loop
    expect(seen).toEqual([]);
  });

  it('a second host on the same data dir commits each write itself and leaves the owner its journal', async () => {
    const owner = await startMount({ holdMs: HOUR });
    const second = await startMount({ dir: owner.dir, store: owner.storeId, mountName: 'mnt2' });
    expect(owner.writeBehind).toBe(true);
    expect(second.writeBehind).toBe(false);
    expect((await sh(`printf 'x\\n' > from-second.md`, second.mnt)).code).toBe(0);
    expect(committedMountLog(owner.db, owner.storeId)).toEqual(['created /from-second.md']);
  });
});
