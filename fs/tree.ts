/**
 * @module The directory view: files are memories (or drafts not saved yet), directories are implied
 * by memory paths, plus directories that exist only in the mount. Reads go to storage through the
 * mount's StorageView, which forgets its answers on any committed change, so an API write is seen on
 * the next stat or open. A question the view answers from memory is answered synchronously
 * (answer.ts); one that asks storage is a promise.
 */
import { after, type Answer } from './answer.js';
import Fuse, { type DirEntries } from './binding/fuse.js';
import { MAX_SEGMENTS, NAME_MAX, assertEntryName, assertMemoryPath, baseName, byteLength, parentOf, type DirectoryNames, type MemoryMeta } from '../src/index.js';
import type { MountContext } from './context.js';
import { fsError } from './errno.js';
import { newDraft, reloadDraft, setFileAttrs, type Draft, type FileAttrs } from './handles.js';
import { inScratchDir, isMountLocalPath, isScratchName } from './names.js';
import { metaTimes } from './stat.js';
import { leavePath } from './dropped-drafts.js';
import { settleLocal } from './local-budget.js';

export type Node = { kind: 'file'; draft: Draft | null; meta: MemoryMeta | null } | { kind: 'dir'; mode: number };

/** What is at `path` now, or null. A clean draft is refreshed from storage first. */
export function lookup(ctx: MountContext, path: string): Answer<Node | null> {
  if (path === '/') return { kind: 'dir', mode: ctx.localDirs.get('/') ?? 0o755 };
  if (ctx.gone) return null;
  assertLookupName(path);
  return after(freshen(ctx, path), (draft): Answer<Node | null> => {
    if (draft) return { kind: 'file', draft, meta: null };
    return after(ctx.view.meta(path), (meta) => {
      if (meta && ctx.orphans.size > 0 && ctx.orphans.has(path)) return adoptOrphan(ctx, path, meta);
      if (meta) return { kind: 'file', draft: null, meta };
      return after(isDir(ctx, path), (dir) => (dir ? { kind: 'dir', mode: ctx.localDirs.get(path) ?? 0o755 } : null));
    });
  });
}

export function isDir(ctx: MountContext, path: string): Answer<boolean> {
  if (path === '/' || ctx.localDirs.has(path)) return true;
  return after(ctx.view.hasMemoriesUnder(path), (under) => {
    if (under) return true;
    const prefix = path + '/';
    for (const p of ctx.drafts.keys()) if (p.startsWith(prefix)) return true;
    return false;
  });
}

/**
 * The directory a new entry goes in must still be one. The kernel only sends a create or mkdir
 * under a directory it holds, but it may hold one another session or host has since renamed or
 * emptied away (a shell's working directory): made there, the entry would bring the old path back.
 */
export function assertParentDir(ctx: MountContext, path: string): Answer<void> {
  const parent = parentOf(path);
  return after(isDir(ctx, parent), (dir) => {
    if (!dir) throw fsError(Fuse.ENOENT, `the directory ${parent} is gone`);
  });
}

/** The names in a directory (without "." and ".."), or null if it is not one. */
export async function listDir(ctx: MountContext, dir: string): Promise<DirEntries | null> {
  if (ctx.gone) return dir === '/' ? withTypes(new Map()) : null;
  const node = await lookup(ctx, dir);
  if (!node || node.kind !== 'dir') return null;
  const types = new Map<string, number>();
  // A name seen as a file and as a directory (a race with a write elsewhere) is left for a stat to tell.
  const add = (name: string, type: number) => types.set(name, (types.get(name) ?? type) === type ? type : DT_UNKNOWN);
  // A big directory's names come sorted, with their kinds: merged below with the mount's own.
  const stored = await ctx.view.readdir(dir);
  if ('files' in stored) {
    for (const f of stored.files) add(baseName(f.path), DT_REG);
    for (const d of stored.dirs) add(d, DT_DIR);
  }
  const prefix = dir === '/' ? '/' : dir + '/';
  const childOf = (p: string) => (p.startsWith(prefix) && p.length > prefix.length ? p.slice(prefix.length).split('/')[0]! : null);
  // Files not in storage: new ones not saved yet, temp files, set-aside ones. A stored file's working
  // copy is listed by storage, or not at all once its memory was deleted or expired elsewhere (a
  // descriptor may still hold it open: as on a disk, the name is gone).
  for (const [p, d] of ctx.drafts) {
    if (d.stored && !d.scratch) continue;
    const name = childOf(p);
    if (name !== null) add(name, name.length === p.length - prefix.length ? DT_REG : DT_DIR);
  }
  for (const p of ctx.localDirs.keys()) {
    const name = childOf(p);
    if (name !== null) add(name, DT_DIR);
  }
  return 'names' in stored ? mergedWithTypes(stored, types) : withTypes(types);
}

