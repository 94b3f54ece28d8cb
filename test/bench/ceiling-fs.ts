/**
 * @module The bench's FUSE ceiling: a minimal in-memory fuse-native filesystem (no SQLite, no
 * versions, default libfuse 3 options through the same binding as mnemo). Run as a child process
 * (`node dist/test/bench/ceiling-fs.js <mnt>`): prints "ready" once mounted, unmounts on SIGTERM.
 */
import Fuse, { type FuseOps } from '../../fs/binding/fuse.js';

const mnt = process.argv[2];
if (!mnt) {
  process.stderr.write('usage: ceiling-fs <mountpoint>\n');
  process.exit(2);
}

interface File {
  bytes: Buffer;
  size: number;
  mode: number;
  mtime: number;
}

const files = new Map<string, File>();
const dirs = new Map<string, number>([['/', 0o755]]);
const handles = new Map<number, File>();
let nextFh = 1;
const uid = process.getuid?.() ?? 0;
const gid = process.getgid?.() ?? 0;
const started = Date.now();

const parentOf = (p: string) => p.slice(0, p.lastIndexOf('/')) || '/';

function stat(mode: number, size: number, mtime: number) {
  return { mode, uid, gid, size, nlink: 1, atime: mtime, mtime, ctime: mtime };
}

function ensureCap(f: File, n: number): void {
  if (n <= f.bytes.length) return;
  const next = Buffer.alloc(Math.max(n, f.bytes.length * 2, 4096));
  f.bytes.copy(next, 0, 0, f.size);
  f.bytes = next;
}

const ops: FuseOps = {
  init: (cb) => cb(0),
  getattr(path, cb, fh) {
    const f = path === null ? handles.get(fh) : files.get(path);
    if (f) return cb(0, stat(0o100000 | f.mode, f.size, f.mtime));
    const d = path === null ? undefined : dirs.get(path);
    if (d !== undefined) return cb(0, stat(0o040000 | d, 4096, started));
    cb(Fuse.ENOENT);
  },
  readdir(path, cb) {
    if (!dirs.has(path)) return cb(Fuse.ENOENT);
    const prefix = path === '/' ? '/' : path + '/';
    const names: string[] = ['.', '..'];
    for (const p of [...files.keys(), ...dirs.keys()]) {
      if (p !== '/' && p.startsWith(prefix) && !p.includes('/', prefix.length)) names.push(p.slice(prefix.length));
    }
    cb(0, names);
  },
  open(path, _flags, cb) {
    const f = files.get(path);
    if (!f) return cb(Fuse.ENOENT);
    const fh = nextFh++;
    handles.set(fh, f);
    cb(0, fh);
  },
  create(path, mode, cb) {
    if (!dirs.has(parentOf(path))) return cb(Fuse.ENOENT);
    const f: File = { bytes: Buffer.alloc(0), size: 0, mode: mode & 0o7777, mtime: Date.now() };
    files.set(path, f);
    const fh = nextFh++;
    handles.set(fh, f);
    // As mnemo does: the new file's stat with the reply spares libfuse's getattr after it.
    cb(0, fh, 0, stat(0o100000 | f.mode, f.size, f.mtime));
  },
  read(_path, fh, buf, len, pos, cb) {
    const f = handles.get(fh);
    if (!f) return cb(Fuse.EBADF);
    if (pos >= f.size) return cb(0);
    const n = Math.min(len, f.size - pos);
    f.bytes.copy(buf, 0, pos, pos + n);
    cb(n);
  },
  write(_path, fh, buf, len, pos, cb) {
    const f = handles.get(fh);
    if (!f) return cb(Fuse.EBADF);
    ensureCap(f, pos + len);
    buf.copy(f.bytes, pos, 0, len);
    f.size = Math.max(f.size, pos + len);
    f.mtime = Date.now();
    cb(len);
  },
  truncate(path, size, cb) {
    const f = files.get(path);
    if (!f) return cb(Fuse.ENOENT);
    ensureCap(f, size);
    if (size < f.size) f.bytes.fill(0, size, f.size);
    f.size = size;
    cb(0);
  },
  ftruncate(_path, fh, size, cb) {
    const f = handles.get(fh);
    if (!f) return cb(Fuse.EBADF);
    ensureCap(f, size);
    if (size < f.size) f.bytes.fill(0, size, f.size);
    f.size = size;
    cb(0);
  },
  flush: (_path, _fh, cb) => cb(0),
  fsync: (_path, _datasync, _fh, cb) => cb(0),
  release(_path, fh, cb) {
    handles.delete(fh);
    cb(0);
  },
  unlink(path, cb) {
    if (!files.delete(path)) return cb(Fuse.ENOENT);
    cb(0);
  },
  rename(src, dst, cb) {
    const f = files.get(src);
    if (!f) return cb(dirs.has(src) ? Fuse.EPERM : Fuse.ENOENT);
    files.delete(src);
    files.set(dst, f);
    cb(0);
  },
  mkdir(path, mode, cb) {
    if (dirs.has(path) || files.has(path)) return cb(Fuse.EEXIST);
    dirs.set(path, mode & 0o7777);
    cb(0, stat(0o040000 | (mode & 0o7777), 4096, started));
  },
  rmdir(path, cb) {
    if (!dirs.has(path)) return cb(Fuse.ENOENT);
    const prefix = path + '/';
    for (const p of [...files.keys(), ...dirs.keys()]) if (p.startsWith(prefix)) return cb(Fuse.ENOTEMPTY);
    dirs.delete(path);
    cb(0);
  },
  chmod(path, mode, cb, fh) {
    const f = path === null ? handles.get(fh) : files.get(path);
    if (f) f.mode = mode & 0o7777;
    cb(f || (path !== null && dirs.has(path)) ? 0 : Fuse.ENOENT);
  },
  chown: (_path, _uid, _gid, cb) => cb(0),
  utimens(path, _atime, mtime, cb, fh) {
    const f = path === null ? handles.get(fh) : files.get(path);
    if (f && mtime !== null) f.mtime = mtime;
    cb(0);
  },
};

const fuse = new Fuse(mnt, ops, { force: true, mkdir: true, options: ['auto_unmount'] });
fuse.mount((err) => {
  if (err) {
    process.stderr.write(`ceiling-fs: mount failed: ${err.message}\n`);
    process.exit(1);
  }
  process.stdout.write('ready\n');
});

function stop(): void {
  fuse.unmount(() => process.exit(0));
  setTimeout(() => process.exit(0), 3000).unref();
}
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
