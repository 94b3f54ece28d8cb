/**
 * `.history` in every mount (issue 15, item 1), through a real mount driven by child processes:
 * hidden from the root's listing and from find and grep -r, reachable by name, a directory per path
 * that ever held a memory with one read-only file per version (deleted ones `.deleted`, redacted
 * ones gone with their gap), EROFS for every change there, and `cp` from it restores one version.
 * Point-in-time mounts show the store at an instant, and what a redaction or a prune takes from that
 * past leaves a mount that had read it, whichever process made it.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually, FUSE_AVAILABLE, NO_FUSE_REASON, outcomes, py, sh, startMount, type MountHost } from '../helpers/mount.js';
import { tmpDir } from '../helpers/tmp.js';
import type { Memory, MemoryVersion } from '../../src/domain/types.js';

if (!FUSE_AVAILABLE) console.warn(NO_FUSE_REASON);

/** A store with a recorded history: edits, a redaction, a rename, a delete, a path that became a directory. */
async function withHistory(): Promise<{ m: MountHost; todo: Memory }> {
  const m = await startMount({ movableClock: true });
  const todo = await m.call<Memory>('create', { path: '/notes/todo.md', content: 'one\n' });
  await m.call('advanceClock', { ms: 1000 });
  await m.call('update', { path: '/notes/todo.md', content: 'two secret\n' });
  await m.call('advanceClock', { ms: 1000 });
  await m.call('update', { path: '/notes/todo.md', content: 'three\n' });
  await m.call('create', { path: '/notes/old.md', content: 'old\n' });
  await m.call('rename', { path: '/notes/old.md', to: '/notes/new.md' });
  await m.call('create', { path: '/gone.md', content: 'bye\n' });
  await m.call('delete', { path: '/gone.md' });
  await m.call('create', { path: '/a', content: 'was a file\n' });
  await m.call('delete', { path: '/a' });
  await m.call('create', { path: '/a/v1', content: 'inside a directory\n' });
  const second = (await m.versions()).find((v) => v.memoryId === todo.id && v.content === 'two secret\n')!;
  await m.call('redact', { versionId: second.id });
  return { m, todo };
}

