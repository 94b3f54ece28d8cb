/**
 * @module Save points: how working copies become versions. One logical save = one version.
 *
 * - A handle saves on `flush` only if it wrote since its last save (a shell's extra flush from
 *   dup2 saves nothing), always on `fsync`, and on `release` if anything is still unsaved (`: > f`,
 *   a created empty file). A truncate by path saves at once unless a handle holds unsaved
 *   writes (then that handle's close saves it); a refused one leaves the file as it was. Unchanged
 *   content adds no version; its mtime and ctime still move, as a write's do on a disk. A save is one service write (a
 *   promise), awaited inside its operation's turn of the mount's queue (op-queue.ts).
 *   Durability is POSIX's (DESIGN §5, src/service/durability.ts): a successful close() means the version is
 *   stored and survives a crash of mnemo (committed at synchronous=NORMAL, in the OS page cache);
 *   fsync() replies once it and every earlier commit is on disk; a background WAL sync puts every
 *   closed version on disk within 100 ms. MNEMO_MOUNT_SYNC=close makes every save durable at commit.
 * - A scratch file (the temp file of an atomic save, moves.ts) is checked at its close but saved
 *   only when renamed onto an ordinary name, or, left in place, after a grace period or at unmount.
 */
import Fuse from './binding/fuse.js';
import { decodeUtf8, isMnemoError, type Caller, type KeptAttrs, type Memory, type MemoryMeta } from '../src/index.js';
import { mountCaller, type MountContext } from './context.js';
import { errnoLine, fsError, markReported, toErrno } from './errno.js';
import { draftContent, keepState, resizeDraft, setFileAttrs, fitsLimit, type Draft, type Handle } from './handles.js';
import { reserveLocal, settleLocal } from './local-budget.js';
import { isMountLocalPath } from './names.js';
import { loadDraft, lookup, memoryAttrs } from './tree.js';
import { dropFailed, forgetAttrs, leavePath } from './dropped-drafts.js';
import { settleAside } from './set-aside.js';

/** Saves a draft: validates the bytes (UTF-8, size) and writes one version if anything changed. */
export async function commit(ctx: MountContext, d: Draft): Promise<void> {
  if (d.path === null || (d.stored && !d.dirty && !d.scratch)) return;
  if (d.scratch && isMountLocalPath(d.path)) return;
  // Until this save is known good, the kernel's pages of the path are not known to be any version.
  ctx.paged.delete(d.path);
  const written = d.bytes;
  const appended = appendedPart(d);
  const path = d.path;
  if (!d.scratch && d.bytes === written) {
    const same = await unchangedMeta(ctx, d, path);
    if (same) {
      // A read-only, archived or deleted store refuses the close as the service's write would.
      const caller = await mountCaller(ctx);
      return keptAsStored(ctx, d, path, await rewritten(ctx, caller, d, path, same));
    }
  }
  // Scratch files are checked too, so a bad temp file fails its own close() and not only the rename.
  const content = decodeUtf8(draftContent(d));
  if (d.scratch) return;
  const caller = await mountCaller(ctx);
  // An mtime set after the last write (cp -p) is kept; otherwise new content takes the save time.
  const mtime = d.mtimeSet ? { mtimeMs: d.mtimeMs } : undefined;
  // A save fsync() asked for, or a temp file fsync'd before its rename (Python's atomic save: the
  // fsync could not store it): durable when it answers, as the fsync asked. It leaves no commit for
  // the fsync's reply to wait for: that wait was a WAL sync on the thread pool per save.
  const durable = d.syncAsked ? { durable: true } : {};
  // It adds a memory unless another writer took the path meanwhile (the save then replaces that one).
  const saveAt = async (memoryId: string) =>
    (await ctx.service.saveMemoryAt(caller, ctx.storeId, { path, content, memoryId, mode: d.mode, attrs: { ...unsavedAttrs(d), ...mtime }, ...durable, adds: true })).memory;
  // A stored file saves by id, so an API rename meanwhile is kept. Deleted or expired elsewhere while
  // it was open, it stays gone: what the descriptor wrote goes nowhere, as on a disk.
  // Its owner and atime are stored already (attrs.ts); only a set mtime must ride with the save.
  // An append goes as one: the text the draft was read from (its sha, kept with its version) and what
  // it added. Should another writer's save have landed since, the service keeps what it added after
  // the newest text, under the store's lock in the update's own probe, so both sessions' appends are
  // kept and none retries. Nothing is read first: the newest text comes back with the save.
  let stored = content;
  const update = async (): Promise<Memory> => {
    const saved = appended
      ? await ctx.service.appendToMemory(caller, ctx.storeId, d.memoryId, { content, onto: appended.onto, appended: decodeUtf8(appended.bytes) }, mtime, d.syncAsked)
      : await ctx.service.updateMemory(caller, ctx.storeId, d.memoryId, { content }, mtime, d.syncAsked);
    stored = saved.content;
    return saved;
  };
  // The view keeps its answers across the save when the save is all that changed.
  let memory: MemoryMeta;
  try {
    memory = await ctx.view.saved(path, () => (d.stored ? update() : saveAt(d.memoryId)));
  } catch (err) {
    if (!(d.stored && isMnemoError(err) && err.code === 'not_found')) throw err;
    if (!d.claimed) return goneWhileOpen(ctx, d, path);
    memory = await ctx.view.saved(path, () => saveAt(ctx.service.ids('memory')));
  }
  // Replayed onto text that landed after our read: the draft is what was stored.
  if (stored !== content) adoptText(d, Buffer.from(stored, 'utf8'));
  d.claimed = null;
  d.memoryId = memory.id;
  d.stored = true;
  d.dirty = false;
  d.syncAsked = false;
  d.baseVersionId = memory.versionId;
  d.baseSha = memory.contentSha256;
  // The kernel learnt this size and these bytes from our own writes (a file made here too: its size
  // came from them, not from a stat): the next open here has nothing to refresh, and may keep the
  // kernel's pages. A save merged with appends made elsewhere holds bytes it has not seen: that open refreshes.
  if (d.bytes !== written) {
    ctx.served.set(path, '');
  } else {
    keepServed(ctx, path, memory.versionId);
    keepPaged(ctx, path, memory.versionId);
  }
  ctx.contents.put(memory.contentSha256, draftContent(d));
  setFileAttrs(d, memoryAttrs(memory));
  // The stored times are the save's: a chmod's or utimens's reply since the last write told the
  // kernel others (tar x, cp -p), and `tar c` right after saw the ctime move under it.
  if (d.statusSet) forgetAttrs(ctx, d, path);
  d.statusSet = false;
  d.mtimeSet = false;
  d.baseSize = d.size;
  d.appendOnly = true;
  settleLocal(ctx, d);
}

