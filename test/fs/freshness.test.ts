/**
 * Freshness and lifecycle: API-side writes show in the mount on the next open or stat, archived
 * stores turn mounts read-only, deleted stores empty them, and crashes leave no stale mount.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { createMountManager } from '../../fs/index.js';
import { EVENTUALLY_MS, FUSE_AVAILABLE, NO_FUSE_REASON, isMounted, py, run, sh, sleep, startMount, unmountHelperOf, type MountHost } from '../helpers/mount.js';
import { openCore } from '../helpers/core.js';
import { tmpDir } from '../helpers/tmp.js';
import { createService } from '../../src/service/service.js';
import { openSqliteStorage } from '../../src/storage/sqlite/open.js';

const require = createRequire(import.meta.url);

if (!FUSE_AVAILABLE) console.warn(NO_FUSE_REASON);

/** The stored text at `path` once it is `want` (a save at release lands just after close() returns), or the last seen after EVENTUALLY_MS. */
async function pollContent(m: MountHost, path: string, want: string): Promise<string | undefined> {
  let seen: string | undefined;
  for (const end = Date.now() + EVENTUALLY_MS; Date.now() < end; await sleep(20)) {
    seen = ((await m.call('memory', { path })) as { content: string } | null)?.content;
    if (seen === want) break;
  }
  return seen;
}