/** d_type values a listing gives its names (a stat's S_IFMT >> 12). */
const DT_UNKNOWN = 0;
const DT_DIR = 4;
const DT_REG = 8;

/** A directory's entries in name order, with `.` and `..` first, and their types. */
function withTypes(types: Map<string, number>): DirEntries {
  const names = ['.', '..', ...[...types.keys()].sort()];
  const out = Buffer.allocUnsafe(names.length);
  out[0] = out[1] = DT_DIR;
  for (let i = 2; i < names.length; i++) out[i] = types.get(names[i]!)!;
  return { names, types: out };
}

/** d_type by DirectoryNames kind: a memory, a subdirectory, or both (a race, as above). */
const DT_OF_KIND = Uint8Array.of(DT_UNKNOWN, DT_REG, DT_DIR, DT_UNKNOWN);

/**
 * `withTypes` for a directory whose stored names come sorted (DirectoryNames, in the order `sort`
 * gives) beside a few of the mount's own (`more`): the same entries in the same order, merged in one
 * pass instead of sorted again on the serving thread.
 */
function mergedWithTypes(stored: DirectoryNames, more: Map<string, number>): DirEntries {
  const extra = [...more.keys()].sort();
  const { names: have, kinds } = stored;
  const names = ['.', '..'];
  const types = Buffer.allocUnsafe(have.length + extra.length + 2);
  types[0] = types[1] = DT_DIR;
  for (let i = 0, j = 0; i < have.length || j < extra.length; ) {
    const a = have[i];
    const b = extra[j];
    if (b === undefined || (a !== undefined && a < b)) {
      types[names.length] = DT_OF_KIND[kinds[i++]!]!;
      names.push(a!);
    } else if (a === undefined || b < a) {
      types[names.length] = more.get(b)!;
      names.push(b);
      j++;
    } else {
      const t = DT_OF_KIND[kinds[i++]!]!;
      types[names.length] = t === more.get(b) ? t : DT_UNKNOWN;
      names.push(a);
      j++;
    }
  }
  return { names, types: types.subarray(0, names.length) };
}

/**
 * How many subdirectories `dir` has (a stat shows nlink = 2 + this): implied by memory paths,
 * mount-local, or holding unsaved drafts. null for a directory too big to count on a stat.
 */
export function subdirCount(ctx: MountContext, dir: string): Answer<number | null> {
  if (ctx.gone) return 0;
  return after(ctx.view.subdirs(dir), (implied) => (implied === null ? null : countSubdirs(ctx, dir, implied)));
}

function countSubdirs(ctx: MountContext, dir: string, implied: readonly string[]): number {
  const names = new Set(implied);
  const prefix = dir === '/' ? '/' : dir + '/';
  for (const p of ctx.localDirs.keys()) {
    if (p.length <= prefix.length || !p.startsWith(prefix)) continue;
    const slash = p.indexOf('/', prefix.length);
    names.add(slash < 0 ? p.slice(prefix.length) : p.slice(prefix.length, slash));
  }
  for (const p of ctx.drafts.keys()) {
    if (!p.startsWith(prefix)) continue;
    const slash = p.indexOf('/', prefix.length);
    if (slash > prefix.length) names.add(p.slice(prefix.length, slash));
  }
  return names.size;
}

/** True if anything (memory, draft, local directory) lives below `dir`. */
export async function hasChildren(ctx: MountContext, dir: string): Promise<boolean> {
  const prefix = dir + '/';
  if (await ctx.view.hasMemoriesUnder(dir)) {
    // What a readdir reads (expired and hidden memories left out): a big directory's names alone,
    // on a reader thread, not every entry's metadata copied back to this thread for a yes or no.
    const entries = await ctx.view.readdir(dir);
    if ('names' in entries ? entries.names.length > 0 : entries.dirs.length > 0 || entries.files.length > 0) return true;
  }
  for (const p of ctx.drafts.keys()) if (p.startsWith(prefix)) return true;
  for (const p of ctx.localDirs.keys()) if (p.startsWith(prefix)) return true;
  return false;
}

