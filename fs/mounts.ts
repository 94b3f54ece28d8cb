/**
 * @module Mount and unmount one store at a host path with fuse-native, and clear mounts a crash
 * left behind. Nothing here touches a mount's contents from this process (notes §1.5): that would
 * deadlock the one JS thread that serves it.
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import Fuse, { type FuseOps, type KeptStats } from './binding/fuse.js';
import { baseName } from '../src/index.js';
import { ROOT_INO } from './stat.js';

export interface LiveMount {
  readonly hostPath: string;
  /** Drops the kernel's cached attributes and pages for `path`; `done` runs once they are gone. */
  invalidate(path: string, done: () => void): void;
  /**
   * Drops the kernel's entry for `path`'s name (a file that vanished unseen); `done` once it is gone.
   * `dirIno`, the inode number of the directory holding it (DirTable.parentIno), drops it there alone;
   * without it, or when the binding does not know that directory, every directory the binding noted
   * with a file of that name is told (at most eight: a directory past them keeps its entry).
   */
  invalidateEntry(path: string, dirIno: number | undefined, done: () => void): void;
  /** Drops the kernel's entry for the file shown with inode number `ino`, wherever it learnt it. */
  invalidateFile(ino: number, done: () => void): void;
  /** Drops the kernel's entry for `name` in the directory shown with inode number `dirIno` (ROOT_INO: the root). */
  invalidateName(dirIno: number, name: string, done: () => void): void;
  /** The binding's kept stats of this mount (fs/kernel-stats.ts). */
  readonly keptStats: KeptStats;
  close(): Promise<void>;
}

export async function startFuse(
  hostPath: string,
  ops: FuseOps,
  o: { storeId: string; readOnly: boolean; log?: (line: string) => void; cacheSeconds?: number; unansweredMs?: number; spinUs?: number },
): Promise<LiveMount> {
  await mkdir(hostPath, { recursive: true }).catch(() => {
    // A dead mount here fails with ENOTCONN; fuse-native's `force` clears it below.
  });
  await reportStrayFiles(hostPath, o.log);
  const fuse = new Fuse(hostPath, ops, {
    force: true,
    mkdir: true,
    options: mountOptions(o),
    ...(o.log ? { log: o.log } : {}),
    ...(o.unansweredMs === undefined ? {} : { unansweredMs: o.unansweredMs }),
    ...(o.spinUs ? { spinUs: o.spinUs } : {}),
  });
  await new Promise<void>((resolve, reject) => fuse.mount((err) => (err ? reject(err) : resolve())));
  return {
    hostPath,
    // ENOENT and friends mean the kernel held nothing to drop: done either way.
    invalidate: (path, done) => fuse.invalidate(path, () => done()),
    invalidateEntry: (path, dirIno, done) => {
      const byName = () => fuse.invalidateEntry(path, () => done());
      if (dirIno === undefined) return byName();
      fuse.invalidateName(dirIno === ROOT_INO ? 0 : dirIno, baseName(path), (res) => (res === 0 ? done() : byName()));
    },
    invalidateFile: (ino, done) => fuse.invalidateFile(ino, () => done()),
    invalidateName: (dirIno, name, done) => fuse.invalidateName(dirIno === ROOT_INO ? 0 : dirIno, name, () => done()),
    keptStats: fuse.keptStats,
    close: () =>
      new Promise<void>((resolve) => {
        fuse.unmount((err) => {
          if (!err) return resolve();
          lazyUnmount(hostPath).then(resolve, resolve);
        });
      }),
  };
}

/** The kernel's entry and attribute timeout, in seconds, unless configured. */
export const DEFAULT_CACHE_SECONDS = 1;

