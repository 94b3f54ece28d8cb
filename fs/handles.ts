/**
 * @module What is open: drafts (working copies of a file's bytes) and the handle table mapping a
 * FUSE file handle to its draft, flags and whether it wrote since the last save.
 */
import { MAX_CONTENT_BYTES } from '../src/index.js';
import Fuse from './binding/fuse.js';
import { fsError } from './errno.js';
import { isMountLocalPath } from './names.js';
import type { Claimed } from './set-aside.js';

/** A working copy of one file. Writes and truncates change it; a commit turns it into one version. */
export interface Draft {
  /** Where it lives in the mount; null once unlinked (open handles may still read it). */
  path: string | null;
  /** The memory this saves to (pre-generated for new files so the inode number never changes). */
  memoryId: string;
  /** A memory row exists for memoryId (as of the last load or commit). */
  stored: boolean;
  /** The version the working copy was loaded from or last saved as. */
  baseVersionId: string | null;
  /** The text that version holds (its sha-256), or null for a file not stored yet. */
  baseSha: string | null;
  bytes: Buffer;
  /** `bytes` is a content-cache entry shared with other readers: copied before the first change. */
  shared: boolean;
  size: number;
  mode: number;
  /** The working copy differs from what is stored. */
  dirty: boolean;
  /** The errno of a refused write or failed save (0 if none): the changes are dropped on the last release. */
  failed: number;
  /** A new file with a temp-looking name: lives only in the mount until renamed (names.ts). */
  scratch: boolean;
  /** A stored file renamed onto a temp-looking name, held in the mount: the path its memory still has in storage (set-aside.ts). */
  asideFrom: string | null;
  /**
   * A new file that took back a memory set aside from its path (set-aside.ts claimAside), not saved
   * yet: it is a file made here, so if that memory is gone meanwhile its save makes a new one, and if
   * its save is refused the memory goes back to the set-aside copy (giveBack).
   */
  claimed: Claimed | null;
  /**
   * fsync() asked for it: the save it makes (or, for a scratch file, which nothing stores until its
   * rename, the save that stores it: the rename, the atomic-save fold) is durable when it answers
   * (save-points.ts).
   */
  syncAsked: boolean;
  opens: number;
  mtimeMs: number;
  /** The mtime was set by utimens after the last change: a save keeps it (cp -p) instead of the save time. */
  mtimeSet: boolean;
  /**
   * A chmod, chown or utimens came after the last write: the kernel holds the times its reply gave,
   * which the save replaces with the stored ones (save-points.ts drops the kernel's copy then).
   */
  statusSet: boolean;
  /** null: follows the mtime (as a stored memory's does: sqlite/schema/attrs.ts). */
  atimeMs: number | null;
  ctimeMs: number;
  /** Owner set by chown; null: the serving process's. */
  uid: number | null;
  gid: number | null;
  /** Size of the loaded or last saved content, and whether every change since was a write at the end. */
  baseSize: number;
  appendOnly: boolean;
  /** Bytes this draft is counted for against the mount-local caps (local-budget.ts). */
  charged: number;
}

/** A draft over `content`; `shared` content (a cache entry) is copied before the draft changes it. */
export function newDraft(
  init: Pick<Draft, 'path' | 'memoryId' | 'stored' | 'baseVersionId' | 'scratch'> & Partial<Pick<Draft, 'baseSha'>> & FileAttrs,
  content: Buffer,
  shared = false,
): Draft {
  // Spelled out rather than spread: one object shape for every draft, and a spread was a tenth of an open.
  return {
    path: init.path,
    memoryId: init.memoryId,
    stored: init.stored,
    baseVersionId: init.baseVersionId,
    baseSha: init.baseSha ?? null,
    bytes: content,
    shared,
    size: content.length,
    mode: init.mode,
    dirty: false,
    failed: 0,
    scratch: init.scratch,
    asideFrom: null,
    claimed: null,
    syncAsked: false,
    opens: 0,
    mtimeMs: init.mtimeMs,
    mtimeSet: false,
    statusSet: false,
    atimeMs: init.atimeMs,
    ctimeMs: init.ctimeMs,
    uid: init.uid,
    gid: init.gid,
    baseSize: content.length,
    appendOnly: true,
    charged: 0,
  };
}