/**
 * Keeps the directories above `path` after their last file leaves (rm, mv), as a disk would:
 * `rm -r` removes the files first and then calls rmdir on each directory.
 */
export function keepParents(ctx: MountContext, path: string): void {
  for (let dir = parentOf(path); dir !== '/'; dir = parentOf(dir)) {
    if (ctx.localDirs.has(dir)) return;
    ctx.localDirs.set(dir, 0o755);
  }
}

/** The open or pending draft at `path`, or a fresh one loaded from the stored memory (not registered). */
export async function loadDraft(ctx: MountContext, path: string): Promise<Draft | null> {
  const existing = await freshen(ctx, path);
  if (existing) return existing;
  const meta = await ctx.view.meta(path);
  return meta ? storedDraft(ctx, path, meta) : null;
}

/** A fresh draft of the stored memory `meta` at `path` (which `lookup` just found with no draft). */
export function storedDraft(ctx: MountContext, path: string, meta: MemoryMeta): Answer<Draft | null> {
  const cached = ctx.contents.get(meta.contentSha256);
  if (cached) return draftOver(path, meta, cached, true);
  return ctx.reader.bytes(path).then((m) => {
    if (!m) return null;
    ctx.contents.put(m.contentSha256, m.bytes);
    return draftOver(path, m, m.bytes, false);
  });
}

/**
 * A copy of the file `meta` describes with no name: the memory was deleted since an open of it
 * started (reopens.ts). Its text is read by version; null once that version is redacted.
 */
export function detachedDraft(ctx: MountContext, meta: MemoryMeta): Answer<Draft | null> {
  const cached = ctx.contents.get(meta.contentSha256);
  if (cached) return draftOver(null, meta, cached, true);
  return ctx.reader.versionBytes(meta.versionId).then((bytes) => {
    if (!bytes) return null;
    ctx.contents.put(meta.contentSha256, bytes);
    return draftOver(null, meta, bytes, false);
  });
}

function draftOver(path: string | null, m: MemoryMeta, bytes: Buffer, shared: boolean): Draft {
  return newDraft({ path, memoryId: m.id, stored: true, baseVersionId: m.versionId, baseSha: m.contentSha256, scratch: false, ...memoryAttrs(m) }, bytes, shared);
}

/** A stored memory's mode, times and owner in a draft's terms. */
export function memoryAttrs(m: MemoryMeta): FileAttrs {
  const t = metaTimes(m);
  return { mode: m.mode, mtimeMs: t.mtimeMs, atimeMs: m.atimeMs, ctimeMs: t.ctimeMs, uid: m.uid, gid: m.gid };
}

/** Checks a new entry's path the way the API would, so a refusal arrives as an errno up front. */
export function assertNewPath(path: string): void {
  assertEntryName(baseName(path));
  assertMemoryPath(path);
}

/** Whether a new file at `path` is a scratch draft: a temp-looking name, in a temp directory, or mount-local (names.ts). */
export function scratchFor(path: string): boolean {
  return isScratchName(baseName(path)) || inScratchDir(path) || isMountLocalPath(path);
}

/**
 * A draft that holds no unsaved changes follows storage: reloaded when the memory has a newer
 * version, and let go (its handles keep reading the old bytes) when the memory was moved or deleted.
 * When another memory took the path elsewhere (the API, another session or host: a delete and a
 * create, or a move over it), a draft that only readers hold follows the name too: libfuse's
 * high-level API has one node per name, so the kernel keeps one inode for the path, and the size a
 * stat of it gives (the new file's) bounds every read through it. A reader holding the old bytes
 * read them cut to that size (or padded); it now reads the new file whole, as it would after an
 * in-place rewrite. A draft a writer holds is let go, so nothing it writes lands on the new file.
 */