/**
 * libfuse 3 options (libfuse 3 always sends writes of up to 128 KiB, truncates in open when the
 * kernel can, and mounts over a non-empty directory, which reportStrayFiles explains):
 * - no auto_unmount: its helper per mount outlived the mount (fs/binding/unmount-guard.ts keeps one
 *   helper for the process instead; a force mount clears a dead mount too);
 * - use_ino: our stable inode numbers, so git's index survives a remount;
 * - hard_remove: unlink and rename-over act at once, with no `.fuse_hidden*` file in between, so an
 *   atomic save (`sed -i`) never leaves a moment where the file is missing; a file unlinked while
 *   open keeps working through its handle (the binding supplies it, fuse-native.c "Open files");
 * - entry/attr timeouts of `cacheSeconds` (1 s unless MNEMO_MOUNT_CACHE_SECONDS says otherwise) and
 *   negative_timeout 0: a change elsewhere drops the entries it made stale (writes-elsewhere.ts) and
 *   an open never shows a stale size (ops.ts drops the kernel's cached attributes first); the
 *   timeouts bound what that misses (a directory emptied elsewhere), and a file created elsewhere
 *   is seen at once;
 * - allow_other when root, so agents running as other users inside containers can use the mount;
 *   there is no default_permissions, so modes are kept and shown but not enforced.
 */
function mountOptions(o: { storeId: string; readOnly: boolean; cacheSeconds?: number }): string[] {
  const seconds = o.cacheSeconds ?? DEFAULT_CACHE_SECONDS;
  const options = [
    'use_ino',
    'hard_remove',
    `entry_timeout=${seconds}`,
    `attr_timeout=${seconds}`,
    'negative_timeout=0',
    `fsname=mnemo:${o.storeId.replace(/[^A-Za-z0-9_-]/g, '_')}`,
    'subtype=mnemo',
  ];
  if (process.getuid?.() === 0) options.push('allow_other');
  if (o.readOnly) options.push('ro');
  return options;
}

/**
 * Files in the bare mount point: when a server dies, its mounts go away (auto_unmount) and a tool
 * still writing there writes to the plain directory underneath, which mnemo never saw. libfuse
 * refuses to mount over them ("mountpoint is not empty"), so the session would not come back; it
 * mounts over them (`nonempty`) and the log names them, since the mount hides them from then on.
 */
async function reportStrayFiles(hostPath: string, log?: (line: string) => void): Promise<void> {
  if (!log || (await fuseMountsUnder(hostPath)).includes(hostPath)) return;
  const names = await readdir(hostPath).catch(() => [] as string[]);
  if (names.length === 0) return;
  const shown = names.slice(0, 5).join(', ') + (names.length > 5 ? `, … (${names.length} in all)` : '');
  log(`mnemo fs: ${hostPath} held ${names.length} entr${names.length === 1 ? 'y' : 'ies'} written while it was not mounted (${shown}); they were never saved and are hidden under the mount until it is unmounted`);
}

/** FUSE mounts at or below `root`, deepest first, read from /proc/mounts. */
export async function fuseMountsUnder(root: string): Promise<string[]> {
  const text = await readFile('/proc/mounts', 'utf8').catch(() => '');
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const [, rawPath, type] = line.split(' ');
    if (!rawPath || !type?.startsWith('fuse')) continue;
    // /proc/mounts escapes space, tab, newline and backslash as octal.
    const path = rawPath.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
    if (path === root || path.startsWith(root.endsWith('/') ? root : root + '/')) out.push(path);
  }
  return out.sort((a, b) => b.length - a.length);
}

/**
 * True if the mount at `path` has no process behind it (ENOTCONN). A live one answers; one that
 * does not answer within 2 s is left alone too (a busy server is not a dead one).
 */
export async function isDeadMount(path: string): Promise<boolean> {
  const answer = stat(path).then(
    () => false,
    (err: NodeJS.ErrnoException) => err.code === 'ENOTCONN' || err.code === 'ECONNABORTED',
  );
  const wait = new Promise<boolean>((r) => setTimeout(() => r(false), 2000).unref());
  return Promise.race([answer, wait]);
}

/** fusermount -uz (lazy, works for dead and live mounts), falling back to umount -l. */
export async function lazyUnmount(path: string): Promise<void> {
  try {
    await run('fusermount', ['-uz', path]);
  } catch {
    await run('umount', ['-l', path]);
  }
}

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 10_000 }, (err) => (err ? reject(err) : resolve()));
  });
}