/** A file's attributes as a draft holds them (a stored memory's, or a new file's). */
export type FileAttrs = Pick<Draft, 'mode' | 'mtimeMs' | 'atimeMs' | 'ctimeMs' | 'uid' | 'gid'>;

export function setFileAttrs(d: Draft, a: FileAttrs): void {
  d.mode = a.mode;
  d.mtimeMs = a.mtimeMs;
  d.atimeMs = a.atimeMs;
  d.ctimeMs = a.ctimeMs;
  d.uid = a.uid;
  d.gid = a.gid;
}

/** Makes the draft's bytes its own before they change in place. */
function own(d: Draft): void {
  if (!d.shared) return;
  d.bytes = Buffer.from(d.bytes);
  d.shared = false;
}

/** The draft's content and times as they are now; the function puts them back (a refused change leaves the file as it was). */
export function keepState(d: Draft): () => void {
  const { size, dirty, appendOnly, mtimeMs, mtimeSet, atimeMs, ctimeMs } = d;
  const kept = { bytes: Buffer.from(draftContent(d)), shared: false, size, dirty, appendOnly, mtimeMs, mtimeSet, atimeMs, ctimeMs };
  return () => void Object.assign(d, kept);
}

export function draftContent(d: Draft): Buffer {
  return d.bytes.subarray(0, d.size);
}

/** Replaces the working copy with stored content (a fresher version landed through the API). */
export function reloadDraft(d: Draft, content: Buffer, version: { versionId: string; contentSha256: string }, attrs: FileAttrs): void {
  d.bytes = content;
  d.shared = false;
  d.size = content.length;
  d.baseVersionId = version.versionId;
  d.baseSha = version.contentSha256;
  setFileAttrs(d, attrs);
  d.mtimeSet = false;
  d.dirty = false;
  d.baseSize = content.length;
  d.appendOnly = true;
}

/**
 * The most bytes the file may hold: a memory's limit, or for a file under `.git/` (never a memory:
 * names.ts) as much as the mount-local caps leave (local-budget.ts refuses past them with ENOSPC), so
 * git's packs and index can outgrow a memory.
 */
export function sizeLimitOf(d: Draft): number {
  return d.path !== null && isMountLocalPath(d.path) ? MOUNT_LOCAL_FILE_MAX_BYTES : MAX_CONTENT_BYTES;
}

/**
 * Whether the file may hold `size` bytes. Every write asks, so the path is looked at only past a
 * memory's limit: a mount-local file's limit is always the larger.
 */
export function fitsLimit(d: Draft, size: number): boolean {
  return size <= MAX_CONTENT_BYTES || size <= sizeLimitOf(d);
}

/** A bound for one mount-local file's buffer, far above the default caps (64 MiB a mount, 512 MiB a server). */
const MOUNT_LOCAL_FILE_MAX_BYTES = 2 ** 31 - 1;

/** Resizes the working copy; bytes past the old end read as zeros, as POSIX requires. */
export function resizeDraft(d: Draft, size: number): void {
  if (!fitsLimit(d, size)) throw fsError(Fuse.EFBIG, `${size} bytes is over the ${sizeLimitOf(d)}-byte limit`);
  if (size === d.size) return;
  if (size > d.bytes.length) grow(d, size);
  if (size < d.size && d.shared) {
    // A shared text cut short: copy only what is kept (an O_TRUNC open keeps nothing).
    d.bytes = Buffer.from(d.bytes.subarray(0, size));
    d.shared = false;
  } else if (size < d.size) {
    d.bytes.fill(0, size, d.size);
  }
  d.size = size;
  markChanged(d);
  changedNow(d);
}

/** The working copy is this mount's change now, whatever its bytes: it no longer follows storage (tree.ts freshen). */
export function markChanged(d: Draft): void {
  d.appendOnly = false;
  d.dirty = true;
}

/** Copies `len` bytes of `buf` in at `pos`: the caller's buffer is detached once the op replies. */
export function writeDraft(d: Draft, buf: Buffer, len: number, pos: number): void {
  const end = pos + len;
  if (!fitsLimit(d, end)) {
    d.failed = Fuse.EFBIG;
    throw fsError(Fuse.EFBIG, `a write to byte ${end} is over the ${sizeLimitOf(d)}-byte limit`);
  }
  if (end > d.bytes.length) grow(d, end);
  own(d);
  if (pos !== d.size) d.appendOnly = false;
  buf.copy(d.bytes, pos, 0, len);
  if (end > d.size) d.size = end;
  d.dirty = true;
  changedNow(d);
}

