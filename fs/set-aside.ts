/**
 * @module A stored file renamed onto a free temp-looking name is set aside in the mount, not moved in
 * storage. That is how vim writes a file by default ('writebackup', outside 'backupskip': every
 * session mount under /mnt/memory): it renames f to f~, writes a new f and removes f~. Made in
 * storage as it came, that was three versions (f~ modified, f created under a new memory id, f~
 * deleted), and the memory's history ended at a deleted backup. Now the memory stays at f in
 * storage (other sessions keep reading it there), this mount shows it at f~ only, as a working copy
 * (a temp file's kind of draft), and then:
 * - a new file made at f takes the memory back: its save is one `modified` version of the same
 *   memory, and f~ becomes a temp file of its own (removed: nothing is stored; left in place: saved
 *   under its own name, as any temp file left in place is);
 * - f~ renamed back onto f (vim's undo of a write that failed) puts it back, with no version;
 * - f~ removed deletes the memory (`mv f f~ && rm f~`), f~ renamed to an ordinary name moves it there;
 * - left alone for the temp-file grace period, or until the mount ends, the rename is made in storage.
 * A mode, times or owner set on f~ meanwhile live on the copy, and are kept with the memory when it
 * is renamed (back, on, or settled); a new file taking the memory back leaves them to f~'s own save.
 */
import { baseName, isMnemoError, type KeptAttrs } from '../src/index.js';
import { mountCaller, type MountContext } from './context.js';
import type { Draft } from './handles.js';
import { isMountLocalPath, isScratchName } from './names.js';

/** Whether a stored file renamed onto `dst` can be set aside there: a temp-looking name (not a temp directory's file) that is saved (not mount-local). */
export function asideName(dst: string): boolean {
  return isScratchName(baseName(dst)) && !isMountLocalPath(dst);
}

/** Whether renaming the stored file `d` (its clean working copy, or none) onto `dst`, where nothing is, sets it aside. */
export function setsAside(d: Draft | null, dst: string): boolean {
  if (!asideName(dst)) return false;
  return d === null || (d.stored && !d.scratch && !d.dirty && !d.failed && d.opens === 0);
}

/** Shows the stored file at `src` as `copy` (its working copy) at `dst`, leaving storage as it is. */
export function setAside(ctx: MountContext, src: string, dst: string, copy: Draft): void {
  copy.scratch = true;
  copy.asideFrom = src;
  if (ctx.drafts.get(src) === copy) ctx.drafts.move(src, dst);
  else {
    copy.path = dst;
    ctx.drafts.set(dst, copy);
  }
  ctx.asides.set(src, copy);
  ctx.view.hide(src);
}

/** Ends the set-aside of `d` (no storage call): storage's path for its memory is shown again. */
export function endAside(ctx: MountContext, d: Draft): string {
  const home = d.asideFrom!;
  ctx.asides.delete(home);
  ctx.view.unhide(home);
  d.asideFrom = null;
  d.scratch = false;
  return home;
}

/**
 * A directory move (`moved` maps a path to where it went, or null) took storage's paths of set-aside
 * memories with it: each is held and hidden at its new path, so the mount still shows it once, at
 * its temp name, and a new file made at its new path takes it back.
 */
export function moveAsides(ctx: MountContext, moved: (path: string) => string | null): void {
  for (const [home, copy] of [...ctx.asides]) {
    const to = moved(home);
    if (to === null) continue;
    ctx.asides.delete(home);
    ctx.view.unhide(home);
    copy.asideFrom = to;
    ctx.asides.set(to, copy);
    ctx.view.hide(to);
  }
}

/** What a new file made at a set-aside path saves to: the memory there, as of the copy's load; and the copy that gave it, at `home`'s temp name. */
export interface Claimed {
  memoryId: string;
  baseVersionId: string | null;
  baseSha: string | null;
  baseSize: number;
  home: string;
  copy: Draft;
}

/** A new file is being made at `path`: if a memory was set aside from there, the new file takes it, and the copy becomes a temp file of its own. */
export function claimAside(ctx: MountContext, path: string): Claimed | null {
  const copy = ctx.asides.get(path);
  if (!copy) return null;
  const claimed = { memoryId: copy.memoryId, baseVersionId: copy.baseVersionId, baseSha: copy.baseSha, baseSize: copy.baseSize, home: path, copy };
  endAside(ctx, copy);
  copy.scratch = true;
  copy.memoryId = ctx.service.ids('memory');
  copy.stored = false;
  copy.baseVersionId = null;
  copy.baseSha = null;
  return claimed;
}

/**
 * The first save of a new file that took back a set-aside memory was refused (EFBIG, EILSEQ, ENOSPC):
 * the memory goes back to the copy, set aside again, if the copy is still what it was (not saved,
 * changed or moved since), and the new file vanishes as any refused new file does. So vim's undo of
 * that failed write (unlink `f`, rename `f~` back onto `f`) stores nothing; the new file kept the
 * memory before, and the unlink deleted it while the rename made a new one.
 */
export function giveBack(ctx: MountContext, d: Draft): void {
  const claim = d.claimed;
  if (!claim) return;
  d.claimed = null;
  const { home, copy } = claim;
  if (d.path !== home || ctx.asides.has(home) || copy.stored || copy.dirty || copy.failed || copy.path === null || ctx.drafts.get(copy.path) !== copy) return;
  d.stored = false;
  d.memoryId = ctx.service.ids('memory');
  copy.memoryId = claim.memoryId;
  copy.stored = true;
  copy.baseVersionId = claim.baseVersionId;
  copy.baseSha = claim.baseSha;
  setAside(ctx, home, copy.path, copy);
}

/**
 * Makes the rename of a set-aside file in storage: the memory moves to where the mount shows it
 * (the grace period ran out, the mount ends, or another file is coming to its old path). If it was
 * deleted elsewhere meanwhile, the copy becomes a new file there, as a temp file left in place would.
 */
export async function settleAside(ctx: MountContext, d: Draft): Promise<void> {
  const path = d.path!;
  endAside(ctx, d);
  try {
    await ctx.service.moveMemory(await mountCaller(ctx), ctx.storeId, d.memoryId, path);
    await keepAsideAttrs(ctx, d);
  } catch (err) {
    if (!(isMnemoError(err) && err.code === 'not_found')) throw err;
    d.stored = false;
    d.dirty = true;
    d.memoryId = ctx.service.ids('memory');
  }
}

/**
 * What chmod, chown and utimens set on a set-aside copy: kept only on the copy (its memory's stored
 * path is not the one shown), they are stored with the memory once the set-aside ends in a rename.
 */
export async function keepAsideAttrs(ctx: MountContext, d: Draft): Promise<void> {
  if (!d.statusSet) return;
  const attrs: KeptAttrs = { mode: d.mode };
  if (d.mtimeSet) attrs.mtimeMs = d.mtimeMs;
  if (d.atimeMs !== null) attrs.atimeMs = d.atimeMs;
  if (d.uid !== null) attrs.uid = d.uid;
  if (d.gid !== null) attrs.gid = d.gid;
  await ctx.service.setMemoryAttrs(await mountCaller(ctx), ctx.storeId, d.memoryId, attrs);
}
