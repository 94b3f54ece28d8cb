/**
 * @module mnemo's FUSE binding: the JS half of native/fuse (fuse-native 2.2.6's addon, ported to
 * libfuse 3 and built from source at `npm ci`). Handlers run on the Node main thread, one at a
 * time; each replies exactly once with a number (notes §1.4). What differs from fuse-native:
 * - utimens gets both times as asked (ms, fractions kept), null for UTIME_OMIT;
 * - getattr, chmod, chown and utimens get the file handle when called through one (the binding
 *   adds the kernel's handle where the kernel sends none), and an op on a file unlinked or replaced
 *   while open gets a null path and that handle, so it keeps working (hard_remove);
 * - open and create may reply with flags (direct_io, keep_cache, noflush; an open also "drop the
 *   kernel's attributes of the node first"), and create and mkdir with the new node's attributes,
 *   which answer libfuse's getattr after them without another hop here;
 * - names that are not UTF-8 are refused with EINVAL before any handler runs;
 * - readdir may reply with each name's type (DirEntries), which the kernel passes on as d_type;
 * - st_ino is 64-bit (two words where fuse-native had st_ino and st_rdev);
 * - a file's stat kept with `keptStats.keep` is answered on libfuse's thread, without a hop here,
 *   while the counters in `keptStats.cells` allow it (native/fuse/stat-cache.h, fs/kernel-stats.ts);
 * - `invalidate(path)` drops the kernel's cached attributes and pages of a path, and
 *   `invalidateEntry(path)` its entry for the name, from a thread of its own (the kernel may wait
 *   there for a request only this thread can answer);
 * - mount options are libfuse's own `-o` names, passed as they are;
 * - every request handed to a handler is watched: one unanswered for 10 s is logged by name
 *   (unanswered.ts).
 */
