/**
 * @module The fuse-native handlers for one mount. Every handler runs in its turn of the mount's
 * queue (op-queue.ts: one at a time, in arrival order), replies exactly once with a number, and
 * never throws into the binding (notes §1.4): a thrown or rejected MnemoError or FsError becomes
 * its errno, anything else EIO. A handler answered from memory replies synchronously; one that asks
 * storage or writes replies once that settles. fsync replies later still, once its save is on disk
 * (the WAL sync runs off the event loop, src/service/durability.ts), without holding the queue.
 */
import Fuse, { OPEN_DROP_ATTRS, OPEN_KEEP_CACHE, OPEN_NOFLUSH, type FuseOps, type FuseStat } from './binding/fuse.js';
import { isMnemoError, parentOf } from '../src/index.js';
import { after, type Answer } from './answer.js';
import { changeAttrs, dirStatOf, ownerId } from './attrs.js';
import { assertWritable, mountCaller, type MountContext } from './context.js';
import { errnoLine, fsError, FsError, toErrno, wasReported } from './errno.js';
import { markChanged, newDraft, resizeDraft, fitsLimit, writeDraft, type Draft } from './handles.js';
import { reserveLocal, settleLocal } from './local-budget.js';
import { PROCESS_GID, PROCESS_UID, fileStat, inoOf, metaAttrs, storeStatfs } from './stat.js';
import { assertNewPath, assertParentDir, detachedDraft, hasChildren, keepOrphan, listDir, lookup, scratchFor, storedDraft, type Node } from './tree.js';
import { renamePath, unlinkPath } from './moves.js';
import { claimAside } from './set-aside.js';
import { withHistory } from './history.js';
import { inoOfFile, type FileNode } from './reopens.js';
import { dropFailed, kernelCaughtUp } from './dropped-drafts.js';
import { commit, keepPaged, keepServed, releaseDraft, truncatePath, warnSaveFailed } from './save-points.js';

const O_ACCMODE = 0o3;
const O_RDWR = 0o2;
const RENAME_NOREPLACE = 1;
const RENAME_EXCHANGE = 2;
const O_TRUNC = 0o1000;
const O_EXCL = 0o200;
/** Refusals that are normal traffic (lookups of absent names, mkdir -p) and not worth a log line. */
// Answers tools ask for as a matter of course (a lookup of a free name, rm -r's rmdir of a directory
// it then empties), not failures worth a log line.
const QUIET = new Set([Fuse.ENOENT, Fuse.EEXIST, Fuse.ESTALE, Fuse.ENOTEMPTY]);

type Reply = (code: number, value?: never) => void;