describe.skipIf(!FUSE_AVAILABLE)('.history in the mount', () => {
  it('is reachable by name but absent from ls -a of the root, and from find and grep -r over the mount', async () => {
    const { m } = await withHistory();
    expect((await sh('ls -a', m.mnt)).stdout.split('\n').filter(Boolean)).toEqual(['.', '..', 'a', 'notes']);
    expect((await sh('find . | sort', m.mnt)).stdout).toBe('.\n./a\n./a/v1\n./notes\n./notes/new.md\n./notes/todo.md\n');
    expect((await sh('grep -r . . | sort', m.mnt)).stdout).toBe('./a/v1:inside a directory\n./notes/new.md:old\n./notes/todo.md:three\n');
    expect((await sh('cd .history && ls', m.mnt)).stdout).toBe('a\ngone.md\nnotes\n');
    expect((await sh('ls .history/notes', m.mnt)).stdout).toBe('new.md\nold.md\ntodo.md\n');
    expect((await sh('find .history | sort', m.mnt)).stdout).toBe(
      ['.history', '.history/a', '.history/a/v1', '.history/a/v2.deleted', '.history/gone.md', '.history/gone.md/v1', '.history/gone.md/v2.deleted',
        '.history/notes', '.history/notes/new.md', '.history/notes/new.md/v1', '.history/notes/old.md', '.history/notes/old.md/v1',
        '.history/notes/todo.md', '.history/notes/todo.md/v1', '.history/notes/todo.md/v3', ''].join('\n'),
    );
  });

  it('holds each version with its content, size and created_at as mtime; deleted versions are empty .deleted files; redacted ones leave a gap', async () => {
    const { m, todo } = await withHistory();
    expect((await sh('ls .history/notes/todo.md', m.mnt)).stdout).toBe('v1\nv3\n');
    expect((await sh('cat .history/notes/todo.md/v1 .history/notes/todo.md/v3', m.mnt)).stdout).toBe('one\nthree\n');
    expect((await sh('ls .history/notes/todo.md/v2', m.mnt)).code).not.toBe(0);
    expect((await sh('grep -r secret .history/notes', m.mnt)).stdout).toBe('');
    // A rename's old path and its new one; a deleted memory's path.
    expect((await sh('cat .history/notes/old.md/v1 .history/notes/new.md/v1', m.mnt)).stdout).toBe('old\nold\n');
    expect((await sh('ls .history/gone.md; stat -c %s .history/gone.md/v2.deleted; cat .history/gone.md/v1', m.mnt)).stdout).toBe('v1\nv2.deleted\n0\nbye\n');
    const versions = (await m.versions()).filter((v: MemoryVersion) => v.memoryId === todo.id);
    const first = versions[0]!;
    expect((await sh('stat -c "%s %Y %A" .history/notes/todo.md/v1', m.mnt)).stdout).toBe(`4 ${Math.floor(Date.parse(first.createdAt) / 1000)} -r--r--r--\n`);
    expect((await sh('stat -c %A .history .history/notes', m.mnt)).stdout).toBe('dr-xr-xr-x\ndr-xr-xr-x\n');
    expect((await sh('ls .history/nothing', m.mnt)).code).not.toBe(0);
  });

  it('shows the version file where a path that held a file later became a directory with an entry named like it', async () => {
    const { m } = await withHistory();
    expect((await sh('ls .history/a', m.mnt)).stdout).toBe('v1\nv2.deleted\n');
    expect((await sh('cat .history/a/v1', m.mnt)).stdout).toBe('was a file\n');
    expect((await sh('cat a/v1', m.mnt)).stdout).toBe('inside a directory\n');
  });

  it('refuses every change under .history with EROFS', async () => {
    const { m } = await withHistory();
    const before = (await m.versions()).length;
    const steps: [string, string][] = [
      ['write', "open('.history/notes/todo.md/v1', 'w')"],
      ['append', "open('.history/notes/todo.md/v1', 'a')"],
      ['create', "open('.history/notes/new-file', 'w')"],
      ['create at the root', "open('.history/x', 'w')"],
      ['make .history', "os.mkdir('.history/d')"],
      ['remove', "os.unlink('.history/notes/todo.md/v1')"],
      ['remove a level', "os.rmdir('.history/notes/old.md')"],
      ['rename out', "os.rename('.history/notes/todo.md/v1', 'notes/x.md')"],
      ['rename in', "os.rename('notes/todo.md', '.history/notes/x.md')"],
      ['rename the root', "os.rename('.history', 'h')"],
      ['chmod', "os.chmod('.history/notes/todo.md/v1', 0o644)"],
      ['utime', "os.utime('.history/notes/todo.md/v1', (1, 1))"],
      ['truncate', "os.truncate('.history/notes/todo.md/v1', 0)"],
      ['symlink', "os.symlink('x', '.history/link')"],
    ];
    const got = await outcomes(m.mnt, steps);
    expect(got).toEqual(Object.fromEntries(steps.map(([name]) => [name, 'EROFS'])));
    expect((await sh('echo x > .history', m.mnt)).stderr).toMatch(/Read-only file system|Is a directory/);
    expect((await m.versions()).length).toBe(before);
  });

  it('cp from .history restores old content as exactly one new version', async () => {
    const { m, todo } = await withHistory();
    const count = async () => (await m.versions()).filter((v) => v.memoryId === todo.id).length;
    const before = await count();
    expect((await sh('cp .history/notes/todo.md/v1 notes/todo.md && cat notes/todo.md', m.mnt)).stdout).toBe('one\n');
    expect(await count()).toBe(before + 1);
    expect((await m.call<Memory>('memory', { path: '/notes/todo.md' })).content).toBe('one\n');
    expect((await sh('ls .history/notes/todo.md', m.mnt)).stdout).toBe('v1\nv3\nv4\n');
  });

  // Issue: /tmp/findings/redact.md #2 (fstat and pread on the open descriptor answered ENOENT).
  it('a version file held open keeps answering fstat and reads through its descriptor after the version is redacted; a new open finds nothing', async () => {
    // The kernel keeps no sizes: every read through the descriptor asks the mount for one first.
    const m = await startMount({ cacheSeconds: 0 });
    await m.call('create', { path: '/a.md', content: 'secret ZEBRA\n' });
    await m.call('update', { path: '/a.md', content: 'clean\n' });
    const go = join(tmpDir('mnemo-hold-'), 'go');
    const script = [
      'import errno, os, sys, time',
      'def show(name, f):',
      '    try: print(name, f(), flush=True)',
      '    except OSError as e: print(name, errno.errorcode[e.errno], flush=True)',
      "fd = os.open('.history/a.md/v1', os.O_RDONLY)",
      "show('read', lambda: os.read(fd, 100))",
      "open(sys.argv[1] + '.ready', 'w').close()",
      'while not os.path.exists(sys.argv[1]): time.sleep(0.02)',
      "show('fstat', lambda: os.fstat(fd).st_size)",
      "show('pread', lambda: os.pread(fd, 100, 0))",
    ].join('\n');
    const holder = py(script, m.mnt, [go]);
    await eventually(async () => expect(existsSync(`${go}.ready`)).toBe(true));
    const first = (await m.versions()).find((v) => v.content === 'secret ZEBRA\n')!;
    await m.call('redact', { versionId: first.id });
    expect((await sh('ls .history/a.md; cat .history/a.md/v1', m.mnt)).stdout).toBe('v2\n');
    writeFileSync(go, '');
    const r = await holder;
    expect(r.stdout + r.stderr).toBe("read b'secret ZEBRA\\n'\nfstat 13\npread b'secret ZEBRA\\n'\n");
  });
});

