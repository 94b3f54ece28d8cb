/**
 * @module chmod, chown and utimens. A file's mode, times and owner are kept with its memory (no
 * version; an unsaved file's go with its first save), a directory's with the mount (dirs.ts).
 * Each moves the ctime, as on a disk.
 */
import { after, type Answer } from './answer.js';
import Fuse from './binding/fuse.js';
import type { Caller, KeptAttrs } from '../src/index.js';
import { assertWritable, mountCaller, type MountContext } from './context.js';
import { fsError } from './errno.js';
import type { Draft } from './handles.js';
import { PROCESS_GID, PROCESS_UID, dirStat, type Attrs } from './stat.js';
import { lookup, subdirCount } from './tree.js';
import type { FuseStat } from './binding/fuse.js';

/** Sets `a` on the file or directory at `path`; `keep` stores it for a memory that exists. */
export async function changeAttrs(ctx: MountContext, path: string, a: KeptAttrs, keep: (caller: Caller, memoryId: string) => Promise<void>): Promise<void> {
  await assertWritable(ctx);
  const node = await lookup(ctx, path);
  if (!node) throw fsError(Fuse.ENOENT);
  const now = Date.now();
  if (node.kind === 'dir') {
    // A directory given a mode is kept by the mount even once no memory implies it.
    if (a.mode !== undefined) ctx.localDirs.set(path, a.mode);
    ctx.dirs.set(path, a, now);
    return;
  }
  const d = node.draft;
  if (d) setOnDraft(d, a, now);
  const stored = d ? (d.stored && !d.scratch ? d.memoryId : null) : node.meta!.id;
  if (stored) await keep(await mountCaller(ctx), stored);
  ctx.view.forgetStat(path);
}

function setOnDraft(d: Draft, a: KeptAttrs, now: number): void {
  if (a.mode !== undefined) d.mode = a.mode;
  if (a.uid !== undefined) d.uid = a.uid;
  if (a.gid !== undefined) d.gid = a.gid;
  if (a.mtimeMs !== undefined) {
    // An atime that followed the mtime stays where it was (touch -m).
    if (d.atimeMs === null) d.atimeMs = d.mtimeMs;
    d.mtimeMs = a.mtimeMs;
    // Set after the last write: the coming save keeps it rather than the save time (cp -p, rsync -t).
    d.mtimeSet = true;
  }
  if (a.atimeMs !== undefined) d.atimeMs = a.atimeMs;
  d.ctimeMs = now;
  d.statusSet = true;
}

/**
 * A directory's stat: the mount's attributes for it, and nlink = 2 + its subdirectories; 1 for a
 * directory too big to count, which tools read as "unknown" (as on btrfs): find then looks inside
 * every entry instead of trusting the count.
 */
export function dirStatOf(ctx: MountContext, path: string, mode: number): Answer<FuseStat> {
  return after(subdirCount(ctx, path), (subdirs) => {
    const d = ctx.dirs.get(path);
    const a: Attrs = { mode, uid: d.uid ?? PROCESS_UID, gid: d.gid ?? PROCESS_GID, atimeMs: d.atimeMs, mtimeMs: d.mtimeMs, ctimeMs: d.ctimeMs };
    return dirStat(d.ino, subdirs === null ? 1 : 2 + subdirs, a);
  });
}

/** chown's "leave it": -1, which arrives as (uid_t)-1 or as -1. */
export function ownerId(id: number): number | undefined {
  return id === -1 || id === 0xffffffff ? undefined : id;
}
