/**
 * @module `.history` in every mount: a read-only directory at the root, reachable by name and
 * never listed in the root's readdir (like ZFS's `.zfs` with snapdir=hidden), so `ls -a`, `find`
 * and `grep -r` over the mount never walk it. `.history/<path>` is a directory for every path that
 * ever held a memory; it holds `v<N>` per version whose path was `<path>` (N counts from 1, oldest
 * first; a deleted version is an empty `v<N>.deleted`; a redacted one is gone and leaves its gap),
 * beside the child names of paths that ever existed below it. Where a path that once held a file
 * later became a directory with an entry named like a version file (`/a/v1`), the version file is
 * shown. Everything here is EROFS for writes, renames, deletes, chmod, utimens and mkdir.
 *
 * The handlers wrap the mount's own (ops.ts): a path under `.history` is answered here from the
 * store's reader (indexed lookups by path, one directory level at a time), anything else goes on.
 * They do not wait in the mount's queue (op-queue.ts): they read only committed history and change
 * nothing, so a save still in flight simply shows there once it commits, as for any other reader.
 */
import Fuse, { OPEN_NOFLUSH, type FuseOps, type FuseStat } from './binding/fuse.js';
import { baseName, HISTORY_ROOT, parentOf, type PathVersion } from '../src/index.js';
import type { MountContext } from './context.js';
import { fsError, toErrno } from './errno.js';
import { newDraft, type Draft } from './handles.js';
import { dirStat, fileStat, inoOf, PROCESS_GID, PROCESS_UID } from './stat.js';

const O_ACCMODE = 0o3;
/** At most this many names in one readdir of `.history` (versions, or child names), like a huge live directory's cut. */
const MAX_LISTED = 10_000;
const VERSION_NAME = /^v([1-9]\d{0,14})(\.deleted)?$/;

type HistoryNode = { kind: 'dir'; path: string } | { kind: 'version'; path: string; version: PathVersion };

export function isHistoryPath(path: string | null): path is string {
  return path !== null && (path === HISTORY_ROOT || path.startsWith(HISTORY_ROOT + '/'));
}

export function versionName(v: PathVersion): string {
  return v.deleted ? `v${v.number}.deleted` : `v${v.number}`;
}

/** What `.history/<rest>` names: a version file, a directory level, or nothing. */
async function resolveHistory(ctx: MountContext, hpath: string): Promise<HistoryNode | null> {
  if (hpath === HISTORY_ROOT) return { kind: 'dir', path: '/' };
  const path = hpath.slice(HISTORY_ROOT.length);
  const m = VERSION_NAME.exec(baseName(path));
  const parent = parentOf(path);
  if (m && parent !== '/') {
    const version = await ctx.reader.pathVersion(parent, Number(m[1]));
    if (version && version.deleted === (m[2] !== undefined)) return { kind: 'version', path: parent, version };
  }
  if ((await ctx.reader.pathVersions(path, 1)).length > 0 || (await ctx.reader.hasHistoryUnder(path))) return { kind: 'dir', path };
  return null;
}

function historyStat(ctx: MountContext, node: HistoryNode): FuseStat {
  if (node.kind === 'dir') {
    const t = ctx.startedMs;
    // nlink 1: "not counted", so find does not skip subdirectories by the link count.
    return dirStat(inoOf(`${HISTORY_ROOT}:${node.path}`), 1, { mode: 0o555, uid: PROCESS_UID, gid: PROCESS_GID, atimeMs: t, mtimeMs: t, ctimeMs: t });
  }
  const t = Date.parse(node.version.createdAt);
  return fileStat(inoOf(node.version.versionId), node.version.sizeBytes, { mode: 0o444, uid: PROCESS_UID, gid: PROCESS_GID, atimeMs: t, mtimeMs: t, ctimeMs: t });
}

/** The stat of a version file a descriptor holds whose version is gone: its bytes, no name linking to it. */
function heldStat(d: Draft): FuseStat {
  const st = fileStat(inoOf(d.baseVersionId!), d.size, { mode: 0o444, uid: PROCESS_UID, gid: PROCESS_GID, atimeMs: d.mtimeMs, mtimeMs: d.mtimeMs, ctimeMs: d.ctimeMs });
  st.nlink = 0;
  return st;
}

async function historyNames(ctx: MountContext, dir: string): Promise<string[]> {
  const names = new Set<string>();
  if (dir !== '/') for (const v of await ctx.reader.pathVersions(dir, MAX_LISTED)) names.add(versionName(v));
  const below = await ctx.reader.historyDirectory(dir, MAX_LISTED);
  for (const n of below.files) names.add(n);
  for (const n of below.dirs) names.add(n);
  return [...names].sort();
}

