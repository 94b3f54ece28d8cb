/**
 * @module Mount and unmount one store at a host path with fuse-native, and clear mounts a crash
 * left behind. Nothing here touches a mount's contents from this process (notes §1.5): that would
 * deadlock the one JS thread that serves it.
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import Fuse, { type FuseOps } from 'fuse-native';

/**
 * libfuse options fuse-native 2.2.6 cannot pass itself (notes §1.3), appended to its `-o` string:
 * - big_writes: 128 KiB writes instead of 4 KiB pages;
 * - use_ino: our stable inode numbers, so git's index survives a remount;
 * - atomic_o_trunc: O_TRUNC reaches open(), so `echo x > f` is one open and not open + truncate;
 * - entry/attr timeouts of 1 s (the libfuse defaults, spelled out) and negative_timeout 0: a change
 *   made through the API shows in a stat within a second and in the next open at once (no
 *   kernel_cache, so the page cache is dropped on every open);
 * - allow_other when root, so agents running as other users inside containers can use the mount;
 *   there is no default_permissions, so modes are kept and shown but not enforced.
 */
class MnemoFuse extends Fuse {
  private readonly extra: string[];

  constructor(mnt: string, ops: FuseOps, extra: string[]) {
    // force: clear a dead mount at this path first; autoUnmount: a helper unmounts if we die.
    // timeout: false drops fuse-native's per-op watchdog timer (set and cleared on every op): our
    // handlers always reply (ops.ts; fsync once the WAL sync is done), so it never fires and only costs time.
    super(mnt, ops, { force: true, mkdir: true, autoUnmount: true, timeout: false });
    this.extra = extra;
  }

  protected override _fuseOptions(): string {
    const base = super._fuseOptions();
    const extra = this.extra.join(',');
    return base ? `${base},${extra}` : `-o${extra}`;
  }
}

export interface LiveMount {
  readonly hostPath: string;
  close(): Promise<void>;
}

export async function startFuse(
  hostPath: string,
  ops: FuseOps,
  o: { storeId: string; readOnly: boolean; log?: (line: string) => void },
): Promise<LiveMount> {
  await mkdir(hostPath, { recursive: true }).catch(() => {
    // A dead mount here fails with ENOTCONN; fuse-native's `force` clears it below.
  });
  await reportStrayFiles(hostPath, o.log);
  const extra = [
    // A mount point that is not empty must not stop the session from coming back (see reportStrayFiles).
    'nonempty',
    'big_writes',
    'use_ino',
    'atomic_o_trunc',
    'entry_timeout=1',
    'attr_timeout=1',
    'negative_timeout=0',
    `fsname=mnemo:${o.storeId.replace(/[^A-Za-z0-9_-]/g, '_')}`,
    'subtype=mnemo',
  ];
  if (process.getuid?.() === 0) extra.push('allow_other');
  if (o.readOnly) extra.push('ro');
  const fuse = new MnemoFuse(hostPath, ops, extra);
  await new Promise<void>((resolve, reject) => fuse.mount((err) => (err ? reject(err) : resolve())));
  return {
    hostPath,
    close: () =>
      new Promise<void>((resolve) => {
        fuse.unmount((err) => {
          if (!err) return resolve();
          lazyUnmount(hostPath).then(resolve, resolve);
        });
      }),
  };
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
