/**
 * @module Renames and unlinks through a mount, and the atomic-save fold of a scratch file.
 *
 * - `mv a b` renames the memory (one `modified` version, same id); over an existing file the
 *   replaced memory gets a `deleted` version in the same transaction. `rm f` adds `deleted`.
 * - Atomic saves: a new file whose name looks like a temp file (names.ts: sedXXXXXX, tmpXXXXXXXX,
 *   .tmp-*, *.tmp, swap files, *.lock…) is a scratch draft that lives only in the mount and is
 *   never saved under its own name. Renaming it onto a path saves its bytes there in one
 *   transaction: one `modified` version on the memory already at the target (same memory id), or
 *   one `created` version if the target is new. The temp name never reaches the version history.
 *   A scratch file that is never renamed is saved under its own name after a grace period, or at
 *   unmount (save-points.ts).
 * - A file deleted or replaced while open goes at once (mounts use libfuse's hard_remove): its
 *   draft leaves the path and keeps serving its open handles, and nothing it writes later is saved,
 *   as on a disk. An atomic save over an open file updates the memory already at the path.
 */
import Fuse from './binding/fuse.js';
import { isMnemoError, parentOf } from '../src/index.js';
import { mountCaller, type MountContext } from './context.js';
import { fsError } from './errno.js';
import { settleLocal } from './local-budget.js';
import { isMountLocalPath } from './names.js';
import { adoptScratch, commit, forget, saveAndRelease, scheduleAdoption } from './save-points.js';
import { asideName, endAside, keepAsideAttrs, moveAsides, setAside, setsAside, settleAside } from './set-aside.js';
import type { Draft } from './handles.js';
import { assertParentDir, hasChildren, isDir, keepParents, lookup, scratchFor, storedDraft, type Node } from './tree.js';

export async function unlinkPath(ctx: MountContext, path: string): Promise<void> {
  const node = await lookup(ctx, path);
  if (!node) throw fsError(Fuse.ENOENT);
  if (node.kind === 'dir') throw fsError(Fuse.EISDIR);
  await mountCaller(ctx);
  const d = node.draft;
  // A stored file set aside here (`mv f f~ && rm f~`): its memory is deleted where storage has it.
  if (d?.asideFrom) endAside(ctx, d);
  if (d) forget(ctx, d);
  const memoryId = d ? (d.stored && !d.scratch ? d.memoryId : null) : node.meta!.id;
  if (memoryId) await deleteQuietly(ctx, memoryId);
  keepParents(ctx, path);
  ctx.dirs.entryChanged(parentOf(path), Date.now());
}

export async function renamePath(ctx: MountContext, src: string, dst: string): Promise<void> {
  const caller = await mountCaller(ctx);
  const from = await lookup(ctx, src);
  if (!from) throw fsError(Fuse.ENOENT);
  if (dst === src) return;
  const to = await lookup(ctx, dst);
  if (!to) await assertParentDir(ctx, dst);
  if (from.kind === 'dir') return renameDir(ctx, src, dst, to);
  if (to?.kind === 'dir') throw fsError(Fuse.EISDIR);
  const d = from.draft;
  // A file set aside from `dst` must leave it before anything else comes there.
  const aside = ctx.asides.get(dst);
  if (aside && aside !== d) await settleAsideNow(ctx, aside);
  // A rename moves the file's ctime (a stored one's follows the rename's version).
  if (d) d.ctimeMs = Date.now();
  // A set-aside file renamed on to an ordinary name: what was set on it meanwhile goes with the move.
  let endedAside: Draft | null = null;
  if (d?.asideFrom) {
    if (d.asideFrom === dst || !asideName(dst) || to) {
      // Back where storage has it (vim's undo of a failed write): nothing to store but its changes.
      if (endAside(ctx, d) === dst) return renamedBack(ctx, d, src, dst);
      endedAside = d;
    } else {
      // From one temp-looking name to another: still set aside, its grace period counted from now.
      ctx.drafts.move(src, dst);
      scheduleAdoption(ctx, d);
      return entriesMoved(ctx, src, dst);
    }
  } else if (!to && from.kind === 'file' && (d === null || d.stored) && setsAside(d, dst)) {
    const copy = d ?? (await storedDraft(ctx, src, from.meta!));
    if (copy) {
      setAside(ctx, src, dst, copy);
      scheduleAdoption(ctx, copy);
      keepParents(ctx, src);
      return entriesMoved(ctx, src, dst);
    }
  }
  const replaced = to?.draft && to.draft !== d ? to.draft : null;
  // A set-aside file replaced keeps its place until the rename is done: a refused save leaves it there.
  const replacedAside = replaced?.asideFrom ? replaced : null;
  if (d && !d.stored) {
    // A new or scratch file: its first save happens here, at the target (the atomic-save fold).
    if (replaced && !replacedAside) forget(ctx, replaced);
    // A temp-looking target name stays scratch only if no memory is there to update; a path
    // inside .git is always mount-local.
    const wasScratch = d.scratch;
    d.scratch = isMountLocalPath(dst) || (scratchFor(dst) && !to);
    ctx.drafts.move(src, dst);
    try {
      await commit(ctx, d);
    } catch (err) {
      // Refused (ENOSPC, EFBIG…): the file is back at its name as it was, a temp file left in place
      // whose grace period counts from now.
      ctx.drafts.move(dst, src);
      if (replacedAside) ctx.drafts.set(dst, replacedAside);
      d.scratch = wasScratch;
      if (d.scratch && d.opens === 0) scheduleAdoption(ctx, d);
      settleLocal(ctx, d);
      throw err;
    }
    if (d.opens === 0 && !d.scratch) forget(ctx, d);
    settleLocal(ctx, d);
  } else {
    const memoryId = d ? d.memoryId : from.meta!.id;
    // The replaced file's working copy, open or not, leaves the path: what its handles write now
    // goes nowhere, as on a disk.
    if (replaced && !replacedAside) forget(ctx, replaced);
    await ctx.service.moveMemory(caller, ctx.storeId, memoryId, dst);
    if (d) ctx.drafts.move(src, dst);
    if (endedAside) await keepAsideAttrs(ctx, endedAside);
  }
  if (replacedAside) await dropReplacedAside(ctx, replacedAside);
  keepParents(ctx, src);
  entriesMoved(ctx, src, dst);
}