/** The mount's handlers with `.history` answered in front of them. */
export function withHistory(ctx: MountContext, ops: FuseOps): FuseOps {
  /** Handles open on version files: their ops never reach the live handlers' saves. */
  const handles = new Set<number>();

  /** Replies with `fn`'s value, or with its errno: a negative number or a thrown error. */
  function answer<T>(cb: (code: number, value?: T) => void, fn: () => Promise<T | number>): void {
    fn().then(
      (v) => (typeof v === 'number' && v < 0 ? cb(v) : cb(0, v as T)),
      (err: unknown) => cb(toErrno(err)),
    );
  }
  const erofs = (cb: (code: number) => void) => cb(Fuse.EROFS);
  const inHistory = (...paths: (string | null)[]) => paths.some(isHistoryPath);

  const wrapped: FuseOps = {
    ...ops,
    getattr: (path, cb, fh, lent) => {
      if (!isHistoryPath(path)) return ops.getattr!(path, cb, fh, lent);
      answer(cb, async () => {
        const node = await resolveHistory(ctx, path);
        if (node) return historyStat(ctx, node);
        // Redacted while open: a stat through the descriptor (fstat, a read's size check) is the
        // file it holds, as a deleted file's is (ops.ts goneWhileOpen), never ENOENT.
        const held = handles.has(fh) ? ctx.handles.find(fh)?.draft : undefined;
        return held ? heldStat(held) : Fuse.ENOENT;
      });
    },
    readdir: (path, cb) => {
      if (!isHistoryPath(path)) return ops.readdir!(path, cb);
      answer(cb, async () => {
        const node = await resolveHistory(ctx, path);
        if (!node) return Fuse.ENOENT;
        if (node.kind !== 'dir') return Fuse.ENOTDIR;
        return ['.', '..', ...(await historyNames(ctx, node.path))];
      });
    },
    open: (path, flags, cb, ino) => {
      if (!isHistoryPath(path)) return ops.open!(path, flags, cb, ino);
      if ((flags & O_ACCMODE) !== 0) return cb(Fuse.EROFS);
      answer<number>((code, fh) => cb(code, fh, OPEN_NOFLUSH), async () => {
        const node = await resolveHistory(ctx, path);
        if (!node) return Fuse.ENOENT;
        if (node.kind === 'dir') return Fuse.EISDIR;
        const v = await ctx.reader.pathVersionBytes(node.path, node.version.number);
        if (!v) throw fsError(Fuse.ENOENT, 'the version was redacted');
        const t = Date.parse(v.createdAt);
        const d = newDraft(
          { path, memoryId: v.memoryId, stored: true, baseVersionId: v.versionId, scratch: false, mode: 0o444, mtimeMs: t, atimeMs: t, ctimeMs: t, uid: null, gid: null },
          v.bytes,
        );
        const fh = ctx.handles.add(d, flags);
        handles.add(fh);
        return fh;
      });
    },
    write: (path, fh, buf, len, pos, cb) => (handles.has(fh) ? cb(Fuse.EBADF) : ops.write!(path, fh, buf, len, pos, cb)),
    ftruncate: (path, fh, size, cb) => (handles.has(fh) ? erofs(cb) : ops.ftruncate!(path, fh, size, cb)),
    flush: (path, fh, cb) => (handles.has(fh) ? cb(0) : ops.flush!(path, fh, cb)),
    fsync: (path, datasync, fh, cb) => (handles.has(fh) ? cb(0) : ops.fsync!(path, datasync, fh, cb)),
    release: (path, fh, cb) => {
      if (!handles.delete(fh)) return ops.release!(path, fh, cb);
      ctx.handles.remove(fh);
      cb(0);
    },
    fsyncdir: (path, datasync, fh, cb) => (isHistoryPath(path) ? cb(0) : ops.fsyncdir!(path, datasync, fh, cb)),
    create: (path, mode, cb, flags, caller) => (inHistory(path) ? cb(Fuse.EROFS) : ops.create!(path, mode, cb, flags, caller)),
    truncate: (path, size, cb) => (inHistory(path) ? erofs(cb) : ops.truncate!(path, size, cb)),
    unlink: (path, cb) => (inHistory(path) ? erofs(cb) : ops.unlink!(path, cb)),
    rename: (src, dst, cb, flags) => (inHistory(src, dst) ? erofs(cb) : ops.rename!(src, dst, cb, flags)),
    mkdir: (path, mode, cb, caller) => (inHistory(path) ? erofs(cb) : ops.mkdir!(path, mode, cb, caller)),
    rmdir: (path, cb) => (inHistory(path) ? erofs(cb) : ops.rmdir!(path, cb)),
    chmod: (path, mode, cb, fh) => (inHistory(path) || handles.has(fh) ? erofs(cb) : ops.chmod!(path, mode, cb, fh)),
    chown: (path, uid, gid, cb, fh) => (inHistory(path) || handles.has(fh) ? erofs(cb) : ops.chown!(path, uid, gid, cb, fh)),
    utimens: (path, atime, mtime, cb, fh) => (inHistory(path) || handles.has(fh) ? erofs(cb) : ops.utimens!(path, atime, mtime, cb, fh)),
    link: (src, dst, cb) => (inHistory(src, dst) ? erofs(cb) : ops.link!(src, dst, cb)),
    symlink: (target, path, cb) => (inHistory(path) ? erofs(cb) : ops.symlink!(target, path, cb)),
    mknod: (path, mode, dev, cb) => (inHistory(path) ? erofs(cb) : ops.mknod!(path, mode, dev, cb)),
  };
  return wrapped;
}
