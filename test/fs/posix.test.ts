/**
 * POSIX conformance of a mount, for the groups mnemo supports: the errnos and attributes POSIX
 * (and Linux on a local disk) give for open, create, unlink, rename, mkdir, rmdir, truncate,
 * ftruncate, chmod and utimensat. CI cannot fetch pjdfstest (README, "POSIX conformance"), so
 * this suite is what guards conformance. Each case runs in a python3 child against a real mount.
 */
import { describe, expect, it } from 'vitest';
import { FUSE_AVAILABLE, NO_FUSE_REASON, outcomes, py, startMount } from '../helpers/mount.js';

if (!FUSE_AVAILABLE) console.warn(NO_FUSE_REASON);

/** Ten 99-byte directories: 999 bytes with their slashes, so one more name passes 1,024 bytes. */
const LONG_DIR = Array.from({ length: 10 }, (_, i) => String(i).repeat(99)).join('/');

/** Runs python statements in the mount and returns what they print, as JSON. */
async function pyJson<T = unknown>(cwd: string, body: string): Promise<T> {
  const r = await py(`import json, os, stat\n${body}`, cwd);
  if (r.code !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as T;
}

describe.skipIf(!FUSE_AVAILABLE)('POSIX conformance through a mount', () => {
  it('open refuses what POSIX refuses: ENOENT, ENOTDIR, EISDIR, EEXIST for O_CREAT|O_EXCL', async () => {
    const m = await startMount({ seed: { '/f.md': 'file\n', '/d/in.md': 'in\n' } });
    expect(
      await outcomes(m.mnt, [
        ['missing, no O_CREAT', "os.open('nope.md', os.O_RDONLY)"],
        ['missing for writing, no O_CREAT', "os.open('nope.md', os.O_WRONLY)"],
        ['O_CREAT under a missing directory', "os.open('nodir/x.md', os.O_CREAT | os.O_WRONLY)"],
        ['a file as a directory', "os.open('f.md/x.md', os.O_RDONLY)"],
        ['O_CREAT with a file as a directory', "os.open('f.md/x.md', os.O_CREAT | os.O_WRONLY)"],
        ['a file with a trailing slash', "os.open('f.md/', os.O_RDONLY)"],
        ['O_DIRECTORY on a file', "os.open('f.md', os.O_RDONLY | os.O_DIRECTORY)"],
        ['O_DIRECTORY on a directory', "os.close(os.open('d', os.O_RDONLY | os.O_DIRECTORY))"],
        ['a directory for writing', "os.open('d', os.O_WRONLY)"],
        ['a directory for reading and writing', "os.open('d', os.O_RDWR)"],
        ['O_CREAT on a directory', "os.open('d', os.O_CREAT | os.O_RDONLY)"],
        ['O_CREAT|O_EXCL on a file', "os.open('f.md', os.O_CREAT | os.O_EXCL | os.O_WRONLY)"],
        ['O_CREAT|O_EXCL on a directory', "os.open('d', os.O_CREAT | os.O_EXCL | os.O_WRONLY)"],
        ['O_CREAT without O_EXCL on a file', "os.close(os.open('f.md', os.O_CREAT | os.O_WRONLY))"],
        ['write on a read-only descriptor', "fd = os.open('f.md', os.O_RDONLY)\ntry:\n    os.write(fd, b'x')\nfinally:\n    os.close(fd)"],
        ['read on a write-only descriptor', "fd = os.open('f.md', os.O_WRONLY)\ntry:\n    os.read(fd, 1)\nfinally:\n    os.close(fd)"],
        ['a name over 255 bytes', `os.open('${'n'.repeat(256)}', os.O_RDONLY)`],
        ['O_CREAT of a path over 1,024 bytes', `os.makedirs('${LONG_DIR}')\nos.open('${LONG_DIR}/${'c'.repeat(40)}', os.O_CREAT | os.O_WRONLY)`],
      ]),
    ).toEqual({
      'missing, no O_CREAT': 'ENOENT',
      'missing for writing, no O_CREAT': 'ENOENT',
      'O_CREAT under a missing directory': 'ENOENT',
      'a file as a directory': 'ENOTDIR',
      'O_CREAT with a file as a directory': 'ENOTDIR',
      'a file with a trailing slash': 'ENOTDIR',
      'O_DIRECTORY on a file': 'ENOTDIR',
      'O_DIRECTORY on a directory': 'ok',
      'a directory for writing': 'EISDIR',
      'a directory for reading and writing': 'EISDIR',
      'O_CREAT on a directory': 'EISDIR',
      'O_CREAT|O_EXCL on a file': 'EEXIST',
      'O_CREAT|O_EXCL on a directory': 'EEXIST',
      'O_CREAT without O_EXCL on a file': 'ok',
      'write on a read-only descriptor': 'EBADF',
      'read on a write-only descriptor': 'EBADF',
      'a name over 255 bytes': 'ENAMETOOLONG',
      'O_CREAT of a path over 1,024 bytes': 'ENAMETOOLONG',
    });
    // O_CREAT on an existing file opened it: nothing was truncated or replaced.
    expect(await m.tree()).toEqual({ '/f.md': 'file\n', '/d/in.md': 'in\n' });
  });

  it('open with O_TRUNC empties the file, and O_CREAT|O_EXCL makes a new empty file with the mode asked', async () => {
    const m = await startMount({ seed: { '/t.md': 'some text\n' } });
    const r = await pyJson<{ trunc: number; created: [number, string, boolean]; zero: string }>(
      m.mnt,
      [
        "os.close(os.open('t.md', os.O_WRONLY | os.O_TRUNC))",
        "fd = os.open('new.md', os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o640)",
        's = os.fstat(fd)',
        'os.close(fd)',
        // A mode of 0 does not stop the creator from writing through the descriptor it got.
        "fd = os.open('zero.md', os.O_CREAT | os.O_RDWR, 0)",
        "os.write(fd, b'z'); os.close(fd)",
        "print(json.dumps({'trunc': os.stat('t.md').st_size, 'created': [s.st_size, oct(s.st_mode), stat.S_ISREG(s.st_mode)], 'zero': oct(os.stat('zero.md').st_mode)}))",
      ].join('\n'),
    );
    expect(r).toEqual({ trunc: 0, created: [0, '0o100640', true], zero: '0o100000' });
    expect(await m.tree()).toEqual({ '/t.md': '', '/new.md': '', '/zero.md': 'z' });
  });

  it('create gives a regular file of size 0 whose mode is the one asked, shown by stat and fstat alike', async () => {
    const m = await startMount();
    const r = await pyJson<string[]>(
      m.mnt,
      [
        'out = []',
        "for name, mode in (('a.md', 0o644), ('b.md', 0o600), ('c.md', 0o755)):",
        '    fd = os.open(name, os.O_CREAT | os.O_WRONLY, mode)',
        '    f = os.fstat(fd)',
        '    os.close(fd)',
        '    s = os.stat(name)',
        "    out.append(f'{name} {oct(s.st_mode)} {s.st_size} {f.st_mode == s.st_mode} {f.st_ino == s.st_ino}')",
        'print(json.dumps(out))',
      ].join('\n'),
    );
    expect(r).toEqual(['a.md 0o100644 0 True True', 'b.md 0o100600 0 True True', 'c.md 0o100755 0 True True']);
  });

  it('unlink removes a file, and refuses directories (EISDIR), missing names (ENOENT) and file prefixes (ENOTDIR)', async () => {
    const m = await startMount({ seed: { '/f.md': 'f\n', '/g.md': 'g\n', '/d/in.md': 'in\n' } });
    expect(
      await outcomes(m.mnt, [
        ['a file', "os.unlink('f.md')\nassert not os.path.exists('f.md')"],
        ['it again', "os.unlink('f.md')"],
        ['a directory with files', "os.unlink('d')"],
        ['an empty directory', "os.mkdir('e')\nos.unlink('e')"],
        ['a file as a directory', "os.unlink('g.md/x')"],
        ['a file with a trailing slash', "os.unlink('g.md/')"],
        ['under a missing directory', "os.unlink('nodir/x.md')"],
      ]),
    ).toEqual({
      'a file': 'ok',
      'it again': 'ENOENT',
      'a directory with files': 'EISDIR',
      'an empty directory': 'EISDIR',
      'a file as a directory': 'ENOTDIR',
      'a file with a trailing slash': 'ENOTDIR',
      'under a missing directory': 'ENOENT',
    });
    expect(await m.tree()).toEqual({ '/g.md': 'g\n', '/d/in.md': 'in\n' });
    expect(await m.mountLog()).toEqual(['deleted /f.md']);
  });

  it('rename moves files and directories and refuses the cases POSIX refuses', async () => {
    const m = await startMount({ seed: { '/f.md': 'f\n', '/g.md': 'g\n', '/d/in.md': 'in\n', '/full/k.md': 'k\n' } });
    expect(
      await outcomes(m.mnt, [
        ['a directory onto a file', "os.mkdir('e')\nos.rename('e', 'f.md')"],
        ['a file onto an empty directory', "os.rename('f.md', 'e')"],
        ['a file onto a non-empty directory', "os.rename('f.md', 'd')"],
        ['a directory into its own subtree', "os.rename('d', 'd/sub')"],
        ['a directory onto its own parent', "os.rename('full', 'full/../full')"],
        ['a directory onto a non-empty directory', "os.rename('e', 'full')"],
        ['a file onto itself', "os.rename('f.md', 'f.md')"],
        ['a directory onto itself', "os.rename('d', 'd')"],
        ['a missing name', "os.rename('nope.md', 'x.md')"],
        ['into a missing directory', "os.rename('f.md', 'nodir/x.md')"],
        ['through a file as a directory', "os.rename('f.md', 'g.md/x.md')"],
        ['a file with a trailing slash', "os.rename('f.md', 'h.md/')"],
        ["'.'", "os.rename('d/.', 'x')"],
        ['a name over 255 bytes', `os.rename('f.md', '${'n'.repeat(256)}')`],
        ['a directory onto an empty directory', "os.rename('e', 'd2')\nos.mkdir('e2')\nos.rename('d2', 'e2')"],
        ['a file onto a file', "os.rename('f.md', 'g.md')"],
      ]),
    ).toEqual({
      'a directory onto a file': 'ENOTDIR',
      'a file onto an empty directory': 'EISDIR',
      'a file onto a non-empty directory': 'EISDIR',
      'a directory into its own subtree': 'EINVAL',
      'a directory onto its own parent': 'ok',
      'a directory onto a non-empty directory': 'ENOTEMPTY',
      'a file onto itself': 'ok',
      'a directory onto itself': 'ok',
      'a missing name': 'ENOENT',
      'into a missing directory': 'ENOENT',
      'through a file as a directory': 'ENOTDIR',
      'a file with a trailing slash': 'ENOTDIR',
      "'.'": 'EBUSY',
      'a name over 255 bytes': 'ENAMETOOLONG',
      'a directory onto an empty directory': 'ok',
      'a file onto a file': 'ok',
    });
    expect(await m.tree()).toEqual({ '/g.md': 'f\n', '/d/in.md': 'in\n', '/full/k.md': 'k\n' });
  });

  it('rename keeps a file its inode number, mode and content, and the old name is gone', async () => {
    const m = await startMount({ seed: { '/a.md': 'A\n' } });
    const r = await pyJson<Record<string, unknown>>(
      m.mnt,
      [
        "os.chmod('a.md', 0o600)",
        "before = os.stat('a.md')",
        "os.rename('a.md', 'b.md')",
        "after = os.stat('b.md')",
        "print(json.dumps({'ino': after.st_ino == before.st_ino, 'mode': oct(after.st_mode), 'old': os.path.exists('a.md'), 'content': open('b.md').read()}))",
      ].join('\n'),
    );
    expect(r).toEqual({ ino: true, mode: '0o100600', old: false, content: 'A\n' });
  });

  it('mkdir makes a directory with the mode asked, and refuses existing names (EEXIST), missing parents (ENOENT) and file prefixes (ENOTDIR)', async () => {
    const m = await startMount({ seed: { '/f.md': 'f\n', '/d/in.md': 'in\n' } });
    expect(
      await outcomes(m.mnt, [
        ['a new directory', "import stat\nos.mkdir('n', 0o700)\ns = os.stat('n')\nassert stat.S_ISDIR(s.st_mode) and stat.S_IMODE(s.st_mode) == 0o700, oct(s.st_mode)"],
        ['with a trailing slash', "os.mkdir('t/')\nassert os.path.isdir('t')"],
        ['an existing directory', "os.mkdir('d')"],
        ['an existing file', "os.mkdir('f.md')"],
        ['under a missing directory', "os.mkdir('nodir/x')"],
        ['under a file', "os.mkdir('f.md/x')"],
        ['a name over 255 bytes', `os.mkdir('${'n'.repeat(256)}')`],
        ['a path over 1,024 bytes', `os.makedirs('${LONG_DIR}')\nos.mkdir('${LONG_DIR}/${'c'.repeat(40)}')`],
      ]),
    ).toEqual({
      'a new directory': 'ok',
      'with a trailing slash': 'ok',
      'an existing directory': 'EEXIST',
      'an existing file': 'EEXIST',
      'under a missing directory': 'ENOENT',
      'under a file': 'ENOTDIR',
      'a name over 255 bytes': 'ENAMETOOLONG',
      'a path over 1,024 bytes': 'ENAMETOOLONG',
    });
  });

  it("rmdir removes an empty directory, and refuses '.', non-empty directories, files and missing names", async () => {
    const m = await startMount({ seed: { '/f.md': 'f\n', '/d/in.md': 'in\n' } });
    expect(
      await outcomes(m.mnt, [
        ['an empty directory', "os.mkdir('e')\nos.rmdir('e')\nassert not os.path.exists('e')"],
        ['it again', "os.rmdir('e')"],
        ["'.' of a directory", "os.rmdir('d/.')"],
        ["'..' of a directory", "os.rmdir('d/..')"],
        ['a non-empty directory', "os.rmdir('d')"],
        ['a file', "os.rmdir('f.md')"],
        ['a file with a trailing slash', "os.rmdir('f.md/')"],
        ['under a file', "os.rmdir('f.md/x')"],
        ['the emptied directory', "os.unlink('d/in.md')\nos.rmdir('d')"],
      ]),
    ).toEqual({
      'an empty directory': 'ok',
      'it again': 'ENOENT',
      "'.' of a directory": 'EINVAL',
      "'..' of a directory": 'ENOTEMPTY',
      'a non-empty directory': 'ENOTEMPTY',
      'a file': 'ENOTDIR',
      'a file with a trailing slash': 'ENOTDIR',
      'under a file': 'ENOTDIR',
      'the emptied directory': 'ok',
    });
    expect(await m.tree()).toEqual({ '/f.md': 'f\n' });
  });

  it('truncate sets the size (new bytes read as zeros) and refuses negative sizes, directories, missing files and sizes over the limit', async () => {
    const m = await startMount({ seed: { '/t.md': '0123456789', '/d/in.md': 'in\n' } });
    expect(
      await outcomes(m.mnt, [
        ['shorter', "os.truncate('t.md', 4)\nassert open('t.md', 'rb').read() == b'0123'"],
        ['longer', "os.truncate('t.md', 6)\nassert open('t.md', 'rb').read() == b'0123\\0\\0'"],
        ['the same size', "os.truncate('t.md', 6)\nassert os.stat('t.md').st_size == 6"],
        ['a negative size', "os.truncate('t.md', -1)"],
        ['a directory', "os.truncate('d', 0)"],
        ['a missing file', "os.truncate('nope.md', 0)"],
        ['under a file', "os.truncate('t.md/x', 0)"],
        ['over 102,400 bytes', "os.truncate('t.md', 102401)"],
      ]),
    ).toEqual({
      shorter: 'ok',
      longer: 'ok',
      'the same size': 'ok',
      'a negative size': 'EINVAL',
      'a directory': 'EISDIR',
      'a missing file': 'ENOENT',
      'under a file': 'ENOTDIR',
      'over 102,400 bytes': 'EFBIG',
    });
    expect(await m.tree()).toEqual({ '/t.md': '0123\0\0', '/d/in.md': 'in\n' });
  });

  it('ftruncate sets the size through a writable descriptor and refuses negative sizes, read-only descriptors and directories (EINVAL)', async () => {
    const m = await startMount({ seed: { '/t.md': '0123456789', '/d/in.md': 'in\n' } });
    expect(
      await outcomes(m.mnt, [
        ['shorter', "fd = os.open('t.md', os.O_RDWR)\nos.ftruncate(fd, 3)\nassert os.fstat(fd).st_size == 3\nos.close(fd)"],
        ['longer, write-only', "fd = os.open('t.md', os.O_WRONLY)\nos.ftruncate(fd, 5)\nos.close(fd)\nassert open('t.md', 'rb').read() == b'012\\0\\0'"],
        ['a negative size', "fd = os.open('t.md', os.O_RDWR)\ntry:\n    os.ftruncate(fd, -1)\nfinally:\n    os.close(fd)"],
        ['a read-only descriptor', "fd = os.open('t.md', os.O_RDONLY)\ntry:\n    os.ftruncate(fd, 0)\nfinally:\n    os.close(fd)"],
        ['a directory', "fd = os.open('d', os.O_RDONLY)\ntry:\n    os.ftruncate(fd, 0)\nfinally:\n    os.close(fd)"],
        ['over 102,400 bytes', "fd = os.open('t.md', os.O_RDWR)\ntry:\n    os.ftruncate(fd, 102401)\nfinally:\n    os.close(fd)"],
        ['through O_APPEND', "fd = os.open('t.md', os.O_WRONLY | os.O_APPEND)\nos.ftruncate(fd, 1)\nos.close(fd)"],
      ]),
    ).toEqual({
      shorter: 'ok',
      'longer, write-only': 'ok',
      'a negative size': 'EINVAL',
      'a read-only descriptor': 'EINVAL',
      'a directory': 'EINVAL',
      'over 102,400 bytes': 'EFBIG',
      'through O_APPEND': 'ok',
    });
    expect(await m.tree()).toEqual({ '/t.md': '0', '/d/in.md': 'in\n' });
  });

  it('chmod sets the permission bits of files and directories (and fchmod through a descriptor), and refuses missing names', async () => {
    const m = await startMount({ seed: { '/f.md': 'f\n', '/d/in.md': 'in\n' } });
    const r = await pyJson<Record<string, string>>(
      m.mnt,
      [
        'out = {}',
        "os.chmod('f.md', 0o600); out['file'] = oct(os.stat('f.md').st_mode)",
        "os.chmod('f.md', 0o4751); out['setuid and more'] = oct(os.stat('f.md').st_mode)",
        "os.chmod('d', 0o711); out['directory'] = oct(os.stat('d').st_mode)",
        "fd = os.open('f.md', os.O_RDONLY); os.fchmod(fd, 0o640); out['fchmod'] = oct(os.fstat(fd).st_mode); os.close(fd)",
        "out['after fchmod'] = oct(os.stat('f.md').st_mode)",
        'try:',
        "    os.chmod('nope.md', 0o600); out['missing'] = 'ok'",
        'except OSError as e:',
        "    out['missing'] = __import__('errno').errorcode[e.errno]",
        'print(json.dumps(out))',
      ].join('\n'),
    );
    expect(r).toEqual({
      file: '0o100600',
      'setuid and more': '0o104751',
      directory: '0o40711',
      fchmod: '0o100640',
      'after fchmod': '0o100640',
      missing: 'ENOENT',
    });
    // A mode is not content: no version.
    expect(await m.mountLog()).toEqual([]);
  });

  it('utimensat sets the mtime asked, leaves it under UTIME_OMIT, and refuses missing names', async () => {
    const m = await startMount({ seed: { '/f.md': 'f\n' } });
    const r = await pyJson<Record<string, unknown>>(
      m.mnt,
      [
        'out = {}',
        "os.utime('f.md', (1000000000, 1500000000)); out['set'] = os.stat('f.md').st_mtime",
        "os.utime('f.md', ns=(1000000000 * 10**9, 1600000000 * 10**9 + 500000000)); out['nanoseconds'] = str(os.stat('f.md').st_mtime_ns)",
        // UTIME_OMIT for mtime: touch -a.
        "import subprocess; subprocess.run(['touch', '-a', '-d', '@1234567890', 'f.md'], check=True)",
        "out['omit'] = str(os.stat('f.md').st_mtime_ns)",
        "before = os.stat('f.md').st_mtime; os.utime('f.md'); out['now moves it'] = os.stat('f.md').st_mtime > before",
        'try:',
        "    os.utime('nope.md', None); out['missing'] = 'ok'",
        'except OSError as e:',
        "    out['missing'] = __import__('errno').errorcode[e.errno]",
        'print(json.dumps(out))',
      ].join('\n'),
    );
    expect(r).toEqual({ set: 1500000000, nanoseconds: '1600000000500000000', omit: '1600000000500000000', 'now moves it': true, missing: 'ENOENT' });
    // Times are not content: no version.
    expect(await m.mountLog()).toEqual([]);
  });

  it('a read-only mount refuses every change with EROFS, and still reads and finds', async () => {
    const m = await startMount({ seed: { '/f.md': 'f\n', '/d/in.md': 'in\n' }, readOnly: true });
    expect(
      await outcomes(m.mnt, [
        ['read', "assert open('f.md').read() == 'f\\n'"],
        ['O_RDONLY|O_CREAT of an existing file', "os.close(os.open('f.md', os.O_RDONLY | os.O_CREAT))"],
        ['O_CREAT of a new file', "os.open('n.md', os.O_WRONLY | os.O_CREAT)"],
        ['O_WRONLY', "os.open('f.md', os.O_WRONLY)"],
        ['O_RDWR', "os.open('f.md', os.O_RDWR)"],
        ['truncate', "os.truncate('f.md', 0)"],
        ['mkdir', "os.mkdir('x')"],
        ['rmdir', "os.rmdir('d')"],
        ['unlink', "os.unlink('f.md')"],
        ['rename', "os.rename('f.md', 'g.md')"],
        ['chmod', "os.chmod('f.md', 0o600)"],
        ['utime', "os.utime('f.md', (1, 2))"],
        ['a missing name', "os.stat('nope.md')"],
        ['the ST_RDONLY flag', "assert os.statvfs('.').f_flag & os.ST_RDONLY"],
      ]),
    ).toEqual({
      read: 'ok',
      'O_RDONLY|O_CREAT of an existing file': 'ok',
      'O_CREAT of a new file': 'EROFS',
      O_WRONLY: 'EROFS',
      O_RDWR: 'EROFS',
      truncate: 'EROFS',
      mkdir: 'EROFS',
      rmdir: 'EROFS',
      unlink: 'EROFS',
      rename: 'EROFS',
      chmod: 'EROFS',
      utime: 'EROFS',
      'a missing name': 'ENOENT',
      'the ST_RDONLY flag': 'ok',
    });
    expect(await m.tree()).toEqual({ '/f.md': 'f\n', '/d/in.md': 'in\n' });
  });

  it('a mount of a store archived while mounted refuses every change with EROFS, as a read-only mount does', async () => {
    const m = await startMount({ seed: { '/f.md': 'f\n', '/d/in.md': 'in\n' } });
    await m.call('archive');
    expect(
      await outcomes(m.mnt, [
        ['read', "assert open('f.md').read() == 'f\\n'"],
        ['O_CREAT of a new file', "os.open('n.md', os.O_WRONLY | os.O_CREAT)"],
        ['O_WRONLY', "os.open('f.md', os.O_WRONLY)"],
        ['truncate', "os.truncate('f.md', 0)"],
        ['mkdir', "os.mkdir('x')"],
        ['rmdir', "os.rmdir('d')"],
        ['unlink', "os.unlink('f.md')"],
        ['rename', "os.rename('f.md', 'g.md')"],
        ['chmod', "os.chmod('f.md', 0o600)"],
        ['utime', "os.utime('f.md', (1, 2))"],
      ]),
    ).toEqual({
      read: 'ok',
      'O_CREAT of a new file': 'EROFS',
      O_WRONLY: 'EROFS',
      truncate: 'EROFS',
      mkdir: 'EROFS',
      rmdir: 'EROFS',
      unlink: 'EROFS',
      rename: 'EROFS',
      chmod: 'EROFS',
      utime: 'EROFS',
    });
    expect(await m.tree()).toEqual({ '/f.md': 'f\n', '/d/in.md': 'in\n' });
  });
});