import { execFile } from 'node:child_process';
import { mkdir, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { TRACE_FILE, timed, traceNative } from './trace.js';
import { stayAwake } from './stay-awake.js';
import { DEFAULT_UNANSWERED_MS, Unanswered } from './unanswered.js';
import { guardMount, releaseMount } from './unmount-guard.js';

type Cb<T = never> = [T] extends [never] ? (code: number) => void : (code: number, value?: T) => void;

export interface FuseStat {
  mode: number;
  uid: number;
  gid: number;
  size: number;
  nlink?: number;
  ino?: number;
  blksize?: number;
  blocks?: number;
  /** Milliseconds since the epoch (fractions kept to the microsecond) or a Date. */
  atime: Date | number;
  mtime: Date | number;
  ctime: Date | number;
}

/** A listing with each name's type, so `find -type f` and `os.scandir` need no stat per entry. */
export interface DirEntries {
  names: string[];
  /** One byte per name: its d_type (DT_DIR 4, DT_REG 8), or 0 for unknown. */
  types: Buffer;
}

export interface FuseStatfs {
  bsize: number;
  frsize: number;
  blocks: number;
  bfree: number;
  bavail: number;
  files: number;
  ffree: number;
  favail: number;
  fsid: number;
  flag: number;
  namemax: number;
}

/** Who asked for an operation (fuse_get_context). */
export interface Caller {
  uid: number;
  gid: number;
}

/** Reply flags for open and create. */
export const OPEN_DIRECT_IO = 1;
export const OPEN_KEEP_CACHE = 2;
/** The kernel sends no FLUSH at close (a read-only open has nothing to save). */
export const OPEN_NOFLUSH = 4;
/**
 * Open only: the kernel forgets its cached attributes of the node it opens before the reply reaches
 * it (the binding notifies it on the open's own thread), so the opener's fstat and a read past the
 * old size ask again. For a file whose stored version changed since the kernel last heard its size.
 */
export const OPEN_DROP_ATTRS = 8;

/** A path is null for an op through a handle on a file unlinked or replaced while open (read, write, fstat, fchmod…). */
export interface FuseOps {
  init?(cb: Cb): void;
  statfs?(path: string, cb: Cb<FuseStatfs>): void;
  /**
   * `fh`: the handle the kernel asked through (a read's or a seek's size check: `lent` false), or
   * one the binding lent a GETATTR that came without one (`lent` true: an fstat, or a stat by path
   * of an open file); 0 without either.
   */
  getattr?(path: string | null, cb: Cb<FuseStat>, fh: number, lent: boolean): void;
  readdir?(path: string, cb: Cb<string[] | DirEntries>): void;
  /**
   * Replies `cb(0, fh)` or `cb(0, fh, OPEN_* flags)`. `ino`: the inode number of the file the
   * kernel resolved the path to (its lookup's answer), 0 if the binding did not note it.
   */
  open?(path: string, flags: number, cb: (code: number, fh?: number, openFlags?: number) => void, ino: number): void;
  /** `caller`: the creating process's uid and gid (a new file belongs to its creator). */
  /**
   * `st`, the new file's attributes, spares the getattr libfuse makes right after a create (the
   * addon answers it from the reply).
   */
  create?(path: string, mode: number, cb: (code: number, fh?: number, openFlags?: number, st?: FuseStat) => void, flags: number, caller: Caller): void;
  read?(path: string | null, fh: number, buf: Buffer, len: number, pos: number, cb: Cb): void;
  write?(path: string | null, fh: number, buf: Buffer, len: number, pos: number, cb: Cb): void;
  truncate?(path: string, size: number, cb: Cb): void;
  ftruncate?(path: string | null, fh: number, size: number, cb: Cb): void;
  flush?(path: string | null, fh: number, cb: Cb): void;
  fsync?(path: string | null, datasync: number, fh: number, cb: Cb): void;
  /** A directory's fsync: its path (kept by the binding's opendir), no handle. */
  fsyncdir?(path: string, datasync: number, fh: number, cb: Cb): void;
  release?(path: string | null, fh: number, cb: Cb): void;
  unlink?(path: string, cb: Cb): void;
  /** `flags`: RENAME_NOREPLACE (1), RENAME_EXCHANGE (2). */
  rename?(src: string, dest: string, cb: Cb, flags: number): void;
  /** `st`, the new directory's attributes, spares the getattr libfuse makes right after a mkdir, as for create. */
  mkdir?(path: string, mode: number, cb: (code: number, st?: FuseStat) => void, caller: Caller): void;
  rmdir?(path: string, cb: Cb): void;
  chmod?(path: string | null, mode: number, cb: Cb, fh: number): void;
  /** uid or gid -1: leave it unchanged. */
  chown?(path: string | null, uid: number, gid: number, cb: Cb, fh: number): void;
  /** Milliseconds since the epoch, or null for UTIME_OMIT (UTIME_NOW arrives as the current time). */
  utimens?(path: string | null, atime: number | null, mtime: number | null, cb: Cb, fh: number): void;
  link?(src: string, dest: string, cb: Cb): void;
  symlink?(target: string, path: string, cb: Cb): void;
  mknod?(path: string, mode: number, dev: number, cb: Cb): void;
}

export interface FuseOptions {
  /** Clear a dead mount (ENOTCONN) at the mount point first. */
  force?: boolean;
  /** Create the mount point if it is missing. */
  mkdir?: boolean;
  /** libfuse 3 `-o` options, as libfuse spells them (auto_unmount, allow_other, attr_timeout=1…). */
  options?: readonly string[];
  /** Where a request unanswered for `unansweredMs` is logged (unanswered.ts); none: not watched. */
  log?: (line: string) => void;
  unansweredMs?: number;
  /** How long the event loop keeps turning after each request before it may sleep, in µs (stay-awake.ts; 0: not at all). */
  spinUs?: number;
}

interface Addon {
  sizeof_fuse_thread_t: number;
  fuse_native_mount(
    mnt: string, opts: string, thread: Buffer, self: unknown, malloc: (n: number) => Buffer,
    handlers: unknown[], implemented: Uint32Array, invalidated: (id: number, res: number) => void, config: number,
  ): void;
  fuse_native_unmount(mnt: string, thread: Buffer): void;
  fuse_native_invalidate(thread: Buffer, path: string, id: number, entry: number, ino: number): void;
  fuse_native_trace(thread: Buffer, out: BigUint64Array): void;
  offsetof_fuse_thread_t_stat_cells: number;
  fuse_native_stat_keep(thread: Buffer, path: string, st: Uint32Array, gen: number): void;
  fuse_native_stat_forget(thread: Buffer, path: string): void;
  fuse_native_stat_hold(thread: Buffer, path: string, held: number): void;
  fuse_native_stat_vouch(thread: Buffer): void;
  fuse_native_stat_info(thread: Buffer, out: Float64Array): void;
  [name: string]: unknown;
}

// The addon is built into native/fuse/build by `npm ci` (package.json "imports" names it).
const addon = createRequire(import.meta.url)('#fuse-addon') as Addon;

type Signal = (...args: unknown[]) => void;
type Impl = (self: Fuse, signal: Signal, ...args: never[]) => void;

/** What each JS op gets from the addon, and what its reply hands back (fuse-native's protocol). */
const OPS: Record<string, Impl> = {
  init: (f, signal) => (f.ops.init ? f.ops.init((err) => signal(err)) : signal(0)),
  error: (_f, signal) => signal(0),
  statfs: (f, signal, path: string) => f.ops.statfs!(path, (err, st) => (err ? signal(err, statfsArray()) : signal(0, statfsArray(st)))),
  getattr: (f, signal, path: string | null, fh: number, lent: boolean) => {
    if (!f.ops.getattr) return path === '/' ? signal(0, statArray({ mode: 0o40755, uid: 0, gid: 0, size: 4096, atime: 0, mtime: 0, ctime: 0 })) : signal(-1, statArray());
    f.ops.getattr(path, (err, st) => (err ? signal(err, statArray()) : signal(0, statArray(st))), fh, lent);
  },
  readdir: (f, signal, path: string) =>
    f.ops.readdir!(path, (err, list) => {
      if (err || !list) return signal(err, [], []);
      return Array.isArray(list) ? signal(0, list, []) : signal(0, list.names, list.types);
    }),
  open: (f, signal, path: string, flags: number, ino: number) => f.ops.open!(path, flags, (err, fh = 0, of = 0) => signal(err, fh, of), ino),
  create: (f, signal, path: string, mode: number, flags: number, uid: number, gid: number) =>
    f.ops.create!(path, mode, (err, fh = 0, of = 0, st) => signal(err, fh, of, st && !err ? statArray(st) : null), flags, { uid, gid }),
  read: (f, signal, path: string | null, fh: number, buf: Buffer, len: number, lo: number, hi: number) =>
    f.ops.read!(path, fh, buf, len, lo + hi * 4294967296, (n) => signal(n, 0, buf.buffer)),
  write: (f, signal, path: string | null, fh: number, buf: Buffer, len: number, lo: number, hi: number) =>
    f.ops.write!(path, fh, buf, len, lo + hi * 4294967296, (n) => signal(n, 0, buf.buffer)),
  truncate: (f, signal, path: string, lo: number, hi: number) => f.ops.truncate!(path, lo + hi * 4294967296, (err) => signal(err)),
  ftruncate: (f, signal, path: string | null, fh: number, lo: number, hi: number) => {
    const size = lo + hi * 4294967296;
    if (f.ops.ftruncate) f.ops.ftruncate(path, fh, size, (err) => signal(err));
    else if (path !== null && f.ops.truncate) f.ops.truncate(path, size, (err) => signal(err));
    else signal(-38);
  },
  flush: (f, signal, path: string | null, fh: number) => f.ops.flush!(path, fh, (err) => signal(err)),
  fsync: (f, signal, path: string | null, datasync: number, fh: number) => f.ops.fsync!(path, datasync, fh, (err) => signal(err)),
  fsyncdir: (f, signal, path: string, datasync: number, fh: number) => f.ops.fsyncdir!(path, datasync, fh, (err) => signal(err)),
  release: (f, signal, path: string | null, fh: number) => f.ops.release!(path, fh, (err) => signal(err)),
  unlink: (f, signal, path: string) => f.ops.unlink!(path, (err) => signal(err)),
  rename: (f, signal, src: string, dest: string, flags: number) => f.ops.rename!(src, dest, (err) => signal(err), flags),
  mkdir: (f, signal, path: string, mode: number, uid: number, gid: number) =>
    f.ops.mkdir!(path, mode, (err, st) => signal(err, st && !err ? statArray(st) : null), { uid, gid }),
  rmdir: (f, signal, path: string) => f.ops.rmdir!(path, (err) => signal(err)),
  chmod: (f, signal, path: string | null, mode: number, fh: number) => f.ops.chmod!(path, mode, (err) => signal(err), fh),
  chown: (f, signal, path: string | null, uid: number, gid: number, fh: number) => f.ops.chown!(path, uid, gid, (err) => signal(err), fh),
  utimens: (f, signal, path: string | null, atime: number | null, mtime: number | null, fh: number) =>
    f.ops.utimens!(path, atime, mtime, (err) => signal(err), fh),
  link: (f, signal, src: string, dest: string) => f.ops.link!(src, dest, (err) => signal(err)),
  symlink: (f, signal, target: string, path: string) => f.ops.symlink!(target, path, (err) => signal(err)),
  mknod: (f, signal, path: string, mode: number, dev: number) => f.ops.mknod!(path, mode, dev, (err) => signal(err)),
};

const ALWAYS = new Set(['init', 'error', 'getattr']);

/** The options libfuse 3 sets only in init's fuse_config: the addon applies them there. */
const CONFIG: Record<string, number> = { use_ino: 1, hard_remove: 2 };
/** Config bit: the addon times the requests it hands to JS (trace.ts). */
const CONFIG_TRACE = 4;

/**
 * The binding's kept stats of one mount (native/fuse/stat-cache.h): what the mount's JavaScript
 * keeps there and the counters that say when a kept stat may be answered (fs/kernel-stats.ts).
 */
export interface KeptStats {
  /** Shared with the libfuse threads: [KEPT_GEN, KEPT_BUSY, KEPT_ON] (Atomics). */
  readonly cells: Int32Array;
  keep(path: string, st: FuseStat, gen: number): void;
  forget(path: string): void;
  hold(path: string, held: boolean): void;
  /** The JS thread is alive and has looked for changes: kept stats may be answered for a while. */
  vouch(): void;
  /** Stats answered by the binding so far, and stats kept now. */
  info(): { answered: number; kept: number };
}

export const KEPT_GEN = 0;
export const KEPT_BUSY = 1;
export const KEPT_ON = 2;

export default class Fuse {
  readonly mnt: string;
  private readonly thread: Buffer;
  readonly keptStats: KeptStats;
  private readonly threads = new Set<Buffer>();
  private readonly pending = new Map<number, (res: number) => void>();
  private nextId = 1;
  private mounted = false;
  private onMounted: ((err: Error | null) => void) | null = null;
  private untrace: (() => void) | null = null;
  private readonly unanswered: Unanswered | null;

  constructor(
    mnt: string,
    readonly ops: FuseOps,
    private readonly opts: FuseOptions = {},
  ) {
    this.mnt = resolve(mnt);
    this.thread = Buffer.alloc(addon.sizeof_fuse_thread_t);
    this.keptStats = keptStats(this.thread);
    this.unanswered = opts.log ? new Unanswered(opts.unansweredMs ?? DEFAULT_UNANSWERED_MS, opts.log) : null;
  }

  /** Mounts; `cb` runs once the kernel's INIT reached this thread (the mount is usable then). */
  mount(cb: (err: Error | null) => void): void {
    this.prepare().then(
      () => {
        this.onMounted = cb;
        try {
          addon.fuse_native_mount(
            this.mnt, this.optionString(), this.thread, this, (n) => this.malloc(n), this.handlers(), this.implemented(),
            (id, res) => this.invalidated(id, res), this.config(),
          );
          this.mounted = true;
          guardMount(this.mnt);
          this.unanswered?.start();
          if (TRACE_FILE) this.untrace = traceNative((out) => addon.fuse_native_trace(this.thread, out), this.opNames());
        } catch (err) {
          this.onMounted = null;
          cb(err as Error);
        }
      },
      (err: Error) => cb(err),
    );
  }

  /** Lazy unmount (fusermount -uz), then lets the addon's handles go. */
  unmount(cb: (err: Error | null) => void): void {
    Fuse.unmount(this.mnt, (err) => {
      if (err) return cb(err);
      if (this.mounted) {
        addon.fuse_native_unmount(this.mnt, this.thread);
        releaseMount(this.mnt);
      }
      this.mounted = false;
      this.untrace?.();
      this.untrace = null;
      this.unanswered?.stop();
      for (const done of this.pending.values()) done(-107);
      this.pending.clear();
      cb(null);
    });
  }

  /**
   * Drops what the kernel caches for `path` (attributes, page cache); `done(0)` once it has, or a
   * negative errno (-ENOENT: the kernel held nothing for it). Never blocks this thread.
   */
  invalidate(path: string, done: (res: number) => void): void {
    this.notify(path, 0, done);
  }

  /**
   * Drops the kernel's entry for `path`'s name, for a file that vanished without an unlink or rename
   * the kernel saw; `done` as for invalidate (-ENOENT: no file of that name was looked up here).
   * Queued apart from invalidate's drops (the kernel takes the directory's lock for this one).
   */
  invalidateEntry(path: string, done: (res: number) => void): void {
    this.notify(path, 1, done);
  }

  /**
   * Drops the kernel's entry for the file whose inode number is `ino`, at the name the kernel last
   * learnt for it (a memory moved, changed or deleted elsewhere); `done` as for invalidate (-ENOENT:
   * the kernel was not told of such a file here).
   */
  invalidateFile(ino: number, done: (res: number) => void): void {
    this.notify('', 2, done, ino);
  }

  /** Drops the kernel's entry for `name` in the directory whose inode number is `dirIno` (0: the root). */
  invalidateName(dirIno: number, name: string, done: (res: number) => void): void {
    this.notify(name, 3, done, dirIno);
  }

  private notify(path: string, entry: number, done: (res: number) => void, ino = 0): void {
    if (!this.mounted) return done(-107);
    const id = this.nextId++;
    this.pending.set(id, done);
    addon.fuse_native_invalidate(this.thread, path, id, entry, ino);
  }

  static unmount(mnt: string, cb: (err: Error | null) => void): void {
    execFile('fusermount3', ['-uz', mnt], (err) => cb(err ?? null));
  }

  private invalidated(id: number, res: number): void {
    const done = this.pending.get(id);
    this.pending.delete(id);
    done?.(res);
  }

  private async prepare(): Promise<void> {
    if (this.opts.force) {
      const dead = await stat(join(this.mnt, 'test')).then(
        () => false,
        (err: NodeJS.ErrnoException) => err.code === 'ENOTCONN' || err.code === 'ENXIO',
      );
      if (dead) await new Promise<void>((r) => Fuse.unmount(this.mnt, () => r()));
    }
    let st = await stat(this.mnt).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT' || !this.opts.mkdir) throw err;
      return null;
    });
    if (!st) {
      await mkdir(this.mnt, { recursive: true });
      st = await stat(this.mnt);
    }
    if (!st.isDirectory()) throw new Error('Mountpoint is not a directory');
    const parent = await stat(join(this.mnt, '..')).catch(() => null);
    if (parent && parent.dev !== st.dev) throw new Error('Mountpoint in use');
  }

  /** libfuse 3 options, less those it takes only in init's config (CONFIG). */
  private optionString(): string {
    const o = (this.opts.options ?? []).filter((name) => !(name in CONFIG));
    return o.length ? '-o' + o.join(',') : '';
  }

  private config(): number {
    let bits = TRACE_FILE ? CONFIG_TRACE : 0;
    for (const name of this.opts.options ?? []) bits |= CONFIG[name] ?? 0;
    return bits;
  }

  /** The addon's op numbers and their names (trace.ts). */
  private opNames(): Map<number, string> {
    const out = new Map<number, string>();
    for (const name of Object.keys(OPS)) out.set(addon[`op_${name}`] as number, name);
    out.set(addon['op_ftruncate'] as number, 'ftruncate');
    return out;
  }

  private malloc(n: number): Buffer {
    const buf = Buffer.alloc(n);
    this.threads.add(buf);
    return buf;
  }

  private implemented(): Uint32Array {
    const out = new Uint32Array(35);
    for (const name of Object.keys(OPS)) {
      if (ALWAYS.has(name) || (this.ops as Record<string, unknown>)[name]) out[addon[`op_${name}`] as number] = 1;
    }
    // ftruncate is truncate-with-a-handle in libfuse 3: one op serves both.
    if (this.ops.truncate || this.ops.ftruncate) out[addon['op_truncate'] as number] = out[addon['op_ftruncate'] as number] = 1;
    return out;
  }

  private handlers(): unknown[] {
    const out: unknown[] = new Array(35);
    const spinMs = (this.opts.spinUs ?? 0) / 1000;
    for (const [name, impl] of Object.entries(OPS)) {
      const nativeSignal = addon[`fuse_native_signal_${name}`] as ((...a: unknown[]) => void) | undefined;
      if (!nativeSignal) continue;
      out[addon[`op_${name}`] as number] = (native: unknown, _op: number, ...args: never[]) => {
        if (spinMs > 0) stayAwake(spinMs);
        // On a later tick: a handler that replies at once must not re-enter the addon.
        let signal: Signal = (...reply) => process.nextTick(nativeSignal, native, ...reply);
        if (name === 'init' && this.onMounted) {
          process.nextTick(this.onMounted, null);
          this.onMounted = null;
        }
        if (TRACE_FILE) {
          const t = timed(name, (...reply: unknown[]) => nativeSignal(native, ...reply));
          t.start();
          signal = t.reply;
        }
        const watch = this.unanswered;
        if (watch) {
          const id = watch.begin(name, typeof args[0] === 'string' ? args[0] : '(open file)');
          const reply = signal;
          signal = (...a) => {
            watch.answered(id);
            reply(...a);
          };
        }
        impl(this, signal, ...args);
      };
    }
    return out;
  }

  static readonly EPERM = -1;
  static readonly ENOENT = -2;
  static readonly EIO = -5;
  static readonly ENXIO = -6;
  static readonly EBADF = -9;
  static readonly EAGAIN = -11;
  static readonly EACCES = -13;
  static readonly EBUSY = -16;
  static readonly EEXIST = -17;
  static readonly EXDEV = -18;
  static readonly ENOTDIR = -20;
  static readonly EISDIR = -21;
  static readonly EINVAL = -22;
  static readonly EFBIG = -27;
  static readonly ENOSPC = -28;
  static readonly EROFS = -30;
  static readonly ERANGE = -34;
  static readonly ENAMETOOLONG = -36;
  static readonly ENOSYS = -38;
  static readonly ENOTEMPTY = -39;
  static readonly ENODATA = -61;
  static readonly EILSEQ = -84;
  static readonly EOPNOTSUPP = -95;
  static readonly ENOTCONN = -107;
  static readonly ETIMEDOUT = -110;
  static readonly ESTALE = -116;
}