export function createOps(ctx: MountContext): FuseOps {
  /**
   * Runs `fn` in the mount's queue and replies with its value or its promise's: a number is the
   * code (read/write byte counts), anything else is 0 + value; with `fh`, the number is a new file
   * handle, sent as 0 + handle. A rejection is answered as a throw is.
   */
  function run(op: string, path: string, cb: Reply, fn: () => unknown, fh = false): void {
    ctx.onOperation?.(op, path, ctx.queue.busy);
    let r: unknown;
    try {
      r = ctx.queue.run(fn);
    } catch (err) {
      return reply(op, path, cb, fh, false, err);
    }
    if (r instanceof Promise) r.then((v: unknown) => reply(op, path, cb, fh, true, v), (err: unknown) => reply(op, path, cb, fh, false, err));
    else reply(op, path, cb, fh, true, r);
  }

  function reply(op: string, path: string, cb: Reply, fh: boolean, ok: boolean, r: unknown): void {
    let code: number;
    let value: unknown;
    if (ok) {
      if (typeof r === 'number' && !fh) code = r;
      else [code, value] = [0, r];
    } else {
      const err = r;
      code = toErrno(err);
      // A refused write or save may have left bytes in the kernel's pages that no version holds.
      if (path !== '(open file)') ctx.paged.delete(path);
      if (wasReported(err)) {
        // Logged where it failed (a save's warning line).
      } else if (!(err instanceof FsError) && !isMnemoError(err)) {
        ctx.log(`mnemo fs: ${op} '${path}' failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      } else if (!QUIET.has(code)) {
        // Named by store, as a save's warning is: one server logs for every session's mount.
        ctx.log(`mnemo fs: ${errnoLine(code, op, path.startsWith('/') ? ctx.storeId + path : `${ctx.storeId} ${path}`, err)}`);
      }
    }
    // The binding checks the reply on a later tick, where a non-number is an uncaught crash.
    if (!Number.isInteger(code) || (fh && code === 0 && !Number.isInteger(value))) {
      ctx.log(`mnemo fs: ${op} '${path}' produced a bad reply; answering EIO`);
      [code, value] = [Fuse.EIO, undefined];
    }
    try {
      if (value === undefined) cb(code);
      else (cb as (c: number, v: unknown) => void)(code, value);
    } catch (err) {
      ctx.log(`mnemo fs: replying to ${op} '${path}' failed: ${String(err)}`);
    }
  }

  const ops: FuseOps = {
    init: (cb) => cb(0),
    statfs: (path, cb) => run('statfs', path, cb, async () => storeStatfs(await ctx.service.limits.storeRoom(ctx.storeId), ctx.readOnly)),

    getattr: (path, cb, fh, lent) => {
      // No path: a file deleted or replaced while open, named by a handle the kernel holds on it
      // (the binding adds one); its stat is its working copy's. A handle released meanwhile was
      // another descriptor's: ESTALE, which a stat by path retries.
      if (path === null) return run('fstat', '(open file)', cb, () => draftStat(ctx, openHandle(fh).draft));
      const own = fh ? elsewhereThrough(path, fh, lent) : undefined;
      if (own) return run('fstat', path, cb, () => draftStat(ctx, own));
      // The commonest op of all: a stored file's stat is answered from the view while nothing changed
      // (and nothing is in flight: then it waits its turn like any other).
      const kept = ctx.queue.busy || ctx.drafts.has(path) || ctx.reopens.waiting(path) ? undefined : ctx.view.stat(path);
      if (kept) return cb(0, kept as never);
      run('stat', path, cb, () =>
        after(lookup(ctx, path), (node) => {
          // The retry of an open that met ESTALE looks the name up with this stat (reopens.ts).
          if (node?.kind === 'file' && ctx.reopens.waiting(path)) ctx.reopens.noted(path, node);
          if (!node) return goneWhileOpen(fh) ?? staleEntry(ctx, path);
          if (node.kind === 'dir') return dirStatOf(ctx, path, node.mode);
          if (node.draft) return draftStat(ctx, node.draft);
          const m = node.meta!;
          const st = fileStat(inoOf(m.id), m.contentSizeBytes, metaAttrs(m));
          ctx.view.keepStat(path, st);
          statServed(ctx, path, m.versionId);
          return st;
        }),
      );
    },

    readdir: (path, cb) =>
      run('scandir', path, cb, async () => {
        const entries = await listDir(ctx, path);
        if (entries === null) throw fsError((await lookup(ctx, path)) ? Fuse.ENOTDIR : Fuse.ENOENT);
        return entries;
      }),

    open: (path, flags, cb, ino) =>
      // A read-only open saves nothing at close: the kernel is told to skip that round trip.
      run('open', path, freshReply(ctx, path, ino, (code, fh, fresh) => cb(code, fh, ((flags & O_ACCMODE) === 0 ? OPEN_NOFLUSH : 0) | fresh)), () => {
        const writable = (flags & O_ACCMODE) !== 0;
        return after(writable ? assertWritable(ctx) : undefined, () =>
          after(lookup(ctx, path), (node) => {
            if (!node) return openGone(path, flags, ctx.reopens.found(path, ino));
            if (node.kind === 'dir') throw fsError(Fuse.EISDIR);
            // Found, then deleted before its bytes were read: it was there during this open.
            return after(openFile(path, node, flags), (fh) => fh ?? openGone(path, flags, inoOfFile(node) === ino ? node : undefined));
          }),
        );
      }, true),

    create: (path, mode, cb, flags, caller) =>
      // The reply carries the new file's stat: libfuse asks for it at once, and the addon answers.
      run('open', path, (code, fh?: number) => cb(code, fh, 0, code === 0 ? createdStat(fh!) : undefined), async () => {
        await assertWritable(ctx);
        assertNewPath(path);
        const found = await lookup(ctx, path);
        if (found) {
          // The kernel sends CREATE for a name it found free, but another session, the API or
          // another host may have made the file since: without O_EXCL, open(O_CREAT) opens it, as
          // on a disk (an append after its bytes, O_TRUNC empties it), where EEXIST failed it.
          if (flags & O_EXCL) throw fsError(Fuse.EEXIST);
          if (found.kind === 'dir') throw fsError(Fuse.EISDIR);
          const fh = await openFile(path, found, flags);
          if (fh !== null) return fh;
        }
        await assertParentDir(ctx, path);
        const now = Date.now();
        // Made where a stored file was just set aside (vim's write): it saves to that memory.
        const claimed = ctx.asides.size > 0 ? claimAside(ctx, path) : null;
        const d = newDraft(
          {
            path, memoryId: claimed?.memoryId ?? ctx.service.ids('memory'), stored: claimed !== null, baseVersionId: claimed?.baseVersionId ?? null,
            baseSha: claimed?.baseSha ?? null, scratch: scratchFor(path), mode: mode & 0o7777, mtimeMs: now, atimeMs: null, ctimeMs: now, ...ownedBy(caller),
          },
          Buffer.alloc(0),
        );
        if (claimed) {
          d.claimed = claimed;
          // Empty and not yet saved: its close saves whatever it holds then, never appended to the old text.
          d.dirty = true;
          d.appendOnly = false;
          d.baseSize = claimed.baseSize;
        }
        ctx.drafts.set(path, d);
        ctx.dirs.entryChanged(parentOf(path), now);
        // Saved at close whatever the access mode (O_CREAT|O_RDONLY makes an empty file too); O_APPEND kept.
        const fh = ctx.handles.add(d, (flags & ~O_ACCMODE) | O_RDWR);
        // O_EXCL (a lock file, `open(f, 'x')`): saved by its close() even if nothing was written, not
        // by the release that follows it, so an O_EXCL open in another session after that close()
        // finds the file. Other creates leave an empty file to the release: a shell's `> f` closes
        // its first descriptor before writing (dup2), and saving there would make two versions.
        if (flags & O_EXCL && !d.scratch) ctx.handles.get(fh).wrote = true;
        return fh;
      }, true),

    read: (path, fh, buf, len, pos, cb) =>
      run('read', path ?? '(open file)', cb, () => {
        const d = ctx.handles.get(fh).draft;
        if (pos >= d.size) return 0;
        const n = Math.min(len, d.size - pos);
        d.bytes.copy(buf, 0, pos, pos + n);
        return n;
      }),

    write: (path, fh, buf, len, pos, cb) =>
      run('write', path ?? '(open file)', cb, () => {
        const h = ctx.handles.get(fh);
        if (!h.writable) throw fsError(Fuse.EBADF);
        if (ctx.readOnly) throw fsError(Fuse.EROFS);
        // O_APPEND: the kernel's offset is its cached size; the true end is the draft's.
        const at = h.append ? h.draft.size : pos;
        grow(h.draft, Math.max(h.draft.size, at + len), () => writeDraft(h.draft, buf, len, at));
        h.wrote = h.changed = true;
        return len;
      }),

    truncate: (path, size, cb) =>
      run('truncate', path, cb, async () => {
        await assertWritable(ctx);
        await truncatePath(ctx, path, size);
      }),

    ftruncate: (path, fh, size, cb) =>
      run('ftruncate', path ?? '(open file)', cb, () => {
        const h = ctx.handles.get(fh);
        return after(assertWritable(ctx), () => {
          // The same size changes nothing (and is no reason to refuse).
          if (size !== h.draft.size) grow(h.draft, size, () => resizeDraft(h.draft, size));
          // Counted as a write: `truncate -s` and vim save at the next flush or fsync.
          h.wrote = h.changed = true;
        });
      }),

    flush: (path, fh, cb) =>
      run('close', path ?? '(open file)', whenGone(fh, cb), () => {
        const h = ctx.handles.get(fh);
        if (h.draft.failed) throw refused(h.draft);
        if (!h.wrote) return;
        h.wrote = false;
        return save(h.draft).then(() => {
          // Saved: this handle owes nothing more. Its release can come after the next open of the
          // file (release is asynchronous), which must not save that opener's O_TRUNC as a version.
          h.changed = false;
        });
      }),

    // fsync and fdatasync alike: the save, then the reply once it and every commit before it is on
    // disk. The queue is free once the save has settled: the wait for the disk holds nothing.
    fsync: (path, _datasync, fh, cb) =>
      run('fsync', path ?? '(open file)', whenDurable('fsync', path ?? '(open file)', whenGone(fh, cb)), async () => {
        const h = ctx.handles.get(fh);
        if (h.draft.failed) throw refused(h.draft);
        h.wrote = false;
        // What this fsync stores commits durably (a FULL commit, not a relaxed one and then a WAL
        // sync on the thread pool: 1.5x faster a save, test/bench/README.md stop 32); a scratch
        // file's save waits for its rename, which keeps the flag.
        h.draft.syncAsked = true;
        try {
          await save(h.draft);
        } finally {
          if (!h.draft.scratch) h.draft.syncAsked = false;
        }
        h.changed = false;
      }),

    // A directory's entries are memory paths, changed by commits (create, rename, unlink): syncing
    // the directory is waiting for every commit so far, as for a file. Nothing of its own to save.
    fsyncdir: (path, _datasync, _fh, cb) =>
      run('fsync', path, whenDurable('fsync', path, cb), () =>
        after(lookup(ctx, path), (node) => {
          if (!node) throw fsError(Fuse.ENOENT);
        }),
      ),

    // A release with nothing to save answers at once; one that saves holds the queue for the save.
    release: (path, fh, cb) =>
      run('release', path ?? '(open file)', cb, () => releaseDraft(ctx, ctx.handles.remove(fh))),

    unlink: (path, cb) =>
      run('unlink', path, cb, async () => {
        await assertWritable(ctx);
        await unlinkPath(ctx, path);
      }),

    rename: (src, dst, cb, flags) =>
      run('rename', `${src}' -> '${dst}`, cb, async () => {
        await assertWritable(ctx);
        // RENAME_EXCHANGE would swap two memories' paths: not a single store operation. RENAME_WHITEOUT
        // leaves a device file (an overlay's whiteout), which a mount cannot hold.
        if (flags & RENAME_EXCHANGE) throw fsError(Fuse.EINVAL, 'renameat2 RENAME_EXCHANGE is not supported');
        if (flags & ~RENAME_NOREPLACE) throw fsError(Fuse.EINVAL, `renameat2 flags ${flags} are not supported`);
        if (flags & RENAME_NOREPLACE && (await lookup(ctx, dst))) throw fsError(Fuse.EEXIST);
        assertNewPath(dst);
        await renamePath(ctx, src, dst);
      }),

    mkdir: (path, mode, cb, caller) =>
      run('mkdir', path, cb, async () => {
        await assertWritable(ctx);
        assertNewPath(path);
        if (await lookup(ctx, path)) throw fsError(Fuse.EEXIST);
        await assertParentDir(ctx, path);
        ctx.localDirs.set(path, mode & 0o7777);
        const now = Date.now();
        ctx.dirs.made(path, now);
        const owner = ownedBy(caller);
        if (owner.uid !== null || owner.gid !== null) ctx.dirs.set(path, { ...optional('uid', owner.uid ?? undefined), ...optional('gid', owner.gid ?? undefined) }, now);
        ctx.dirs.entryChanged(parentOf(path), now);
        // The reply carries the new directory's stat: libfuse asks for it at once, and the addon answers.
        return dirStatOf(ctx, path, mode & 0o7777);
      }),

    rmdir: (path, cb) =>
      run('rmdir', path, cb, async () => {
        await assertWritable(ctx);
        if (path === '/') throw fsError(Fuse.EBUSY);
        const node = await lookup(ctx, path);
        if (!node) throw fsError(Fuse.ENOENT);
        if (node.kind !== 'dir') throw fsError(Fuse.ENOTDIR);
        if (await hasChildren(ctx, path)) throw fsError(Fuse.ENOTEMPTY);
        ctx.localDirs.delete(path);
        ctx.dirs.removed(path);
        ctx.dirs.entryChanged(parentOf(path), Date.now());
      }),

    // Modes, owners and times are kept but are not content: no version (attrs.ts). Through a
    // handle (fchmod…), the path is the open file's own; an unlinked one keeps nothing.
    chmod: (pathOrNull, mode, cb, fh) =>
      run('chmod', pathOrNull ?? '(open file)', cb, () => {
        const path = handlePath(pathOrNull, fh);
        const bits = mode & 0o7777;
        if (path === null) {
          return after(assertWritable(ctx), () => void (openHandle(fh).draft.mode = bits));
        }
        return changeAttrs(ctx, path, { mode: bits }, (caller, id) => ctx.service.setMemoryMode(caller, ctx.storeId, id, bits));
      }),

    // -1 (either spelling) leaves that id as it is.
    chown: (pathOrNull, uid, gid, cb, fh) =>
      run('chown', pathOrNull ?? '(open file)', cb, () => {
        const path = handlePath(pathOrNull, fh);
        if (path === null) return assertWritable(ctx);
        const owner = { ...optional('uid', ownerId(uid)), ...optional('gid', ownerId(gid)) };
        return changeAttrs(ctx, path, owner, (caller, id) => ctx.service.setMemoryOwner(caller, ctx.storeId, id, owner));
      }),

    // Milliseconds since the epoch; null is UTIME_OMIT (that time stays), UTIME_NOW arrives as the
    // current time (the binding resolves it).
    utimens: (pathOrNull, atime, mtime, cb, fh) =>
      run('utime', pathOrNull ?? '(open file)', cb, () => {
        const path = handlePath(pathOrNull, fh);
        if (path === null) return assertWritable(ctx);
        const times = { ...optional('atimeMs', atime ?? undefined), ...optional('mtimeMs', mtime ?? undefined) };
        // Both omitted: utimensat changes nothing, not even the ctime.
        if (atime === null && mtime === null) {
          return after(assertWritable(ctx), () =>
            after(lookup(ctx, path), (node) => {
              if (!node) throw fsError(Fuse.ENOENT);
            }),
          );
        }
        return changeAttrs(ctx, path, times, (caller, id) => ctx.service.setMemoryTimes(caller, ctx.storeId, id, times));
      }),

    link: (src, _dst, cb) => run('link', src, cb, () => refuse('hard links')),
    symlink: (_target, path, cb) => run('symlink', path, cb, () => refuse('symbolic links')),
    mknod: (path, _mode, _dev, cb) => run('mknod', path, cb, () => refuse('device and special files')),
  };
  return withHistory(ctx, ops);

  /** The path an op through a handle (fchmod, futimens…) means: null once the file was unlinked. */
  function handlePath(path: string | null, fh: number): string | null {
    return path ?? openHandle(fh).draft.path;
  }

  /**
   * Opens the file `node` found at `path` with the open's `flags`; null if it left its path since
   * the lookup (deleted meanwhile). The kernel hands O_TRUNC to open (atomic_o_trunc) instead of
   * calling truncate: the working copy is emptied here.
   */
  function openFile(path: string, node: Extract<Node, { kind: 'file' }>, flags: number): Answer<number | null> {
    return after(node.draft ?? storedDraft(ctx, path, node.meta!), (d) => {
      if (!d) return null;
      ctx.drafts.set(path, d);
      return openDraft(d, flags);
    });
  }

  function openDraft(d: Draft, flags: number): number {
    const fh = ctx.handles.add(d, flags);
    // An empty file too: the truncation is this open's change, so the copy no longer follows
    // storage (tree.ts freshen). A stored text that arrived before the first write was taken in
    // and the write landed over its start: the save kept the rest of that text after it.
    if ((flags & O_ACCMODE) !== 0 && flags & O_TRUNC) {
      if (d.size > 0) resizeDraft(d, 0);
      else markChanged(d);
      settleLocal(ctx, d);
      ctx.handles.get(fh).changed = true;
    }
    return fh;
  }

  /**
   * An open whose file is gone. `seen`: the file as a stat found it while this open ran
   * (reopens.ts), so the open came before its delete or move, as on a disk: a working copy here is
   * opened wherever it is now (a deleted one has no name), a stored file where the store has it
   * now, or, deleted, as a copy with no name. Without it (or once that version is redacted),
   * ESTALE: the kernel looks the name up again and retries once.
   */
  function openGone(path: string, flags: number, seen: FileNode | undefined): Answer<number> {
    const missed = () => {
      ctx.reopens.missed(path);
      return goneSinceLookup();
    };
    if (!seen || seen.draft?.failed) throw missed();
    // Its stats answer from the file it holds (elsewhereThrough), not from the name's.
    const away = (fh: number) => {
      const h = ctx.handles.get(fh);
      h.elsewhere = h.draft.path !== path;
      return fh;
    };
    const opened = (d: Draft) => {
      const fh = away(openDraft(d, flags));
      // A reader of the gone file follows the next file made at the name (tree.ts adoptOrphan).
      if (d.path === null && (flags & O_ACCMODE) === 0 && !ctx.handles.hasWriter(d)) keepOrphan(ctx, path, d);
      return fh;
    };
    if (seen.draft) return opened(seen.draft);
    const meta = seen.meta!;
    const copy = () =>
      after(detachedDraft(ctx, meta), (d) => {
        if (!d) throw missed();
        return opened(d);
      });
    // Moved elsewhere (the API, another session): opened at its new name.
    return after(ctx.reader.memory(meta.id), (moved) =>
      !moved || moved.path === path
        ? copy()
        : after(lookup(ctx, moved.path), (node) =>
            node?.kind === 'file' && inoOfFile(node) === inoOf(meta.id) ? after(openFile(moved.path, node, flags), (fh) => (fh === null ? copy() : away(fh))) : copy(),
          ),
    );
  }

  /**
   * The working copy of handle `fh` when it is not the file at `path` any more and the stat is the
   * descriptor's own. The kernel sends its own handle (`lent` false) only to check the size before
   * a read or a seek through that descriptor; the binding lends one to an fstat, and to a stat by
   * path of an open file, which are told apart only for a handle opened on a moved or deleted file
   * (openGone): the process that opened it asks next, before it reads. The read is answered from
   * that copy, so the size must be the copy's: the path's file (the kernel's inode is the name's)
   * cut the read to its own size. The kernel's note of the path's size is let go, so the next open
   * of the name refreshes it.
   */
  function elsewhereThrough(path: string, fh: number, lent: boolean): Draft | undefined {
    const h = ctx.handles.find(fh);
    if (!h || h.draft.path === path || (lent && !h.elsewhere)) return undefined;
    ctx.served.set(path, '');
    ctx.paged.delete(path);
    return h.draft;
  }

  /**
   * The stat of an open file that was deleted elsewhere (the API, another session or host), which
   * libfuse still names by its path: the kernel asks with its handle (a read's size check; the
   * binding adds it to an fstat), and a disk answers from the open file, where ENOENT failed the
   * fstat and the read. Undefined without a handle (a stat by path: the file is gone).
   */
  function goneWhileOpen(fh: number): FuseStat | undefined {
    const h = fh ? ctx.handles.find(fh) : undefined;
    return h ? draftStat(ctx, h.draft) : undefined;
  }

  /** A new file's stat as a getattr through its handle would answer it (none if the handle is gone). */
  function createdStat(fh: number): FuseStat | undefined {
    const h = ctx.handles.find(fh);
    return h ? draftStat(ctx, h.draft) : undefined;
  }

  function openHandle(fh: number) {
    const h = ctx.handles.find(fh);
    if (!h) throw fsError(Fuse.ESTALE, 'the file was deleted and this handle closed');
    return h;
  }

  /**
   * Changes a draft so that it is `size` bytes, within the mount-local caps (local-budget.ts):
   * refused with ENOSPC before anything changes. A size over the file limit is left to the
   * change itself, which refuses it with EFBIG.
   */
  function grow(d: Draft, size: number, change: () => void): void {
    if (fitsLimit(d, size)) reserveLocal(ctx, d, size);
    try {
      change();
    } finally {
      settleLocal(ctx, d);
    }
  }

  /**
   * A reply that waits for the disk: a success is sent once every commit so far is durable (in
   * MNEMO_MOUNT_SYNC=close mode at once: the save was); an error, or a failed sync (EIO), at once.
   */
  function whenDurable(op: string, path: string, cb: Reply): Reply {
    const reply = (code: number) => {
      try {
        cb(code);
      } catch (err) {
        ctx.log(`mnemo fs: replying to ${op} '${path}' failed: ${String(err)}`);
      }
    };
    return (code) => {
      if (code !== 0) return reply(code);
      ctx.service.durability.sync().then(
        () => reply(0),
        (err: unknown) => {
          ctx.log(errnoLine(Fuse.EIO, op, path, err));
          reply(Fuse.EIO);
        },
      );
    };
  }

  /**
   * A refused close or fsync is answered once the kernel has forgotten what it cached of the dropped
   * changes (dropped-drafts.ts), so the caller's next step does not meet them in the kernel's cache.
   */
  function whenGone(fh: number, cb: Reply): Reply {
    return (code) => {
      const gone = kernelCaughtUp(ctx.handles.find(fh)?.draft);
      if (!gone) return cb(code);
      void gone.then(() => {
        try {
          cb(code);
        } catch (err) {
          ctx.log(`mnemo fs: replying to close failed: ${String(err)}`);
        }
      });
    };
  }

  /**
   * The close or fsync of a draft a write already refused (over the size limit or a cap): it leaves
   * its path now, as a refused save's does, and the kernel forgets its entry before the reply
   * (whenGone), so the next lookup finds the stored file, or none.
   */
  function refused(d: Parameters<typeof commit>[1]): Error {
    if (d.path !== null && ctx.drafts.get(d.path) === d) dropFailed(ctx, d, d.failed);
    return fsError(d.failed);
  }

  async function save(d: Parameters<typeof commit>[1]): Promise<void> {
    try {
      await commit(ctx, d);
    } catch (err) {
      // The close/fsync fails and nothing is stored: the draft's changes drop on its last release.
      warnSaveFailed(ctx, d.path ?? '(unlinked)', err);
      dropFailed(ctx, d, toErrno(err));
      throw err;
    }
  }
}

/**
 * A new file or directory belongs to the process that made it, as on a disk (an agent running as
 * another user in a container); null is the serving process's own ids, which are not stored.
 */
function ownedBy(caller: { uid: number; gid: number }): { uid: number | null; gid: number | null } {
  return { uid: caller.uid === PROCESS_UID ? null : caller.uid, gid: caller.gid === PROCESS_GID ? null : caller.gid };
}

/**
 * A stat for a file with a working copy here: its size and times are the draft's. The open's note
 * for the draft's path hears of it (statServed, which can only make the next open refresh).
 */
function draftStat(ctx: MountContext, d: Draft): FuseStat {
  if (d.path !== null && d.stored && !d.dirty && d.baseVersionId) statServed(ctx, d.path, d.baseVersionId);
  const st = fileStat(inoOf(d.memoryId), d.size, {
    mode: d.mode, uid: d.uid ?? PROCESS_UID, gid: d.gid ?? PROCESS_GID,
    atimeMs: d.atimeMs ?? d.mtimeMs, mtimeMs: d.mtimeMs, ctimeMs: d.ctimeMs,
  });
  // Deleted (or replaced) while open: no name links to it any more.
  if (d.path === null) st.nlink = 0;
  return st;
}

/**
 * A stat of a file that is gone. If this mount told the kernel of a file there, the kernel may still
 * hold its entry (the file went elsewhere, under the entry timeout): its attributes expired, so it
 * asked, but a path walk would still find the name, and `rename(x, x)`, which the kernel answers
 * itself when both names are one cached file, would succeed. The entry is dropped, off this thread,
 * so what comes next looks the name up again. A new file's lookups never reach here with a served path.
 */
function staleEntry(ctx: MountContext, path: string): number {
  if (ctx.served.delete(path)) ctx.kernel?.invalidateEntry(path, ctx.dirs.parentIno(path), () => {});
  return Fuse.ENOENT;
}

/**
 * The reply of an open. If the file's stored version changed since the kernel last heard of it
 * (another session, the API), or this mount cannot tell which version that was, the kernel's
 * cached size would cut a read short or pad it with NULs (and `wc -c` believes fstat): the reply
 * asks the binding to drop the kernel's cached attributes of the node being opened before it goes
 * out (OPEN_DROP_ATTRS), and the open drops its pages (no keep_cache). Otherwise it replies as is.
 *
 * `keep` (keep_cache) lets the kernel keep its pages of the file instead of dropping them at this
 * open, so a read of a file this mount just wrote or read needs no READ at all: only when the
 * stored version is the one whose attributes and whose bytes the kernel got from this mount
 * (served and paged), and no working copy here differs from it. Any other open drops them.
 *
 * `ino`: the inode number the binding last saw the kernel given for the node it opens. Another
 * file's (the name now holds a file made or moved here elsewhere) means the kernel's size is that
 * file's whatever `served` says: a stat answered for the path may never have reached that node (one
 * libfuse made inside a retried open), and a read through the new descriptor was cut to the old
 * file's size (test/stress/records.ts found it, about once in 50,000 reads under load).
 */
function freshReply(ctx: MountContext, path: string, ino: number, cb: (code: number, fh: number | undefined, flags: number) => void): (code: number, fh?: number) => void {
  return (code, fh) => {
    // Opened on a file no longer at this name (openGone): whatever the kernel holds for the node is
    // another file's; dropped, so the fstat that follows asks, and is answered from the handle.
    if (code === 0 && fh !== undefined && ctx.handles.find(fh)?.elsewhere) {
      ctx.served.set(path, '');
      ctx.paged.delete(path);
      return cb(code, fh, OPEN_DROP_ATTRS);
    }
    const d = code === 0 ? ctx.drafts.get(path) : undefined;
    const otherFile = d !== undefined && ino !== 0 && ino !== inoOf(d.memoryId);
    if (otherFile) ctx.served.set(path, '');
    const version = d && d.stored && !d.dirty && !d.failed ? d.baseVersionId : null;
    const seen = version ? ctx.served.get(path) : undefined;
    const keep = version !== null && seen === version && ctx.paged.get(path) === version;
    if (version) {
      keepServed(ctx, path, version);
      keepPaged(ctx, path, version);
    } else {
      ctx.paged.delete(path);
    }
    // Unknown is not "nothing held": a name made or moved here, or one the bounded map let go, has
    // attributes in the kernel that no stat of ours gave it.
    const fresh = !otherFile && (!version || seen === version);
    cb(code, fh, (keep ? OPEN_KEEP_CACHE : 0) | (fresh ? 0 : OPEN_DROP_ATTRS));
  };
}

/**
 * What a stat of `path` that answered `versionId` tells the open's note (`served`): that the kernel
 * was told of a file there, but not which version's size it holds, unless the note already named
 * this one. The kernel keeps a stat's reply only if no other attributes of the node landed since
 * the stat was sent: two stats in flight, the earlier-sent one answered second with a newer version
 * and landing last, leave the older size in the kernel. A note set from the newer answer made the
 * next open trust it, and a read of the new version was cut to the old size (test/stress/records.ts,
 * about once in 64,000 reads under load). Only an open (which drops the node's attributes when the
 * version changed) and a save of what the kernel wrote name a version.
 */
function statServed(ctx: MountContext, path: string, versionId: string): void {
  if (ctx.served.get(path) !== versionId) ctx.served.set(path, '');
}

/** `{ [key]: value }`, or nothing for an undefined value (exactOptionalPropertyTypes). */
function optional<K extends string>(key: K, value: number | undefined): { [k in K]?: number } {
  return (value === undefined ? {} : { [key]: value }) as { [k in K]?: number };
}

/**
 * An OPEN names a file the kernel still has an entry for (it sends CREATE for a name it knows is
 * free), so a file that is not there any more (deleted elsewhere, or a new file whose save was
 * refused) means that entry is stale. ESTALE makes the kernel look the name up again and retry the
 * open once: `open(O_CREAT)` then creates the file, where ENOENT failed it (the kernel strips
 * O_CREAT from an OPEN, so this handler cannot tell the two apart itself).
 */
function goneSinceLookup(): FsError {
  return fsError(Fuse.ESTALE, 'the file is gone; the kernel looks it up again');
}

function refuse(what: string): never {
  throw fsError(Fuse.EPERM, `${what} are not supported`);
}