/** A write or truncate: mtime and ctime are now, and an atime that followed the mtime stays behind. */
function changedNow(d: Draft): void {
  if (d.atimeMs === null) d.atimeMs = d.mtimeMs;
  d.mtimeMs = d.ctimeMs = Date.now();
  d.mtimeSet = false;
  // The kernel drops its cached attributes of a file it writes to.
  d.statusSet = false;
}

function grow(d: Draft, min: number): void {
  const want = Math.max(min, d.bytes.length * 2, 4096);
  const next = Buffer.alloc(fitsLimit(d, want) ? want : sizeLimitOf(d));
  d.bytes.copy(next, 0, 0, d.size);
  d.bytes = next;
  d.shared = false;
}

export interface Handle {
  draft: Draft;
  writable: boolean;
  append: boolean;
  /** Wrote (or ftruncated) since this handle last saved: its next flush saves. */
  wrote: boolean;
  /** Changed the file at all (write, truncate, O_TRUNC): its release may save what is left. */
  changed: boolean;
  /**
   * Opened on a file that is not at the name the kernel opened (moved or deleted since its lookup:
   * ops.ts openGone): a stat through it, lent or not, is the file's it holds.
   */
  elsewhere: boolean;
}

const O_ACCMODE = 0o3;
const O_APPEND = 0o2000;

/** How many released handles `find` still knows. */
const RECENTLY_RELEASED = 64;

/** File handles start at 1: fuse-native drops a handle of 0. */
export class HandleTable {
  private readonly open = new Map<number, Handle>();
  private readonly released = new Map<number, Handle>();
  private next = 1;

  add(draft: Draft, flags: number): number {
    const fh = this.next++;
    draft.opens++;
    this.open.set(fh, { draft, writable: (flags & O_ACCMODE) !== 0, append: (flags & O_APPEND) !== 0, wrote: false, changed: false, elsewhere: false });
    return fh;
  }

  get(fh: number): Handle {
    const h = this.open.get(fh);
    if (!h) throw fsError(Fuse.EBADF, `no open file handle ${fh}`);
    return h;
  }

  /**
   * The handle, open or among the last few released, or undefined. A stat of a file deleted while
   * open names it by a handle the binding saw (fuse-native.c "Open files"), which may be another
   * descriptor's that was released a moment before the stat arrived: that handle's working copy
   * still describes the same file.
   */
  find(fh: number): Handle | undefined {
    return this.open.get(fh) ?? this.released.get(fh);
  }

  remove(fh: number): Handle {
    const h = this.get(fh);
    this.open.delete(fh);
    this.released.set(fh, h);
    if (this.released.size > RECENTLY_RELEASED) this.released.delete(this.released.keys().next().value!);
    h.draft.opens--;
    return h;
  }

  /**
   * A handle on this draft with writes its next flush will save (a truncate by path then leaves the
   * save to that close, rather than storing, or being refused for, half of what the writer is
   * writing). Nothing else is: a handle whose close() has returned may still be open until the
   * kernel's release, which can come after the truncate; a truncate left to that release answered
   * "done" and then, refused, was dropped, with an O_TRUNC before it or a new file.
   */
  hasUnsavedWrites(draft: Draft): boolean {
    for (const h of this.open.values()) if (h.draft === draft && h.wrote) return true;
    return false;
  }

  /** Moves the handles open on `from` for reading only to `to`; returns how many moved. */
  moveReaders(from: Draft, to: Draft): number {
    let moved = 0;
    for (const h of this.open.values()) {
      if (h.draft !== from || h.writable) continue;
      h.draft = to;
      from.opens--;
      to.opens++;
      moved++;
    }
    return moved;
  }

  /** An open handle on this draft may write (it was opened for writing). */
  hasWriter(draft: Draft): boolean {
    for (const h of this.open.values()) if (h.draft === draft && h.writable) return true;
    return false;
  }

  all(): Handle[] {
    return [...this.open.values()];
  }
}