/** A set-aside file renamed back onto the path its memory has in storage: saved there only if it changed. */
async function renamedBack(ctx: MountContext, d: Draft, src: string, dst: string): Promise<void> {
  ctx.drafts.move(src, dst);
  await keepAsideAttrs(ctx, d);
  await saveAndRelease(ctx, d);
  entriesMoved(ctx, src, dst);
}

/**
 * A set-aside file replaced by a rename onto its temp name: its memory, still at the path it was set
 * aside from in storage, gets its `deleted` version, as `rm` of it does, and that path is shown again.
 */
async function dropReplacedAside(ctx: MountContext, d: Draft): Promise<void> {
  endAside(ctx, d);
  forget(ctx, d);
  await deleteQuietly(ctx, d.memoryId);
}

/** Makes a set-aside rename in storage at once (and any change it holds), so that another file can take its old path. */
async function settleAsideNow(ctx: MountContext, d: Draft): Promise<void> {
  await settleAside(ctx, d);
  await saveAndRelease(ctx, d);
}

/** A rename changed an entry in the directory of `src` and in that of `dst`. */
function entriesMoved(ctx: MountContext, src: string, dst: string): void {
  const now = Date.now();
  ctx.dirs.entryChanged(parentOf(src), now);
  ctx.dirs.entryChanged(parentOf(dst), now);
}

async function renameDir(ctx: MountContext, src: string, dst: string, to: Node | null): Promise<void> {
  if (dst.startsWith(src + '/')) throw fsError(Fuse.EINVAL, 'cannot move a directory into itself');
  if (to?.kind === 'file') throw fsError(Fuse.ENOTDIR);
  if (to?.kind === 'dir') {
    if (await hasChildren(ctx, dst)) throw fsError(Fuse.ENOTEMPTY);
    ctx.localDirs.delete(dst);
  }
  await ctx.service.moveTree(await mountCaller(ctx), ctx.storeId, src, dst);
  const moved = (p: string) => (p === src ? dst : p.startsWith(src + '/') ? dst + p.slice(src.length) : null);
  if (ctx.asides.size > 0) moveAsides(ctx, moved);
  const leftTempDir: Draft[] = [];
  for (const p of [...ctx.drafts.keys()]) {
    const np = moved(p);
    if (np === null) continue;
    const d = ctx.drafts.get(p)!;
    ctx.drafts.move(p, np);
    if (!d.scratch) continue;
    // Written in a temp directory now renamed to an ordinary name (a build's output put in place): saved now.
    if (!d.asideFrom && !scratchFor(np)) leftTempDir.push(d);
    // Still a temp file or set aside: its grace period, which was kept for its old path, counts from now.
    else scheduleAdoption(ctx, d);
  }
  for (const d of leftTempDir) await adoptScratch(ctx, d);
  for (const [p, mode] of [...ctx.localDirs]) {
    const np = moved(p);
    if (np === null) continue;
    ctx.localDirs.delete(p);
    ctx.localDirs.set(np, mode);
  }
  if (!(await isDir(ctx, dst))) ctx.localDirs.set(dst, 0o755);
  keepParents(ctx, src);
  // The directory keeps its inode number and times, and everything below it too (dirs.ts).
  ctx.dirs.moved(src, dst, Date.now());
  entriesMoved(ctx, src, dst);
}

async function deleteQuietly(ctx: MountContext, memoryId: string): Promise<void> {
  const caller = await mountCaller(ctx);
  try {
    await ctx.service.deleteMemory(caller, ctx.storeId, memoryId);
  } catch (err) {
    // Already gone (deleted through the API meanwhile): the unlink still did what was asked.
    if (!(isMnemoError(err) && err.code === 'not_found')) throw err;
  }
}