function statfsArray(st?: FuseStatfs): Uint32Array {
  const ints = new Uint32Array(11);
  if (!st) return ints;
  [ints[0], ints[1], ints[2], ints[3], ints[4], ints[5]] = [st.bsize, st.frsize, st.blocks, st.bfree, st.bavail, st.files];
  [ints[6], ints[7], ints[8], ints[9], ints[10]] = [st.ffree, st.favail, st.fsid, st.flag, st.namemax];
  return ints;
}

function setDouble(arr: Uint32Array, i: number, n: number): void {
  arr[i] = n % 4294967296;
  arr[i + 1] = (n - arr[i]!) / 4294967296;
}

/**
 * A time as seconds (two words) and nanoseconds: the addon's stat layout. A millisecond double
 * near today holds about a quarter of a microsecond, so the fraction is rounded to whole
 * microseconds rather than shown as nanoseconds it never held.
 */
function setTime(arr: Uint32Array, i: number, t: Date | number): void {
  const ms = typeof t === 'number' ? t : t.getTime();
  let sec = Math.floor(ms / 1000);
  let us = Math.round((ms - sec * 1000) * 1000);
  if (us >= 1_000_000) [sec, us] = [sec + 1, us - 1_000_000];
  setDouble(arr, i, sec);
  arr[i + 2] = us * 1000;
}