/**
 * The stored memory `d` was loaded from, if the draft's bytes are still exactly its text and it is
 * still the memory's head: then the store's update would be a no-op (no version:
 * domain/memory-updates.ts), and an editor's save of an unchanged file, or a rewrite of the same
 * bytes, stores only its new times (rewritten). Compared against the content cache; a text not cached
 * there goes the usual way. An mtime set since (cp -p) must be stored, so it goes the usual way too.
 */
async function unchangedMeta(ctx: MountContext, d: Draft, path: string): Promise<MemoryMeta | null> {
  if (!d.stored || d.mtimeSet || d.size !== d.baseSize) return null;
  const meta = await ctx.view.meta(path);
  if (!meta || meta.id !== d.memoryId || meta.versionId !== d.baseVersionId || meta.contentSizeBytes !== d.size) return null;
  const stored = ctx.contents.get(meta.contentSha256);
  return stored && stored.equals(draftContent(d)) ? meta : null;
}

/**
 * A rewrite of the same bytes adds no version, but it was a write: as on a disk, its time becomes
 * the file's mtime and ctime, kept with the memory as a touch's are, so a build tool sees a target
 * it rebuilt with the same bytes as new (make would run the rule at every call otherwise).
 */
async function rewritten(ctx: MountContext, caller: Caller, d: Draft, path: string, meta: MemoryMeta): Promise<MemoryMeta> {
  const now = Date.now();
  await ctx.service.setMemoryAttrs(caller, ctx.storeId, d.memoryId, { mtimeMs: now });
  ctx.view.forgetStat(path);
  // The stored ctime is the service's clock at that write: read back, so this mount shows what others do.
  const stored = await ctx.view.meta(path);
  return stored && stored.id === meta.id && stored.versionId === meta.versionId ? stored : { ...meta, mtimeMs: now, ctimeMs: now };
}

/** The draft is the stored version again: clean, with its stored times, and the kernel's pages are its bytes. */
function keptAsStored(ctx: MountContext, d: Draft, path: string, meta: MemoryMeta): void {
  d.dirty = false;
  d.baseSha = meta.contentSha256;
  setFileAttrs(d, memoryAttrs(meta));
  d.mtimeSet = false;
  d.baseSize = d.size;
  d.appendOnly = true;
  keepServed(ctx, path, meta.versionId);
  keepPaged(ctx, path, meta.versionId);
  settleLocal(ctx, d);
}

/**
 * The version whose size and times the kernel may hold for `path` (a stat we answered, an open, or
 * a save of what it wrote). Bounded: a path that falls out is refreshed at its next open (ops.ts
 * freshReply), as any path the kernel may hold unknown to this map.
 */