describe.skipIf(!FUSE_AVAILABLE)('point-in-time mounts', () => {
  it('show exactly the store at each instant of a recorded sequence of writes, refuse writes, and a version redacted since is an empty file that cannot be read', async () => {
    const m = await startMount({ movableClock: true });
    await m.call('create', { path: '/a.md', content: 'a1\n' });
    await m.call('create', { path: '/d/b.md', content: 'b1\n' });
    const t1 = await m.call<string>('advanceClock', { ms: 1000 });
    await m.call('advanceClock', { ms: 1000 });
    await m.call('update', { path: '/a.md', content: 'a2\n' });
    await m.call('rename', { path: '/d/b.md', to: '/e/b.md' });
    await m.call('create', { path: '/c.md', content: 'c1\n' });
    await m.call('update', { path: '/c.md', content: 'c2 secret\n' });
    const t2 = await m.call<string>('advanceClock', { ms: 1000 });
    await m.call('advanceClock', { ms: 1000 });
    await m.call('delete', { path: '/a.md' });
    await m.call('update', { path: '/c.md', content: 'c3\n' });
    await m.call('create', { path: '/z.md', content: 'z\n' });
    const c2 = (await m.versions()).find((v) => v.content === 'c2 secret\n')!;
    await m.call('redact', { versionId: c2.id });

    const at1 = `${m.dir}/at1`;
    const at2 = `${m.dir}/at2`;
    await m.call('mountAsOf', { path: at1, asOf: t1 });
    await m.call('mountAsOf', { path: at2, asOf: t2 });
    try {
      expect((await sh('find . | sort; cat a.md d/b.md', at1)).stdout).toBe('.\n./a.md\n./d\n./d/b.md\na1\nb1\n');
      expect((await sh('find . | sort; cat a.md e/b.md', at2)).stdout).toBe('.\n./a.md\n./c.md\n./e\n./e/b.md\na2\nb1\n');
      expect((await sh('stat -c %s c.md', at2)).stdout).toBe('0\n');
      expect((await outcomes(at2, [['read', "open('c.md').read()"]])).read).toBe('EACCES');
      const writes: [string, string][] = [
        ['write', "open('a.md', 'w')"],
        ['create', "open('new.md', 'w')"],
        ['remove', "os.unlink('a.md')"],
        ['rename', "os.rename('a.md', 'b.md')"],
        ['mkdir', "os.mkdir('x')"],
      ];
      expect(await outcomes(at1, writes)).toEqual(Object.fromEntries(writes.map(([name]) => [name, 'EROFS'])));
      // The live mount moved on meanwhile; the snapshot's .history is the store's whole history.
      expect((await sh('find . -type f | sort', m.mnt)).stdout).toBe('./c.md\n./e/b.md\n./z.md\n');
      expect((await sh('ls .history', at1)).stdout).toBe('a.md\nc.md\nd\ne\nz.md\n');
    } finally {
      await m.call('unmount', { path: at1 });
      await m.call('unmount', { path: at2 });
    }
  });
});