describe.skipIf(!FUSE_AVAILABLE)('a mount stays fresh', () => {
  it('sees a write through the API on the next open and stat', async () => {
    const m = await startMount({ seed: { '/a.md': 'one\n' } });
    expect((await sh('cat a.md', m.mnt)).stdout).toBe('one\n');
    await m.call('update', { path: '/a.md', content: 'two, longer\n' });
    await m.call('create', { path: '/dir/new.md', content: 'new\n' });
    expect((await sh('cat a.md; stat -c %s a.md; cat dir/new.md', m.mnt)).stdout).toBe('two, longer\n12\nnew\n');
    await m.call('rename', { path: '/a.md', to: '/b.md' });
    await m.call('delete', { path: '/dir/new.md' });
    // Entries may be cached by the kernel for up to 1 s (entry_timeout); contents never are.
    await sleep(1100);
    expect((await sh('ls; cat b.md', m.mnt)).stdout).toBe('b.md\ntwo, longer\n');
  });

  it('a shell left in a directory another process renamed away cannot make files there: they would bring the old path back', async () => {
    const m = await startMount({ seed: { '/proj/p.md': 'p\n' } });
    const other = await startMount({ dir: m.dir, store: m.storeId, mountName: 'other', session: 'sesn_other' });
    // The shell's working directory is other's /proj; the rename comes from the first mount's process,
    // between the shell's cd and its writes (files outside the mounts say when: no fixed sleeps, which
    // a loaded host outran).
    const inside = join(m.dir, 'inside');
    const moved = join(m.dir, 'moved');
    const stuck = sh(
      `cd proj && ls >/dev/null && : > ${inside} && while [ ! -e ${moved} ]; do sleep 0.02; done; echo n > new.md; echo "file $?"; mkdir sub; echo "dir $?"`,
      other.mnt,
    );
    for (const end = Date.now() + 30_000; !existsSync(inside) && Date.now() < end; ) await sleep(20);
    expect((await sh('mv proj proj2', m.mnt)).code).toBe(0);
    // As long as the shell slept before: past the other mount's notice of another process's change.
    await sleep(1200);
    writeFileSync(moved, '');
    const r = await stuck;
    expect(r.stdout).toBe('file 1\ndir 1\n');
    expect(r.stderr).toMatch(/No such file or directory/);
    expect(await m.tree()).toEqual({ '/proj2/p.md': 'p\n' });
  });

  it('a file made with O_EXCL and closed is there for an O_EXCL open in another session: one lock, one winner', async () => {
    // Two sessions' mounts served by one host, as in production.
    const m = await startMount({ session: 'sesn_a', also: { 'mnt-b': 'sesn_b' } });
    const other = { mnt: join(m.dir, 'mnt-b') };
    // Nothing written: the lock file's save is its close()'s, not the release's after it.
    const r = await py(
      [
        'import os, sys',
        'a, b = sys.argv[1], sys.argv[2]; won = []',
        'for i in range(20):',
        '    fd = os.open(os.path.join(a, "lock%d" % i), os.O_CREAT | os.O_EXCL | os.O_WRONLY); os.close(fd)',
        '    try:',
        '        os.close(os.open(os.path.join(b, "lock%d" % i), os.O_CREAT | os.O_EXCL | os.O_WRONLY)); won.append(i)',
        '    except FileExistsError:',
        '        pass',
        'print(won)',
      ].join('\n'),
      '/',
      [m.mnt, other.mnt],
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('[]\n');
    expect((await m.versions()).filter((v) => v.operation !== 'created')).toEqual([]);
  });

  it('a file emptied here by an O_TRUNC open reads whole at its next open after an API write', async () => {
    // The kernel set the size to 0 itself at that open and kept it for the attribute timeout; no
    // stat of ours told it, so the open must refresh it rather than take "unknown" for "nothing held".
    // Ten rounds: the writes-elsewhere follower (every 100 ms) could hide a miss in one of them.
    const m = await startMount({ seed: { '/e.md': 'seed\n' } });
    for (let n = 0; n < 10; n++) {
      // No stat here: one would tell the mount what the kernel holds.
      expect((await sh(': > e.md', m.mnt)).code).toBe(0);
      const text = `written through the API, round ${n}\n`.repeat(3);
      await m.call('update', { path: '/e.md', content: text });
      expect((await sh('cat e.md', m.mnt)).stdout, `round ${n}`).toBe(text);
    }
  });

  it('an O_TRUNC open that writes nothing does not undo an API write made after it', async () => {
    // The truncation saves at the last release; on a disk it happened at the open, so the API's
    // later text stands. A dup keeps the release back until after the API write, every time.
    const m = await startMount({ seed: { '/t.md': 'before\n' } });
    const script = [
      'import os, sys',
      "f = open('t.md', 'w')",
      'g = os.dup(f.fileno())',
      'f.close()',
      "print('truncated', flush=True)",
      'sys.stdin.readline()',
      'os.close(g)',
    ].join('\n');
    const child = spawn('python3', ['-c', script], { cwd: m.mnt, stdio: ['pipe', 'pipe', 'inherit'] });
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    await new Promise<void>((r) => createInterface({ input: child.stdout! }).once('line', () => r()));
    await m.call('update', { path: '/t.md', content: 'written through the API after the truncation\n' });
    child.stdin!.end('go\n');
    expect(await exited).toBe(0);
    const stored = (await m.call('memory', { path: '/t.md' })) as { content: string };
    expect(stored.content).toBe('written through the API after the truncation\n');
    expect((await sh('cat t.md', m.mnt)).stdout).toBe('written through the API after the truncation\n');
    // Truncating again with nothing written elsewhere meanwhile is saved as before.
    expect((await sh(': > t.md', m.mnt)).code).toBe(0);
    expect(await pollContent(m, '/t.md', '')).toBe('');
  });

  it('a walk that made the mount list a directory still sees the next API write there at once', async () => {
    const seed: Record<string, string> = {};
    for (let i = 0; i < 20; i++) seed[`/walk/f${String(i).padStart(2, '0')}.md`] = `file ${i}\n`;
    const m = await startMount({ seed });
    // Enough lookups in one directory that the mount answers the rest from one listing.
    expect((await sh('cat walk/*.md | wc -l; stat -c %s walk/f07.md', m.mnt)).stdout).toBe('20\n7\n');
    await m.call('update', { path: '/walk/f07.md', content: 'changed by the API\n' });
    await m.call('create', { path: '/walk/zz.md', content: 'new\n' });
    const r = await sh('cat walk/f07.md; stat -c %s walk/f07.md; cat walk/zz.md; ls walk | wc -l', m.mnt);
    expect(r.stdout, r.stderr).toBe('changed by the API\n19\nnew\n21\n');
  });

  it('sees a write made by another process on the database file within a moment', async () => {
    const m = await startMount({ seed: { '/o.md': 'before\n' } });
    expect((await sh('cat o.md', m.mnt)).stdout).toBe('before\n');
    const other = openSqliteStorage(m.db);
    try {
      const service = createService({ storage: other });
      const ws = (await service.keys.defaultWorkspace())!;
      const caller = { workspaceId: ws.id, actor: { type: 'session_actor' as const, sessionId: 'sess_outside' } };
      const meta = (await other.getMemoryMetaByPath(m.storeId, '/o.md'))!;
      await service.updateMemory(caller, m.storeId, meta.id, { content: 'after, from another process\n' });
    } finally {
      await other.close();
    }
    // Commits from other connections are noticed within 100 ms (storage.changeMark) on an idle host;
    // a loaded one may run that timer late, so the read is tried until it shows (a stale mount never does).
    let seen = '';
    for (const end = Date.now() + 10_000; Date.now() < end; await sleep(50)) {
      seen = (await sh('cat o.md', m.mnt)).stdout;
      if (seen === 'after, from another process\n') break;
    }
    expect(seen).toBe('after, from another process\n');
  });

  it('a process holding a file open sees an API write on its next open, and its own later save wins', async () => {
    const m = await startMount({ seed: { '/s.md': 'base\n' } });
    const opened = join(m.dir, 'opened');
    const go = join(m.dir, 'go');
    const held = py(
      [
        'import os, sys, time',
        "f = open('s.md', 'r+')",
        'first = f.read()',
        `open(${JSON.stringify(opened)}, 'w').close()`,
        `while not os.path.exists(${JSON.stringify(go)}): time.sleep(0.02)`,
        "again = open('s.md').read()",
        "f.seek(0); f.truncate(); f.write('mine\\n'); f.close()",
        "print(first, again, open('s.md').read(), sep='|', end='')",
      ].join('\n'),
      m.mnt,
    );
    while (!existsSync(opened)) await sleep(20);
    await m.call('update', { path: '/s.md', content: 'api\n' });
    writeFileSync(go, '');
    const r = await held;
    expect(r.stdout, r.stderr).toBe('base\n|api\n|mine\n');
    const log = (await m.versions()).map((v) => `${v.operation} ${v.createdBy.type}`);
    expect(log).toEqual(['created api_actor', 'modified api_actor', 'modified session_actor']);
  });

  it('archiving the store turns the mount read-only (EROFS), and reads keep working', async () => {
    const m = await startMount({ seed: { '/a.md': 'a\n' } });
    await m.call('archive');
    const r = await sh('cat a.md; echo x > a.md; echo rc=$?; mkdir d; echo rc=$?', m.mnt);
    expect(r.stdout).toBe('a\nrc=1\nrc=1\n');
    expect(r.stderr).toContain('Read-only file system');
  });

  it('deleting the store empties the mount', async () => {
    const m = await startMount({ seed: { '/a.md': 'a\n', '/d/b.md': 'b\n' } });
    await m.call('deleteStore');
    await sleep(1100);
    const r = await sh('ls -A; cat a.md', m.mnt);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('No such file or directory');
  });

  it("the SDK's local filesystem memory tool saves each command as one version", async () => {
    const tool = require.resolve('@anthropic-ai/sdk/tools/memory/node').replace(/\.js$/, '.mjs');
    const script = [
      `const { BetaLocalFilesystemMemoryTool } = await import(${JSON.stringify(tool)});`,
      `const t = await BetaLocalFilesystemMemoryTool.init(process.argv[1]);`,
      `await t.create({ command: 'create', path: '/memories/notes.md', file_text: 'alpha\\nbeta\\n' });`,
      `await t.str_replace({ command: 'str_replace', path: '/memories/notes.md', old_str: 'beta', new_str: 'gamma' });`,
      `await t.insert({ command: 'insert', path: '/memories/notes.md', insert_line: 0, insert_text: 'top' });`,
      `await t.rename({ command: 'rename', old_path: '/memories/notes.md', new_path: '/memories/old/notes.md' });`,
      `console.log(await t.view({ command: 'view', path: '/memories/old/notes.md' }));`,
      `await t.delete({ command: 'delete', path: '/memories/old/notes.md' });`,
    ].join('\n');
    const m = await startMount();
    const r = await run(process.execPath, ['--input-type=module', '-e', script, m.mnt], { cwd: m.dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('gamma');
    expect(await m.mountLog()).toEqual([
      'created /memories/notes.md',
      'modified /memories/notes.md',
      'modified /memories/notes.md',
      'modified /memories/old/notes.md',
      'deleted /memories/old/notes.md',
    ]);
    const ids = new Set((await m.versions()).map((v) => v.memoryId));
    expect(ids.size).toBe(1);
  });

  it('git init, add and commit work inside the mount and only the work tree becomes memories', async () => {
    const m = await startMount();
    const git = 'git -c user.name=agent -c user.email=agent@example.invalid -c init.defaultBranch=main';
    const r = await sh(
      `${git} init -q repo && cd repo && echo hi > a.md && ${git} add a.md && ${git} commit -qm first && ` +
        `echo more >> a.md && ${git} commit -qam second && ${git} log --format=%s && ${git} status --porcelain`,
      m.mnt,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('second\nfirst\n');
    expect((await m.tree())['/repo/a.md']).toBe('hi\nmore\n');
    // .git holds binary objects: it lives in the mount only, so no version ever names it.
    const versions = await m.versions();
    expect(versions.some((v) => (v.path ?? '').includes('/.git'))).toBe(false);
    expect(versions.map((v) => `${v.operation} ${v.path}`)).toEqual(['created /repo/a.md', 'modified /repo/a.md']);
  });

  it('git clone and git gc work with packs and an index past a memory\'s 100 KiB: .git files count against the mount-local cap only', async () => {
    const m = await startMount();
    const src = tmpDir();
    const git = 'git -c user.name=agent -c user.email=agent@example.invalid -c init.defaultBranch=main';
    // 60 files of incompressible text: a pack of about 240 KiB, far past one memory's limit.
    const made = await sh(`${git} init -q src && cd src && for i in $(seq 60); do head -c 3000 /dev/urandom | base64 -w 76 > n$i.md; done && ${git} add -A && ${git} commit -qm x`, src);
    expect(made.code, made.stderr).toBe(0);
    const r = await sh(`${git} clone -q --no-local '${join(src, 'src')}' c && cd c && ${git} gc -q && test -z "$(${git} status --porcelain)" && ls .git/objects/pack | grep -c pack$ && stat -c %s .git/objects/pack/*.pack`, m.mnt);
    expect(r.code, r.stderr).toBe(0);
    const [packs, size] = r.stdout.split('\n');
    expect(packs).toBe('1');
    expect(Number(size)).toBeGreaterThan(100 * 1024);
    // The work tree became memories; nothing under .git did.
    const versions = await m.versions();
    expect(versions.filter((v) => (v.path ?? '').startsWith('/c/n'))).toHaveLength(60);
    expect(versions.some((v) => (v.path ?? '').includes('/.git'))).toBe(false);
  });
});

describe.skipIf(!FUSE_AVAILABLE)('mount lifecycle', () => {
  it('after kill -9 of the host a new host mounts over any stale mount and finds every saved file', async () => {
    const first = await startMount();
    expect((await sh('for i in 1 2 3 4 5; do echo $i > f$i.md; done', first.mnt)).code).toBe(0);
    process.kill(first.pid, 'SIGKILL');
    // The unmount helper usually drops the dead mount within moments; on a loaded machine it can
    // lag, and then the next mount clears the stale one itself (fuse-native's force on ENOTCONN).
    for (let i = 0; i < 50 && isMounted(first.mnt); i++) await sleep(100);
    const second = await startMount({ dir: first.dir, store: first.storeId });
    expect(readFileSync('/proc/mounts', 'utf8').split('\n').filter((l) => l.split(' ')[1] === second.mnt)).toHaveLength(1);
    expect((await sh('cat f1.md f5.md; ls | wc -l', second.mnt)).stdout).toBe('1\n5\n5\n');
  });

  it('clearStale unmounts the dead FUSE mounts under a root and leaves another process\'s live one alone', async () => {
    const live = await startMount({ seed: { '/a.md': 'a\n' } });
    const dead = await startMount({ seed: { '/b.md': 'b\n' } });
    // Killed with its unmount helper first, the host leaves its mount dead for certain.
    process.kill(await unmountHelperOf(dead.pid), 'SIGKILL');
    process.kill(dead.pid, 'SIGKILL');
    for (let i = 0; i < 50 && !(await sh(`cat ${dead.mnt}/b.md`, '/')).stderr.includes('not connected'); i++) await sleep(100);
    expect(isMounted(dead.mnt)).toBe(true);
    const core = await openCore();
    const lines: string[] = [];
    const manager = createMountManager({ log: (l) => lines.push(l) });
    await manager.clearStale(dead.dir);
    await manager.clearStale(live.dir);
    expect(isMounted(dead.mnt)).toBe(false);
    expect(isMounted(live.mnt)).toBe(true);
    expect((await sh('cat a.md', live.mnt)).stdout).toBe('a\n');
    expect(lines.some((l) => l.includes(`left live mount ${live.mnt} alone`))).toBe(true);
  });

  it('SIGTERM unmounts and the host exits cleanly', async () => {
    const m = await startMount({ seed: { '/a.md': 'a\n' } });
    await m.stop();
    // Exited by itself, not killed after the helper's 10 s (a bound, never a time to beat; the
    // helper's own unmount after a kill would hide a host that never unmounted).
    expect(m.exit(), m.stderr()).toEqual({ code: 0, signal: null });
    expect(isMounted(m.mnt)).toBe(false);
  });
});