function freshen(ctx: MountContext, path: string): Answer<Draft | null> {
  const d = ctx.drafts.get(path);
  if (!d) return null;
  if (d.failed) {
    // Its changes are dropped at its last release (a write over a cap): the path shows what is stored.
    leavePath(ctx, d);
    return null;
  }
  if (!d.stored || d.dirty || d.scratch) return d;
  return after(ctx.view.meta(path), (m): Answer<Draft | null> => {
    if (!m || m.id !== d.memoryId) {
      // Only here: the handle table is walked once, not on every lookup of an open file.
      const readersOnly = d.opens > 0 && !ctx.handles.hasWriter(d);
      if (m && readersOnly) return takeOver(ctx, d, m.id);
      if (m && d.opens > 0) return splitReaders(ctx, d, path, m);
      ctx.drafts.detach(d);
      // Deleted: its readers follow the next file made at the name, if one comes while they read.
      if (!m && readersOnly) keepOrphan(ctx, path, d);
      return null;
    }
    if (m.versionId === d.baseVersionId) {
      // chmod, chown or utimens in another mount of the store change the row and no version.
      setFileAttrs(d, memoryAttrs(m));
      return d;
    }
    return ctx.reader.memory(m.id).then((full) => {
      if (full) reloadDraft(d, Buffer.from(full.content, 'utf8'), full, memoryAttrs(full));
      return d;
    });
  });
}

/** A readers-only draft becomes the memory `id` that took its path `path` elsewhere (freshen, adoptOrphan). */
function takeOver(ctx: MountContext, d: Draft, id: string, path = d.path): Promise<Draft | null> {
  return ctx.reader.memory(id).then((full) => {
    if (!full || full.path !== path || path === null || (ctx.drafts.get(path) ?? d) !== d) {
      ctx.drafts.detach(d);
      return null;
    }
    d.memoryId = full.id;
    reloadDraft(d, Buffer.from(full.content, 'utf8'), full, memoryAttrs(full));
    ctx.drafts.set(path, d);
    d.path = path;
    // An orphan's dropped changes were counted against the mount-local caps until now.
    settleLocal(ctx, d);
    return d;
  });
}

/**
 * Another memory took the path of `d` elsewhere while writers and readers shared it: the writers
 * keep `d` (what they write goes nowhere), the readers follow the name to a working copy of the
 * new file (freshen's reason), which the path shows from now on.
 */
function splitReaders(ctx: MountContext, d: Draft, path: string, m: MemoryMeta): Answer<Draft | null> {
  ctx.drafts.detach(d);
  return after(storedDraft(ctx, path, m), (fresh) => {
    if (!fresh || ctx.drafts.has(path) || ctx.handles.moveReaders(d, fresh) === 0) return null;
    ctx.drafts.set(path, fresh);
    return fresh;
  });
}

/** Paths noted at once with a deleted file's readers (a mass delete elsewhere while many are open). */
const MAX_ORPHANS = 1024;

/**
 * `d`, which only readers hold, has no file at `path` any more (deleted elsewhere, or opened as a
 * copy of a file deleted during the open: ops.ts openGone): noted until a file comes back there.
 */
export function keepOrphan(ctx: MountContext, path: string, d: Draft): void {
  if (ctx.orphans.size >= MAX_ORPHANS && !ctx.orphans.has(path)) ctx.orphans.clear();
  ctx.orphans.set(path, d);
}

/**
 * A file is at `path` again, made elsewhere after the file there was deleted while only readers
 * held it open: those readers follow the name (freshen's reason: the kernel's one inode for the
 * path has the new file's size now, which would cut or pad what they read of the old bytes).
 */
function adoptOrphan(ctx: MountContext, path: string, meta: MemoryMeta): Answer<Node> {
  const d = ctx.orphans.get(path)!;
  ctx.orphans.delete(path);
  const stored: Node = { kind: 'file', draft: null, meta };
  // Changes it holds were never to be saved (its file is gone), so a reload loses nothing.
  if (d.path !== null || d.opens === 0 || ctx.handles.hasWriter(d)) return stored;
  return takeOver(ctx, d, meta.id, path).then((draft) => (draft ? { kind: 'file', draft, meta: null } : stored));
}

/** Runs on every lookup, so it counts without allocating: a UTF-16 unit is at most 3 UTF-8 bytes. */
function assertLookupName(path: string): void {
  const nameLength = path.length - path.lastIndexOf('/') - 1;
  if (nameLength * 3 > NAME_MAX && byteLength(baseName(path)) > NAME_MAX) {
    throw fsError(Fuse.ENAMETOOLONG, `name is longer than ${NAME_MAX} bytes`);
  }
  // Deeper than any memory can be: nothing is there (creating it is refused as EINVAL).
  if (path.length > MAX_SEGMENTS * 2 && slashes(path) > MAX_SEGMENTS) throw fsError(Fuse.ENOENT, 'too many path segments');
}

function slashes(path: string): number {
  let n = 0;
  for (let i = 0; i < path.length; i++) if (path.charCodeAt(i) === 47) n++;
  return n;
}