export function keepServed(ctx: MountContext, path: string, versionId: string): void {
  if (ctx.served.size >= 20_000 && !ctx.served.has(path)) ctx.served.clear();
  ctx.served.set(path, versionId);
}

/** Bounded as `served` is (keepServed): a path that falls out only costs its next open the pages. */
export function keepPaged(ctx: MountContext, path: string, versionId: string): void {
  if (ctx.paged.size >= 20_000 && !ctx.paged.has(path)) ctx.paged.clear();
  ctx.paged.set(path, versionId);
}

/** What a file not stored yet was given (chown, utimens) that its first save must keep. */
function unsavedAttrs(d: Draft): KeptAttrs {
  return {
    ...(d.atimeMs === null ? {} : { atimeMs: d.atimeMs }),
    ...(d.uid === null ? {} : { uid: d.uid }),
    ...(d.gid === null ? {} : { gid: d.gid }),
  };
}

/**
 * What a draft that only appended since it was loaded added (`bytes`) to its stored text, whose sha
 * is `onto`; null for any other draft (a whole-file save: the last save wins). Its save puts the
 * bytes after the newest stored text, so appends from two sessions (or the API meanwhile) both
 * survive, as O_APPEND on one disk would (service appendToMemory, domain planUpdate). It used to read
 * the newest text first (up to 100 KiB per `>>`, on the serving thread) only to name its sha.
 */
function appendedPart(d: Draft): { bytes: Buffer; onto: string } | null {
  if (!d.stored || !d.appendOnly || d.size <= d.baseSize || d.baseSha === null) return null;
  return { bytes: draftContent(d).subarray(d.baseSize), onto: d.baseSha };
}

/** The draft holds `bytes` now (its appends after text written elsewhere): its own copy. */
function adoptText(d: Draft, bytes: Buffer): void {
  d.bytes = bytes;
  d.shared = false;
  d.size = bytes.length;
}

/**
 * The last word on a handle: save what is left, or drop changes that failed, and forget idle drafts.
 * A reader's release (which arrives late and out of order) never saves another handle's changes:
 * only a handle that changed the file, or the last one open, does.
 */
export function releaseDraft(ctx: MountContext, h: Handle): void | Promise<void> {
  const d = h.draft;
  // Nothing to save (a reader's release, a clean file): done at once, without waiting on anything.
  if (!(!d.failed && (d.dirty || !d.stored) && (h.changed || d.opens === 0))) {
    try {
      return afterRelease(ctx, d);
    } finally {
      settleLocal(ctx, d);
    }
  }
  return truncationSuperseded(ctx, d)
    .then((superseded) => (superseded ? yieldTruncation(ctx, d) : commit(ctx, d)))
    .catch((err: unknown) => {
      warnSaveFailed(ctx, d.path ?? '(unlinked)', err);
      dropFailed(ctx, d, toErrno(err));
    })
    .then(() => afterRelease(ctx, d))
    .finally(() => settleLocal(ctx, d));
}

/**
 * An `O_TRUNC` open that wrote nothing saves at its last release, which the kernel sends after
 * close() returned. On a disk the truncation happened at the open, so new content written elsewhere
 * since (the API, another session or host), or a delete, came after it and stands; saving the empty
 * copy now would put the truncation on top of it, and lose a write already answered. A rename (here
 * or elsewhere) changes no text: the truncation is saved to the memory where it now is.
 */
async function truncationSuperseded(ctx: MountContext, d: Draft): Promise<boolean> {
  if (!d.stored || !d.dirty || d.size !== 0 || d.opens > 0 || d.scratch || d.path === null || d.baseSha === null) return false;
  // Its sha is all this compares: the row alone, not the text (up to 100 KiB) on the serving thread.
  const current = await ctx.reader.memoryMeta(d.memoryId);
  return !current || current.contentSha256 !== d.baseSha;
}

/** The truncation gives way: the draft is let go, and the kernel's size and pages of it (empty) are refreshed at the next open. */
function yieldTruncation(ctx: MountContext, d: Draft): void {
  d.dirty = false;
  if (d.path === null) return;
  ctx.paged.delete(d.path);
  ctx.served.set(d.path, '');
}

function afterRelease(ctx: MountContext, d: Draft): void {
  if (d.opens > 0) return;
  if (d.failed) {
    // Nothing of a refused save is kept: a new file vanishes, an existing one reads as stored again.
    forget(ctx, d);
    return;
  }
  if (!d.scratch && d.stored) forget(ctx, d);
  else if (d.scratch) scheduleAdoption(ctx, d);
}

