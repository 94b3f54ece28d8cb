/**
 * DESIGN.md §4, one named test per agent action: real tools run as child processes against a
 * mount served by a child host; the history is read back through the store (issue #3).
 */
import { describe, expect, it } from 'vitest';
import { FUSE_AVAILABLE, NO_FUSE_REASON, eventually, outcomes, py, sh, sleep, startMount } from '../helpers/mount.js';

if (!FUSE_AVAILABLE) console.warn(NO_FUSE_REASON);

describe.skipIf(!FUSE_AVAILABLE)('agent actions through a mount', () => {
  it('ls, stat, find and grep -r see directories implied by memory paths, with stored sizes and mtimes', async () => {
    const m = await startMount({ seed: { '/notes/a.md': 'alpha\n', '/notes/deep/b.md': 'beta beta\n', '/top.md': 'top\n' } });
    const r = await sh('ls -1 && ls -1 notes && find . -type f | sort && grep -rl beta . && stat -c "%s %F" notes/deep/b.md notes', m.mnt);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      ['notes', 'top.md', 'a.md', 'deep', './notes/a.md', './notes/deep/b.md', './top.md', './notes/deep/b.md', '10 regular file', '4096 directory', ''].join('\n'),
    );
    const mem = await m.call<{ updatedAt: string }>('memory', { path: '/notes/a.md' });
    const mtime = await sh('stat -c %Y notes/a.md', m.mnt);
    expect(Number(mtime.stdout.trim())).toBe(Math.floor(Date.parse(mem.updatedAt) / 1000));
    expect(await m.mountLog()).toEqual([]);
  });

  it('a listing gives each entry its type (regular file or directory), so find -type f and os.scandir stat none of them', async () => {
    const m = await startMount({ seed: { '/a.md': 'a\n', '/d/b.md': 'b\n' } });
    expect((await sh('mkdir empty && echo x > new.tmp', m.mnt)).code).toBe(0);
    // getdents64's d_type for each name (x86_64: syscall 217, aarch64: 61).
    const r = await py(
      [
        'import ctypes, json, os, platform, struct',
        'libc = ctypes.CDLL(None, use_errno=True)',
        "nr = {'x86_64': 217, 'aarch64': 61}[platform.machine()]",
        "fd, buf, types = os.open('.', os.O_RDONLY | os.O_DIRECTORY), ctypes.create_string_buffer(65536), {}",
        'while (n := libc.syscall(nr, fd, buf, 65536)) > 0:',
        '    off = 0',
        '    while off < n:',
        "        reclen, kind = struct.unpack_from('=HB', buf, off + 16)",
        "        types[buf.raw[off + 19:off + reclen].split(b'\\0', 1)[0].decode()] = kind",
        '        off += reclen',
        'print(json.dumps(types, sort_keys=True))',
      ].join('\n'),
      m.mnt,
    );
    expect(r.stderr).toBe('');
    const [DT_DIR, DT_REG] = [4, 8];
    expect(JSON.parse(r.stdout)).toEqual({ '.': DT_DIR, '..': DT_DIR, 'a.md': DT_REG, d: DT_DIR, empty: DT_DIR, 'new.tmp': DT_REG });
  });

  it('mkdir -p then a write inside works, and the empty directory exists only in the mount', async () => {
    const m = await startMount();
    const r = await sh('mkdir -p a/b && mkdir empty && ls -1 && echo hi > a/b/c.md && cat a/b/c.md', m.mnt);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('a\nempty\nhi\n');
    expect(await m.tree()).toEqual({ '/a/b/c.md': 'hi\n' });
    expect(await m.mountLog()).toEqual(['created /a/b/c.md']);
  });

  it('echo x > a new file makes exactly one created version', async () => {
    const m = await startMount();
    expect((await sh('echo x > f.md', m.mnt)).code).toBe(0);
    expect(await m.mountLog()).toEqual(['created /f.md']);
    expect(await m.tree()).toEqual({ '/f.md': 'x\n' });
  });

  it('echo x > an existing file makes exactly one modified version', async () => {
    const m = await startMount({ seed: { '/f.md': 'old\n' } });
    expect((await sh('echo new > f.md', m.mnt)).code).toBe(0);
    expect(await m.mountLog()).toEqual(['modified /f.md']);
    expect(await m.tree()).toEqual({ '/f.md': 'new\n' });
  });

  it('>> appends and makes one version per close', async () => {
    const m = await startMount({ seed: { '/log.md': 'one\n' } });
    expect((await sh('echo two >> log.md && echo three >> log.md', m.mnt)).code).toBe(0);
    expect(await m.mountLog()).toEqual(['modified /log.md', 'modified /log.md']);
    expect(await m.tree()).toEqual({ '/log.md': 'one\ntwo\nthree\n' });
  });

  it('truncate -s makes one version, shrinking or growing with zero bytes', async () => {
    const m = await startMount({ seed: { '/t.md': 'abcdef\n' } });
    expect((await sh('truncate -s 3 t.md', m.mnt)).code).toBe(0);
    expect(await m.tree()).toEqual({ '/t.md': 'abc' });
    expect((await sh('truncate -s 5 t.md', m.mnt)).code).toBe(0);
    expect(await m.tree()).toEqual({ '/t.md': 'abc\0\0' });
    expect(await m.mountLog()).toEqual(['modified /t.md', 'modified /t.md']);
  });

  it("python open('w') makes one version per close of a changed file and none for an unchanged one", async () => {
    const m = await startMount({ seed: { '/p.md': 'same\n' } });
    const r = await py(
      "open('p.md','w').write('same\\n')\nopen('q.md','w').write('q\\n')\nf=open('p.md','w')\nf.write('changed')\nf.write(' twice\\n')\nf.close()",
      m.mnt,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(await m.mountLog()).toEqual(['created /q.md', 'modified /p.md']);
    expect(await m.tree()).toEqual({ '/p.md': 'changed twice\n', '/q.md': 'q\n' });
  });

  it('sed -i makes exactly one version on the target and none for its temp file', async () => {
    const m = await startMount({ seed: { '/s.md': 'hello world\n' } });
    const before = await m.call<{ id: string }>('memory', { path: '/s.md' });
    const r = await sh('sed -i s/world/there/ s.md && ls -a && stat -c %a s.md', m.mnt);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('.\n..\ns.md\n644\n');
    const versions = await m.versions();
    const mine = versions.filter((v) => v.createdBy.type === 'session_actor');
    expect(mine.map((v) => `${v.operation} ${v.path} ${v.memoryId}`)).toEqual([`modified /s.md ${before.id}`]);
    expect(versions.every((v) => v.path === '/s.md')).toBe(true);
    expect(await m.tree()).toEqual({ '/s.md': 'hello there\n' });
  });

  it('python mkstemp + fsync + os.replace makes one version on the target, keeping its memory id', async () => {
    const m = await startMount({ seed: { '/cfg/a.md': 'v1\n' } });
    const before = await m.call<{ id: string }>('memory', { path: '/cfg/a.md' });
    const r = await py(
      [
        'import os, tempfile',
        "fd, tmp = tempfile.mkstemp(dir='cfg')",
        "os.write(fd, b'v2\\n'); os.fsync(fd); os.close(fd)",
        "os.replace(tmp, 'cfg/a.md')",
        "fd, tmp = tempfile.mkstemp(dir='cfg', suffix='.tmp')",
        "os.write(fd, b'fresh\\n'); os.fsync(fd); os.close(fd)",
        "os.replace(tmp, 'cfg/b.md')",
        "print(sorted(os.listdir('cfg')))",
      ].join('\n'),
      m.mnt,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("['a.md', 'b.md']\n");
    const mine = (await m.versions()).filter((v) => v.createdBy.type === 'session_actor');
    expect(mine.map((v) => `${v.operation} ${v.path}`)).toEqual(['modified /cfg/a.md', 'created /cfg/b.md']);
    expect(mine[0]!.memoryId).toBe(before.id);
    expect(await m.tree()).toEqual({ '/cfg/a.md': 'v2\n', '/cfg/b.md': 'fresh\n' });
  });

  it('perl -pi makes exactly one version on the target, none for its temp file, and none when nothing changed', async () => {
    const m = await startMount({ seed: { '/p.md': 'hello world\n' } });
    const before = await m.call<{ id: string }>('memory', { path: '/p.md' });
    const r = await sh("perl -pi -e 's/nomatch/x/' p.md && perl -pi -e 's/world/there/' p.md && ls -a", m.mnt);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('.\n..\np.md\n');
    expect(await m.tree()).toEqual({ '/p.md': 'hello there\n' });
    expect(await m.mountLog()).toEqual(['modified /p.md']);
    expect((await m.call<{ id: string }>('memory', { path: '/p.md' })).id).toBe(before.id);
  });

  it("GNU patch's temp name (name.oXXXXXX, made with O_EXCL) is an atomic save: one version, same memory id", async () => {
    const m = await startMount({ seed: { '/n.md': 'hello\n' } });
    const before = await m.call<{ id: string }>('memory', { path: '/n.md' });
    // What patch 2.7 does (strace): its output beside the file, then a rename onto it. A fixed name
    // here, as patch's own random ones miss the rule about one time in 25 (README).
    const r = await py(
      [
        'import os',
        'fd = os.open("n.md.omuA7Uc", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)',
        'os.write(fd, b"HELLO\\n"); os.close(fd)',
        'os.rename("n.md.omuA7Uc", "n.md")',
        'print(sorted(os.listdir(".")))',
      ].join('\n'),
      m.mnt,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("['n.md']\n");
    expect(await m.mountLog()).toEqual(['modified /n.md']);
    expect((await m.call<{ id: string }>('memory', { path: '/n.md' })).id).toBe(before.id);
  });

  it('files written in a temp directory reach the history only where they are put: by a rename out, or with the directory renamed', async () => {
    const m = await startMount();
    const r = await py(
      [
        'import os, shutil',
        // What tempfile.TemporaryDirectory(dir=".") does, under a fixed name of the kind mkdtemp
        // makes: its random names hold no digit one time in 12 and then miss the rule (README).
        'td = "tmpw7k2_qzx"',
        'os.mkdir(td, 0o700)',
        'open(os.path.join(td, "out.md"), "w").write("built\\n")',
        'os.replace(os.path.join(td, "out.md"), "final.md")',
        'shutil.rmtree(td)',
        // mktemp -d's name, filled and then put in place whole.
        'os.mkdir("tmp.Ab3dE6gH9k")',
        'for n in ("a.md", "b.md"): open("tmp.Ab3dE6gH9k/" + n, "w").write(n)',
        'os.rename("tmp.Ab3dE6gH9k", "build")',
        'print(sorted(os.listdir(".")))',
      ].join('\n'),
      m.mnt,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("['build', 'final.md']\n");
    // Saved by the directory's rename itself, not 2 s later by the grace period.
    expect((await m.mountLog()).sort()).toEqual(['created /build/a.md', 'created /build/b.md', 'created /final.md']);
    expect(await m.tree()).toEqual({ '/build/a.md': 'a.md', '/build/b.md': 'b.md', '/final.md': 'built\n' });
  });

  it("rsync's and write-file-atomic's temp names are atomic saves too: one version on the target each", async () => {
    const m = await startMount({ seed: { '/r.md': 'one\n', '/w.md': 'one\n' } });
    const r = await py(
      [
        'import os',
        'for tmp, target in ((".r.md.Ab12Cd", "r.md"), ("w.md.2837465012", "w.md")):',
        '    with open(tmp, "w") as f:',
        '        f.write("two\\n")',
        '    os.rename(tmp, target)',
      ].join('\n'),
      m.mnt,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(await m.tree()).toEqual({ '/r.md': 'two\n', '/w.md': 'two\n' });
    expect(await m.mountLog()).toEqual(['modified /r.md', 'modified /w.md']);
  });

  it("the shell's mktemp idiom (t=$(mktemp -p .); sort f > $t; mv $t f) is an atomic save: one version, same memory id", async () => {
    const m = await startMount({ seed: { '/f.txt': 'b\na\nc\n' } });
    const before = await m.call<{ id: string }>('memory', { path: '/f.txt' });
    // mktemp names its file tmp.XXXXXXXXXX (ten of [A-Za-z0-9]) and makes it with O_EXCL.
    const r = await sh('t=$(mktemp -p .) && sort f.txt > "$t" && mv "$t" f.txt && ls -A', m.mnt);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('f.txt\n');
    expect(await m.tree()).toEqual({ '/f.txt': 'a\nb\nc\n' });
    expect(await m.mountLog()).toEqual(['modified /f.txt']);
    expect((await m.call<{ id: string }>('memory', { path: '/f.txt' })).id).toBe(before.id);
  });

  it("vim's swap file lives in the mount only: binary, fsync'd and closed without an error, never a memory", async () => {
    const m = await startMount({ seed: { '/q.md': 'q\n' } });
    const r = await py(
      [
        'import os',
        'fd = os.open(".q.md.swp", os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)',
        'os.write(fd, b"b0VIM 9.0\\x00\\xff\\xfe" * 100)',
        'os.fsync(fd)',
        'os.close(fd)',
        'print(sorted(os.listdir(".")), os.stat(".q.md.swp").st_size)',
      ].join('\n'),
      m.mnt,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("['.q.md.swp', 'q.md'] 1200\n");
    // Past the 2 s in which a temp-looking file left in place would be saved under its own name.
    await sleep(2500);
    expect((await sh('ls -a', m.mnt)).stdout).toBe('.\n..\n.q.md.swp\nq.md\n');
    expect(await m.mountLog()).toEqual([]);
    expect(await m.tree()).toEqual({ '/q.md': 'q\n' });
  });

  it("vim's in-place write makes one version", async () => {
    const m = await startMount({ seed: { '/v.md': 'one\ntwo\n' } });
    const r = await sh('vim -u NONE -i NONE -N -es -c "%s/two/TWO/" -c "wq" v.md; echo rc=$?; ls -a', m.mnt);
    expect(r.stdout).toBe('rc=0\n.\n..\nv.md\n');
    expect(await m.tree()).toEqual({ '/v.md': 'one\nTWO\n' });
    expect(await m.mountLog()).toEqual(['modified /v.md']);
  });

  it("vim's default write (its backup renamed aside, a new file written, the backup removed) makes one version, keeping the memory id", async () => {
    const m = await startMount({ seed: { '/v.md': 'one\ntwo\n' } });
    const before = await m.call<{ id: string }>('memory', { path: '/v.md' });
    // Outside /tmp (a session's /mnt/memory/<name>) vim's 'backupskip' does not apply: it renames
    // the file to v.md~, writes a new v.md and removes v.md~. Emptying it does the same here.
    const r = await sh('vim -u NONE -i NONE -N -es --cmd "set backupskip=" -c "%s/two/TWO/" -c "wq" v.md; echo rc=$?; ls -a', m.mnt);
    expect(r.stdout).toBe('rc=0\n.\n..\nv.md\n');
    expect(await m.tree()).toEqual({ '/v.md': 'one\nTWO\n' });
    expect(await m.mountLog()).toEqual(['modified /v.md']);
    expect((await m.call<{ id: string }>('memory', { path: '/v.md' })).id).toBe(before.id);
  });

  it("vim's undo of a default write whose new file is refused (EILSEQ, EFBIG) stores nothing, and the file keeps its memory id", async () => {
    const m = await startMount({ seed: { '/h.md': 'café\n', '/big.md': `${'x'.repeat(99)}\n`.repeat(1000) } });
    const ids = await Promise.all(['/h.md', '/big.md'].map(async (path) => (await m.call<{ id: string }>('memory', { path })).id));
    const vim = 'vim -u NONE -i NONE -N -es --cmd "set backupskip="';
    const r = await sh(`${vim} -c "set fileencoding=latin1" -c w -c "q!" h.md; echo rc=$?; ${vim} -c "normal Gyy50p" -c w -c "q!" big.md; echo rc=$?; ls -a`, m.mnt);
    expect(r.stdout).toBe('rc=1\nrc=1\n.\n..\nbig.md\nh.md\n');
    expect((await sh('cat h.md', m.mnt)).stdout).toBe('café\n');
    await sleep(2500);
    expect(await m.mountLog()).toEqual([]);
    expect(await Promise.all(['/h.md', '/big.md'].map(async (path) => (await m.call<{ id: string }>('memory', { path })).id))).toEqual(ids);
  });

  it('the same undo by hand (rename aside, a new file refused at its close, unlink, rename back) stores nothing', async () => {
    const m = await startMount({ seed: { '/f.md': 'original\n' } });
    const r = await py(
      [
        'import os',
        "os.rename('f.md', 'f.md~')",
        "fd = os.open('f.md', os.O_WRONLY | os.O_CREAT, 0o644)",
        'for step in (lambda: os.write(fd, b"a" * 110000), lambda: os.close(fd)):',
        '    try: step()',
        '    except OSError as e: print(e.strerror)',
        "try: os.unlink('f.md')",
        'except FileNotFoundError: print("the refused new file is gone")',
        "os.rename('f.md~', 'f.md')",
        "print(open('f.md').read(), end='')",
      ].join('\n'),
      m.mnt,
    );
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('File too large\nFile too large\nthe refused new file is gone\noriginal\n');
    await sleep(2500);
    expect(await m.mountLog()).toEqual([]);
    expect(await m.tree()).toEqual({ '/f.md': 'original\n' });
  });

  it('a file renamed onto a temp-looking name is held there: removed is deleted, renamed back is nothing, renamed on is moved, left is moved after 2 s', async () => {
    const m = await startMount({ seed: { '/gone.md': 'g\n', '/back.md': 'b\n', '/on.md': 'o\n', '/left.md': 'l\n', '/twice.md': 't\n', '/home.md': 'h\n', '/other.md': 'x\n' } });
    const ids = Object.fromEntries(
      await Promise.all(['/on.md', '/left.md', '/home.md'].map(async (p) => [p, (await m.call<{ id: string }>('memory', { path: p })).id] as const)),
    );
    const r = await sh(
      'mv gone.md gone.md~ && rm gone.md~ && mv back.md back.md~ && mv back.md~ back.md && mv on.md on.md~ && mv on.md~ moved.md && ' +
        'mv left.md left.md~ && mv twice.md twice.md~ && mv twice.md~ twice.tmp && mv home.md home.md~ && mv other.md home.md && ls',
      m.mnt,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('back.md\nhome.md\nhome.md~\nleft.md~\nmoved.md\ntwice.tmp\n');
    // Another file coming to a set-aside file's path makes that rename first.
    expect(await m.mountLog()).toEqual(['deleted /gone.md', 'modified /moved.md', 'modified /home.md~', 'modified /home.md']);
    await eventually(async () => expect((await m.mountLog()).slice(4).sort()).toEqual(['modified /left.md~', 'modified /twice.tmp']));
    expect(await m.tree()).toEqual({ '/back.md': 'b\n', '/home.md': 'x\n', '/home.md~': 'h\n', '/left.md~': 'l\n', '/moved.md': 'o\n', '/twice.tmp': 't\n' });
    expect((await m.call<{ id: string }>('memory', { path: '/moved.md' })).id).toBe(ids['/on.md']);
    expect((await m.call<{ id: string }>('memory', { path: '/left.md~' })).id).toBe(ids['/left.md']);
    expect((await m.call<{ id: string }>('memory', { path: '/home.md~' })).id).toBe(ids['/home.md']);
  });

  it('a set-aside file moved with its directory is shown once, at its temp name, and its rename is made 2 s later, or taken back by a new file at its old name', async () => {
    const m = await startMount({ seed: { '/a/n.md': 'a\n', '/b/n.md': 'b\n' } });
    const a = await m.call<{ id: string }>('memory', { path: '/a/n.md' });
    const b = await m.call<{ id: string }>('memory', { path: '/b/n.md' });
    const r = await sh('mv a/n.md a/n.md~ && mv a a2 && mv b/n.md b/n.md~ && mv b b2 && echo new > b2/n.md && ls a2 b2', m.mnt);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('a2:\nn.md~\n\nb2:\nn.md\nn.md~\n');
    await eventually(async () => expect(await m.tree()).toEqual({ '/a2/n.md~': 'a\n', '/b2/n.md': 'new\n', '/b2/n.md~': 'b\n' }));
    expect((await m.call<{ id: string }>('memory', { path: '/a2/n.md~' })).id).toBe(a.id);
    expect((await m.call<{ id: string }>('memory', { path: '/b2/n.md' })).id).toBe(b.id);
    expect((await sh('ls a2 b2', m.mnt)).stdout).toBe('a2:\nn.md~\n\nb2:\nn.md\nn.md~\n');
  });

  it('a file renamed onto a set-aside file replaces it: the set-aside memory is deleted, and its old path shows what storage has there again', async () => {
    const m = await startMount({ seed: { '/f.md': 'old f\n', '/g.md': 'g\n', '/h.md': 'old h\n' } });
    const g = await m.call<{ id: string }>('memory', { path: '/g.md' });
    const r = await sh('mv f.md f.md~ && mv g.md f.md~ && mv h.md h.md~ && echo new > new.tmp && mv new.tmp h.md~ && ls -a', m.mnt);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('.\n..\nf.md~\nh.md~\n');
    expect(await m.tree()).toEqual({ '/f.md~': 'g\n', '/h.md~': 'new\n' });
    expect(await m.mountLog()).toEqual(['modified /f.md~', 'deleted /f.md', 'created /h.md~', 'deleted /h.md']);
    expect((await m.call<{ id: string }>('memory', { path: '/f.md~' })).id).toBe(g.id);
    await m.call('create', { path: '/f.md', content: 'api\n' });
    await eventually(async () => expect((await sh('cat f.md', m.mnt)).stdout).toBe('api\n'));
  });

  it("vim with 'backup' set keeps its backup: the file's memory gets one version, the backup is saved as a new file after 2 s", async () => {
    const m = await startMount({ seed: { '/k.md': 'one\n' } });
    const before = await m.call<{ id: string }>('memory', { path: '/k.md' });
    const r = await sh('vim -u NONE -i NONE -N -es --cmd "set backupskip= backup" -c "%s/one/ONE/" -c "wq" k.md; echo rc=$?; ls -a', m.mnt);
    expect(r.stdout).toBe('rc=0\n.\n..\nk.md\nk.md~\n');
    expect(await m.mountLog()).toEqual(['modified /k.md']);
    await eventually(async () => expect(await m.mountLog()).toEqual(['modified /k.md', 'created /k.md~']));
    expect(await m.tree()).toEqual({ '/k.md': 'ONE\n', '/k.md~': 'one\n' });
    expect((await m.call<{ id: string }>('memory', { path: '/k.md' })).id).toBe(before.id);
  });

  it('ed makes one version', async () => {
    const m = await startMount({ seed: { '/e.md': 'a\nb\n' } });
    const r = await sh('ed -s e.md', m.mnt, '2s/b/B/\nw\nq\n');
    expect(r.code, r.stderr).toBe(0);
    expect(await m.tree()).toEqual({ '/e.md': 'a\nB\n' });
    expect(await m.mountLog()).toEqual(['modified /e.md']);
  });

  it('cp makes one created version with the content of the source', async () => {
    const m = await startMount({ seed: { '/src.md': 'copy me\n' } });
    expect((await sh('cp src.md dst.md && cp src.md dst.md', m.mnt)).code).toBe(0);
    expect(await m.mountLog()).toEqual(['created /dst.md']);
    expect(await m.tree()).toEqual({ '/src.md': 'copy me\n', '/dst.md': 'copy me\n' });
  });

  it('mv keeps the memory id and adds one modified version with the new path', async () => {
    const m = await startMount({ seed: { '/a.md': 'A\n' } });
    const before = await m.call<{ id: string }>('memory', { path: '/a.md' });
    expect((await sh('mkdir sub && mv a.md sub/b.md', m.mnt)).code).toBe(0);
    const mine = (await m.versions()).filter((v) => v.createdBy.type === 'session_actor');
    expect(mine.map((v) => `${v.operation} ${v.path} ${v.memoryId}`)).toEqual([`modified /sub/b.md ${before.id}`]);
    expect(await m.tree()).toEqual({ '/sub/b.md': 'A\n' });
  });

  it('mv over an existing file keeps the moved memory id and deletes the replaced one', async () => {
    const m = await startMount({ seed: { '/a.md': 'A\n', '/b.md': 'B\n' } });
    const a = await m.call<{ id: string }>('memory', { path: '/a.md' });
    expect((await sh('mv a.md b.md && ls', m.mnt)).stdout).toBe('b.md\n');
    expect(await m.mountLog()).toEqual(['deleted /b.md', 'modified /b.md']);
    expect((await m.call<{ id: string }>('memory', { path: '/b.md' })).id).toBe(a.id);
    expect(await m.tree()).toEqual({ '/b.md': 'A\n' });
  });

  it('mv of a directory moves every memory below it, keeping their ids', async () => {
    const m = await startMount({ seed: { '/d/x.md': 'x\n', '/d/e/y.md': 'y\n' } });
    expect((await sh('mv d renamed && find . | sort', m.mnt)).stdout).toBe('.\n./renamed\n./renamed/e\n./renamed/e/y.md\n./renamed/x.md\n');
    expect((await m.mountLog()).sort()).toEqual(['modified /renamed/e/y.md', 'modified /renamed/x.md']);
    expect(await m.tree()).toEqual({ '/renamed/x.md': 'x\n', '/renamed/e/y.md': 'y\n' });
  });

  it('rm adds a deleted version and rm -r removes a whole tree', async () => {
    const m = await startMount({ seed: { '/f.md': 'f\n', '/d/a.md': 'a\n', '/d/e/b.md': 'b\n' } });
    const r = await sh('rm f.md && rm -r d && ls -a', m.mnt);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('.\n..\n');
    expect((await m.mountLog()).sort()).toEqual(['deleted /d/a.md', 'deleted /d/e/b.md', 'deleted /f.md']);
    expect(await m.tree()).toEqual({});
  });

  it('touch creates an empty memory, and touching an existing file adds no version', async () => {
    const m = await startMount({ seed: { '/old.md': 'o\n' } });
    expect((await sh('touch new.md old.md', m.mnt)).code).toBe(0);
    await eventually(async () => expect(await m.mountLog()).toEqual(['created /new.md']));
    expect(await m.tree()).toEqual({ '/new.md': '', '/old.md': 'o\n' });
  });

  it('setting a stored file\'s times shows in the very next stat, though its stat was being answered from memory', async () => {
    const m = await startMount({ seed: { '/t.md': 't\n' } });
    // Stat it first, so the mount answers its stat from memory; utime without opening the file
    // (touch would open it, which makes a working copy and bypasses the kept stat).
    const before = await sh('stat -c %Y t.md', m.mnt);
    expect(before.stdout).not.toBe('1700000000\n');
    const r = await sh(`python3 -c "import os; os.utime('t.md', (1700000000, 1700000000))" && stat -c %Y t.md`, m.mnt);
    expect(r.stdout, r.stderr).toBe('1700000000\n');
  });

  it('a temp-looking file that is closed and left in place is saved under its own name', async () => {
    const m = await startMount();
    expect((await sh('echo keep > notes.tmp && echo lock > yarn.lock', m.mnt)).code).toBe(0);
    await eventually(async () => {
      expect(await m.tree()).toEqual({ '/notes.tmp': 'keep\n', '/yarn.lock': 'lock\n' });
    });
    expect((await m.mountLog()).sort()).toEqual(['created /notes.tmp', 'created /yarn.lock']);
  });

  it('writes through the mount are versions by the mount session actor', async () => {
    const m = await startMount();
    await sh('echo a > a.md', m.mnt);
    const [v] = await m.versions();
    expect(v!.createdBy).toEqual({ type: 'session_actor', sessionId: m.sessionId });
  });

  it('bytes that are not UTF-8 fail the close and nothing is stored', async () => {
    const m = await startMount({ seed: { '/keep.md': 'kept\n' } });
    expect(
      await outcomes(m.mnt, [
        ['new file', "f = open('bin.md', 'wb'); f.write(b'\\xff\\xfe\\x00bad'); f.close()"],
        ['stored file', "g = open('keep.md', 'wb'); g.write(b'\\xc3\\x28'); g.close()"],
      ]),
    ).toEqual({ 'new file': 'EILSEQ', 'stored file': 'EILSEQ' });
    await eventually(async () => expect((await sh('ls; cat keep.md', m.mnt)).stdout).toBe('keep.md\nkept\n'));
    expect(await m.mountLog()).toEqual([]);
    expect(await m.tree()).toEqual({ '/keep.md': 'kept\n' });
  });

  it('an in-place write that fails its save leaves the file reading as stored, even after it was read from the cache', async () => {
    const m = await startMount({ seed: { '/keep.md': 'kept as it was\n' } });
    expect(
      await outcomes(m.mnt, [
        // The first read fills the content cache; the r+ open then starts from that cached copy.
        ['read', "assert open('keep.md').read() == 'kept as it was\\n'"],
        ['in-place write', "f = open('keep.md', 'r+b'); f.seek(0); f.write(b'\\xff\\xfe'); f.close()"],
      ]),
    ).toEqual({ read: 'ok', 'in-place write': 'EILSEQ' });
    // The failed working copy is dropped at its release, which the kernel sends after close().
    await eventually(async () => expect((await sh('cat keep.md', m.mnt)).stdout).toBe('kept as it was\n'));
    expect(await m.tree()).toEqual({ '/keep.md': 'kept as it was\n' });
  });

  it('a new file refused with EFBIG is gone when its close returns: no entry, and a path below it is ENOENT', async () => {
    const m = await startMount();
    const r = await py(
      [
        'import errno, os',
        'fd = os.open("bk.md", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)',
        'for call in (lambda: os.write(fd, b"a" * 150000), lambda: os.close(fd)):',
        '    try:',
        '        call()',
        '    except OSError as e:',
        '        print(errno.errorcode[e.errno])',
        'for path in ("bk.md", "bk.md/x"):',
        '    try:',
        '        os.lstat(path)',
        '    except OSError as e:',
        '        print(path, errno.errorcode[e.errno])',
        'print(os.listdir("."))',
      ].join('\n'),
      m.mnt,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("EFBIG\nEFBIG\nbk.md ENOENT\nbk.md/x ENOENT\n[]\n");
    expect(await m.mountLog()).toEqual([]);
  });

  it('a file over 102,400 bytes fails with EFBIG and nothing is stored', async () => {
    const m = await startMount({ seed: { '/big.md': 'small\n' } });
    const r = await sh('head -c 102400 /dev/zero | tr "\\0" a > exact.md; echo rc=$?; head -c 102401 /dev/zero | tr "\\0" a > over.md; echo rc=$?; head -c 200000 /dev/zero | tr "\\0" b >> big.md; echo rc=$?', m.mnt);
    expect(r.stdout).toBe('rc=0\nrc=1\nrc=1\n');
    expect(r.stderr).toContain('File too large');
    await eventually(async () => expect((await sh('ls; wc -c < big.md', m.mnt)).stdout).toBe('big.md\nexact.md\n6\n'));
    expect(await m.mountLog()).toEqual(['created /exact.md']);
  });
});
