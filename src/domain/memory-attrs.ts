/**
 * @module The POSIX attributes a mount keeps with a memory (mode, times, owner; sqlite/schema/attrs.ts),
 * never versioned: what they become after a new version, and after a chmod, chown or utimens.
 * A null time is derived (fs/stat.ts): mtime and ctime follow updated_at, atime follows the mtime.
 */
import type { KeptAttrs, Memory } from './types.js';

export interface Attrs {
  mode: number;
  atimeMs: number | null;
  mtimeMs: number | null;
  ctimeMs: number | null;
  uid: number | null;
  gid: number | null;
}

/**
 * The kept attributes once a version lands: new content takes the save time as mtime and ctime
 * (unless the save carries an mtime set after its last write), a rename keeps the mtime and moves
 * the ctime; a null atime is frozen at the old mtime either way.
 */
export function attrsAfterVersion(current: Memory, contentChanged: boolean, a: KeptAttrs = {}): Attrs {
  const oldMtime = current.mtimeMs ?? Date.parse(current.updatedAt);
  return {
    mode: a.mode ?? current.mode,
    atimeMs: a.atimeMs ?? current.atimeMs ?? oldMtime,
    mtimeMs: a.mtimeMs ?? (contentChanged ? null : oldMtime),
    ctimeMs: null,
    uid: a.uid ?? current.uid,
    gid: a.gid ?? current.gid,
  };
}

/** The kept attributes of a new memory: what its first save carried, the rest derived. */
export function attrsOfNewMemory(a: KeptAttrs = {}, mode = 0o644): Attrs {
  return { mode: a.mode ?? mode, atimeMs: a.atimeMs ?? null, mtimeMs: a.mtimeMs ?? null, ctimeMs: null, uid: a.uid ?? null, gid: a.gid ?? null };
}

/**
 * Sets attributes without a version. The ctime moves to `now` when anything changed, or always with
 * `always` (a chmod, chown or utimens moves it even when it sets the values already there). Null:
 * nothing to write.
 */
export function attrsAfterSet(m: Memory, a: KeptAttrs, now: string, always: boolean): Attrs | null {
  // An atime that follows the mtime stays where it was when only the mtime is set (touch -m).
  const atimeMs = a.atimeMs ?? (a.mtimeMs !== undefined && m.atimeMs === null ? (m.mtimeMs ?? Date.parse(m.updatedAt)) : m.atimeMs);
  const next = { mode: a.mode ?? m.mode, atimeMs, mtimeMs: a.mtimeMs ?? m.mtimeMs, uid: a.uid ?? m.uid, gid: a.gid ?? m.gid };
  const same = next.mode === m.mode && next.atimeMs === m.atimeMs && next.mtimeMs === m.mtimeMs && next.uid === m.uid && next.gid === m.gid;
  if (same && !always) return null;
  return { ...next, ctimeMs: Date.parse(now) };
}