/**
 * A temp-looking file that a tool closed and then left in place (nothing renamed it within
 * SCRATCH_GRACE_MS) was a real file after all, say `notes.tmp`: it is saved under its own name
 * rather than lost at unmount. Files inside .git stay mount-local.
 */
const SCRATCH_GRACE_MS = 2000;

export function scheduleAdoption(ctx: MountContext, d: Draft): void {
  const path = d.path;
  if (path === null || isMountLocalPath(path)) return;
  setTimeout(() => {
    // In the mount's queue like any operation: it saves, and must not land inside another's save.
    Promise.resolve(
      ctx.queue.run(() => {
        if (ctx.drafts.get(path) !== d || d.opens > 0) return;
        return adoptScratch(ctx, d);
      }),
    ).catch((err: unknown) => warnSaveFailed(ctx, path, err));
  }, SCRATCH_GRACE_MS).unref();
}

/** Saves a left-behind scratch draft as an ordinary memory (also called for each one at unmount). */
export async function adoptScratch(ctx: MountContext, d: Draft): Promise<void> {
  const path = d.path;
  if (!d.scratch || path === null || ctx.gone || ctx.readOnly || d.failed) return;
  if (isMountLocalPath(path)) return;
  if (d.asideFrom) return adoptAside(ctx, d);
  d.scratch = false;
  try {
    await commit(ctx, d);
    if (d.opens === 0) forget(ctx, d);
  } catch (err) {
    d.scratch = true;
    warnSaveFailed(ctx, path, err);
  }
}

/** Saves what the draft holds that storage lacks, and lets it go once no handle has it open. */
export async function saveAndRelease(ctx: MountContext, d: Draft): Promise<void> {
  if (d.dirty) await commit(ctx, d);
  if (d.opens === 0) forget(ctx, d);
}

/** A stored file set aside and left there: its rename is made in storage (set-aside.ts), with any change it holds. */
async function adoptAside(ctx: MountContext, d: Draft): Promise<void> {
  try {
    await settleAside(ctx, d);
    await saveAndRelease(ctx, d);
  } catch (err) {
    warnSaveFailed(ctx, d.path ?? '(unlinked)', err);
  }
}

/**
 * A save that failed is a warning on the server's log, naming the store and path: shells ignore
 * close() errors (`printf '\xff' > f` exits 0), so this line is often the only sign the bytes
 * were not kept. One line always: a reason with newlines in it is folded.
 */
export function warnSaveFailed(ctx: MountContext, path: string, err: unknown): void {
  const errno = toErrno(err);
  const reason = errnoLine(errno, 'save', path, err).replace(/\s*\n\s*/g, ' ');
  ctx.log(`mnemo: warn: save of ${ctx.storeId}${path.startsWith('/') ? '' : '/'}${path} failed: ${reason}`);
  markReported(err);
}

/** truncate(2) by path: changes the open draft, and saves at once when no writer holds it. */
export async function truncatePath(ctx: MountContext, path: string, size: number): Promise<void> {
  await mountCaller(ctx);
  const node = await lookup(ctx, path);
  if (!node) throw fsError(Fuse.ENOENT);
  if (node.kind === 'dir') throw fsError(Fuse.EISDIR);
  const d = node.draft ?? (await loadDraft(ctx, path));
  if (!d) throw fsError(Fuse.ENOENT);
  if (size !== d.size && fitsLimit(d, size)) reserveLocal(ctx, d, size);
  const undo = keepState(d);
  try {
    resizeDraft(d, size);
    if (!ctx.handles.hasUnsavedWrites(d)) await commit(ctx, d);
  } catch (err) {
    // Refused (bytes cut mid-character, a NUL on PostgreSQL, a read-only store): the file stays as it was.
    undo();
    throw err;
  } finally {
    // A draft loaded just for this truncate is dropped once it is done, saved or not.
    if (ctx.drafts.get(path) !== d && d.opens === 0) d.path = null;
    settleLocal(ctx, d);
  }
}

/**
 * The memory of an open file was deleted or expired elsewhere (the API, another session or host, its
 * TTL) before this save: nothing is stored, and the draft leaves the path, as an unlinked file's
 * does. Bringing it back would resurrect text someone removed, or an expired memory without its
 * expiry, under a new id. The close() succeeds as on a disk; the server's log says what was dropped.
 */
function goneWhileOpen(ctx: MountContext, d: Draft, path: string): void {
  d.dirty = false;
  leavePath(ctx, d);
  ctx.log(`mnemo: warn: save of ${ctx.storeId}${path} dropped: the memory was deleted or expired while the file was open`);
}

/** Drops a draft from its path and hands back what it held of the mount-local budget. */
export function forget(ctx: MountContext, d: Draft): void {
  ctx.drafts.detach(d);
  settleLocal(ctx, d);
}