/** The calls on one mount's kept stats; nothing is answered before the mount starts (the cells start at 0: off). */
function keptStats(thread: Buffer): KeptStats {
  const info = new Float64Array(2);
  return {
    cells: new Int32Array(thread.buffer, thread.byteOffset + addon.offsetof_fuse_thread_t_stat_cells, 4),
    keep: (path, st, gen) => addon.fuse_native_stat_keep(thread, path, statArray(st), gen),
    forget: (path) => addon.fuse_native_stat_forget(thread, path),
    hold: (path, held) => addon.fuse_native_stat_hold(thread, path, held ? 1 : 0),
    vouch: () => addon.fuse_native_stat_vouch(thread),
    info() {
      addon.fuse_native_stat_info(thread, info);
      return { answered: info[0]!, kept: info[1]! };
    },
  };
}

function statArray(st?: FuseStat): Uint32Array {
  const ints = new Uint32Array(21);
  if (!st) return ints;
  ints[0] = st.mode;
  ints[1] = st.uid;
  ints[2] = st.gid;
  setDouble(ints, 3, st.size);
  ints[6] = st.nlink ?? 1;
  setDouble(ints, 7, st.ino ?? 0);
  ints[9] = st.blksize ?? 0;
  setDouble(ints, 10, st.blocks ?? 0);
  setTime(ints, 12, st.atime);
  setTime(ints, 15, st.mtime);
  setTime(ints, 18, st.ctime);
  return ints;
}