/** Each file of the mount at `cwd` with its size, then what `cat` and a direct read (O_DIRECT: no page cache) make of it. */
async function shows(cwd: string): Promise<string> {
  const r = await sh(`for f in $(ls); do stat -c '%n %s' "$f"; cat "$f" 2>&1 | sed 's/^cat: //'; dd if="$f" iflag=direct status=none 2>&1 | sed 's/^dd: //'; done`, cwd);
  return r.stdout + r.stderr;
}

/** Keeps names and sizes in the kernel for 30 s: a change seen within the tests' 5 s was dropped by the mount itself. */
const CACHE_SECONDS = 30;

describe.skipIf(!FUSE_AVAILABLE)('point-in-time mounts after the past changed', () => {
  it('a version retention prunes leaves a mount that read it: it shows what a fresh mount for that instant shows, to a direct read too', async () => {
    const m = await startMount({ movableClock: true, cacheSeconds: CACHE_SECONDS });
    await m.call('keepLast', { count: 1 });
    await m.call('create', { path: '/k.md', content: 'kept\n' });
    await m.call('create', { path: '/r.md', content: 'r1 pruned\n' });
    const t = await m.call<string>('advanceClock', { ms: 1000 });
    await m.call('advanceClock', { ms: 1000 });
    const at = `${m.dir}/at`;
    const fresh = `${m.dir}/fresh`;
    await m.call('mountAsOf', { path: at, asOf: t });
    try {
      expect(await shows(at)).toBe('k.md 5\nkept\nkept\nr.md 10\nr1 pruned\nr1 pruned\n');
      await m.call('update', { path: '/r.md', content: 'r2\n' });
      expect(await m.call('prune')).toBe(1);
      await m.call('mountAsOf', { path: fresh, asOf: t });
      expect(await shows(fresh)).toBe('k.md 5\nkept\nkept\n');
      await eventually(async () => expect(await shows(at)).toBe('k.md 5\nkept\nkept\n'));
      expect((await outcomes(at, [['stat', "os.stat('r.md')"], ['direct', "os.open('r.md', os.O_RDONLY | os.O_DIRECT)"]]))).toEqual({ stat: 'ENOENT', direct: 'ENOENT' });
    } finally {
      await m.call('unmount', { path: at });
      await m.call('unmount', { path: fresh });
    }
  });

  it("another process's redaction and prune on the SQLite file reach a point-in-time mount that read the versions", async () => {
    const m = await startMount({ cacheSeconds: CACHE_SECONDS, holdMs: 0 });
    await m.call('create', { path: '/s.md', content: 'secret\n' });
    const t = (await m.call<Memory>('create', { path: '/r.md', content: 'r1\n' })).updatedAt;
    // The next writes must carry a later timestamp than t.
    while (Date.now() <= Date.parse(t)) await new Promise((r) => setTimeout(r, 2));
    const at = `${m.dir}/at`;
    await m.call('mountAsOf', { path: at, asOf: t });
    try {
      expect(await shows(at)).toBe('r.md 3\nr1\nr1\ns.md 7\nsecret\nsecret\n');
      const admin = await startMount({ dir: m.dir, store: m.storeId, mountName: 'mnt-admin', holdMs: 0 });
      await admin.call('update', { path: '/s.md', content: 'rotated\n' });
      await admin.call('update', { path: '/r.md', content: 'r2\n' });
      const secret = (await admin.versions()).find((v) => v.operation === 'created' && v.path === '/s.md')!;
      await admin.call('redact', { versionId: secret.id });
      const redacted = 'r.md 3\nr1\nr1\ns.md 0\ns.md: Permission denied\nfailed to open \'s.md\': Permission denied\n';
      await eventually(async () => expect(await shows(at)).toBe(redacted));
      await admin.call('keepLast', { count: 1 });
      expect(await admin.call('prune')).toBe(2);
      await eventually(async () => expect(await shows(at)).toBe(''));
    } finally {
      await m.call('unmount', { path: at });
    }
  });
});
