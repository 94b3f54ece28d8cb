/** @module The FUSE face: createMountManager implements the core's Mounter port over the FUSE binding (fs/binding/, fuse-native's addon ported to libfuse 3). */
import { resolve } from 'node:path';
import { MnemoError, notFound, type Mounter, type MountRequest } from '../src/index.js';
import { ContentCache } from './content-cache.js';
import { createContext, type MountContext } from './context.js';
import { DEFAULT_LOCAL_LIMITS, LocalBudget, releaseAllLocal, workspaceBudget, type LocalLimits } from './local-budget.js';
import { DEFAULT_CACHE_SECONDS, fuseMountsUnder, isDeadMount, lazyUnmount, startFuse, type LiveMount } from './mounts.js';
import { createOps } from './ops.js';
import { foldRepeats, type RepeatFolder } from './repeats.js';
import { adoptScratch, commit, warnSaveFailed } from './save-points.js';
import { followWritesElsewhere } from './writes-elsewhere.js';
import { POLL_MS } from './kernel-stats.js';
import { inoOf } from './stat.js';

export { ERRNO_BY_CODE } from './errno.js';

export interface MountManagerDeps {
  log?: (line: string) => void;
  /** Caps on mount-local state per mount and for all of this process's mounts (local-budget.ts). */
  localLimits?: LocalLimits;
  /**
   * Told of each operation as it arrives at a mount, before it waits its turn (op-queue.ts), with
   * whether it had to wait: for tracing, and for the test that ops are answered in arrival order.
   */
  onOperation?: (op: string, path: string, queued: boolean) => void;
  /** How long the kernel may keep a name's entry and a file's attributes (MNEMO_MOUNT_CACHE_SECONDS). */
  cacheSeconds?: number;
  /** After how long a request a mount's handlers have not answered is logged (binding/unanswered.ts; 10 s). */
  unansweredMs?: number;
  /** How long the event loop stays awake after a mount request, in µs (MNEMO_MOUNT_SPIN_US; binding/stay-awake.ts). */
  spinUs?: number;
}

/** The mount manager, and what its mounts' bindings report. */
export interface MountManager extends Mounter {
  /** Stats the binding of the mount at `hostPath` answered without a hop to this thread, and stats it keeps now (kernel-stats.ts); null: not mounted here. */
  keptStats(hostPath: string): { answered: number; kept: number } | null;
  /** Stats the bindings of all this process's mounts, past and present, answered themselves (a counter). */
  statsAnswered(): number;
}

/** Bytes of file content kept for reads across all mounts (fs/content-cache.ts). */
const CONTENT_CACHE_BYTES = 16 * 1024 * 1024;

export function createMountManager({ log = () => {}, localLimits = DEFAULT_LOCAL_LIMITS, onOperation, cacheSeconds = DEFAULT_CACHE_SECONDS, unansweredMs, spinUs = 0 }: MountManagerDeps = {}): MountManager {
  const mounts = new Map<string, { live: LiveMount; ctx: MountContext; lines: RepeatFolder; unfollow: () => void }>();
  const contents = new ContentCache(CONTENT_CACHE_BYTES);
  const serverLocal = new LocalBudget(localLimits.serverMaxBytes, 'MNEMO_LOCAL_MAX_BYTES');
  /** Each workspace's share of `serverLocal`, shared by its mounts (one entry per workspace mounted since the start). */
  const workspaceLocal = new Map<string, LocalBudget>();

  /** Stats answered by the bindings of mounts that are gone (their counts go with them). */
  let answeredBefore = 0;

  async function unmount(hostPath: string): Promise<void> {
    const path = resolve(hostPath);
    const entry = mounts.get(path);
    if (!entry) return;
    mounts.delete(path);
    entry.unfollow();
    answeredBefore += entry.live.keptStats.info().answered;
    await finish(entry.ctx);
    await entry.live.close();
    entry.lines.flush();
    log(`mnemo fs: unmounted ${path}`);
  }

  /** Lands what the mount still owes: saves of open, changed files, after the operations in flight (its queue). */
  async function finish(ctx: MountContext): Promise<void> {
    await ctx.queue.run(async () => {
      for (const d of [...ctx.drafts.values()]) {
        if (d.scratch) await adoptScratch(ctx, d);
        if (ctx.gone || ctx.readOnly || d.failed || d.scratch || (d.stored && !d.dirty)) continue;
        try {
          await commit(ctx, d);
        } catch (err) {
          warnSaveFailed(ctx, d.path ?? '(unlinked)', err);
        }
      }
      ctx.gone = true;
      releaseAllLocal(ctx);
    });
  }

  /** Versions redacted by another process, and versions pruned, that this process has acted on (onRedacted, onPruned); bounded. */
  const redactionsHandled = new Set<string>();
  const prunesHandled = new Set<string>();

  /** The versions in `heard` not acted on yet, now marked as acted on. */
  function firstHeard(handled: Set<string>, heard: string[]): string[] {
    const fresh = heard.filter((id) => !handled.has(id));
    if (handled.size >= 10_000) handled.clear();
    for (const id of fresh) handled.add(id);
    return fresh;
  }

  /**
   * A version of `storeId` (null: of some store) was redacted or pruned: the past its point-in-time
   * mounts show changed. Each drops its answers and the kernel's entries of the files it showed, so
   * the next stat, listing or open answers as a fresh mount for that instant would. An open file's
   * working copy answered its name's stats and opens (tree.ts lookup) from the bytes it was opened
   * on: each leaves its name, in the mount's turn (after the operations in flight, one of which may
   * be opening it), and its descriptors keep reading their bytes, as a deleted file's do.
   */
  function pastChanged(storeId: string | null): void {
    for (const { ctx, live } of mounts.values()) {
      if (ctx.reader.asOf === null || (storeId !== null && ctx.storeId !== storeId)) continue;
      for (const id of ctx.view.drop()) live.invalidateFile(inoOf(id), () => {});
      void ctx.queue.run(() => {
        for (const d of [...ctx.drafts.values()]) {
          ctx.drafts.detach(d);
          live.invalidateFile(inoOf(d.memoryId), () => {});
        }
      });
    }
  }

  /**
   * A file whose stored version changed elsewhere keeps the kernel's pages of the old one until its
   * next open here: dropped now if that old one is the redacted version `versionId`.
   */
  function dropPaged(storeId: string, versionId: string): void {
    for (const { ctx, live } of mounts.values()) {
      if (ctx.storeId !== storeId) continue;
      for (const [path, paged] of ctx.paged) {
        if (paged !== versionId) continue;
        ctx.paged.delete(path);
        live.invalidate(path, () => {});
      }
    }
  }

  return {
    async mount(req: MountRequest): Promise<void> {
      const hostPath = resolve(req.hostPath);
      if (mounts.has(hostPath)) throw new MnemoError('conflict', `something is already mounted at ${hostPath}`);
      const { storeId, service, actor, asOf } = req;
      const readOnly = req.readOnly || asOf !== undefined;
      // The mount's own lines (failed operations, refused saves) with repeats folded: repeats.ts.
      const lines = foldRepeats(log);
      const ctx = createContext({ storeId, service, actor, log: lines.log, readOnly, contents, serverLocal, mountLocalMaxBytes: localLimits.mountMaxBytes, onOperation, asOf });
      const store = await ctx.view.store();
      if (!store) throw notFound('memory store', storeId);
      let share = workspaceLocal.get(store.workspaceId);
      if (!share) workspaceLocal.set(store.workspaceId, (share = workspaceBudget(store.workspaceId, serverLocal)));
      ctx.workspaceLocal = share;
      // Started first, so that a write elsewhere while the kernel mounts is not missed. A point-in-time
      // mount follows the live store too, for the redactions and prunes that change its past; the
      // store's new versions are not in it, so no kernel entry of theirs is dropped.
      const unfollow = followWritesElsewhere({
        reader: asOf === undefined ? ctx.reader : service.mountReader(storeId), actor, onCommit: service.onCommit, dirs: ctx.dirs,
        kernel: () => (asOf === undefined ? ctx.kernel : null), log: lines.log,
        // Deleted by another process or host: the mount empties, as this server's own deletions make it.
        onStoreGone: () => {
          ctx.gone = true;
          log(`mnemo fs: store ${storeId} was deleted elsewhere; ${hostPath} is empty now`);
        },
        // The erased text's sha left with the version row: every kept text goes (read again as needed).
        // Each mount of the store hears of it: the first one to hear acts for all (dropPaged covers
        // every mount of the store), the others find nothing new.
        onRedacted: (heard) => {
          const versionIds = firstHeard(redactionsHandled, heard);
          if (versionIds.length === 0) return;
          contents.clear();
          for (const id of versionIds) dropPaged(storeId, id);
          pastChanged(storeId);
          log(`mnemo fs: ${versionIds.length === 1 ? `version ${versionIds[0]} of store ${storeId} was` : `${versionIds.length} versions of store ${storeId} (${versionIds.join(', ')}) were`} redacted elsewhere; this process's cached texts are dropped`);
        },
        // A pruned text leaves every place mnemo keeps it, as a redacted one does (the feed does not
        // name its sha, so every kept text goes); heard by every mount of the store, acted on once.
        onPruned: (heard) => {
          const versionIds = firstHeard(prunesHandled, heard.map((p) => p.versionId));
          if (versionIds.length === 0) return;
          contents.clear();
          for (const id of versionIds) dropPaged(storeId, id);
          pastChanged(storeId);
        },
      });
      // The binding's kept stats are void at each move of the change mark, as it happens (kernel-stats.ts).
      const unwatch = ctx.reader.onMarkMoved?.(() => ctx.kernelStats.changed()) ?? (() => {});
      let live: LiveMount;
      try {
        live = await startFuse(hostPath, createOps(ctx), { storeId: req.storeId, readOnly, log, cacheSeconds, spinUs, ...(unansweredMs === undefined ? {} : { unansweredMs }) });
      } catch (err) {
        unwatch();
        unfollow();
        throw err;
      }
      ctx.kernel = live;
      ctx.kernelStats.attach(live.keptStats);
      // Asking the mark is how another process's commits are noticed (SQLite polls data_version).
      const poll = setInterval(() => {
        ctx.reader.changeMark();
        ctx.kernelStats.vouch();
      }, POLL_MS);
      poll.unref();
      const stop = () => {
        clearInterval(poll);
        unwatch();
        unfollow();
      };
      mounts.set(hostPath, { live, ctx, lines, unfollow: stop });
      log(`mnemo fs: mounted ${req.storeId} at ${hostPath}${asOf !== undefined ? ` as of ${asOf}` : ''}${readOnly ? ' (read-only)' : ''}`);
    },

    unmount,

    storeChanged(storeId, change) {
      for (const { ctx } of mounts.values()) {
        if (ctx.storeId !== storeId) continue;
        if (change === 'archived') ctx.readOnly = true;
        else ctx.gone = true;
      }
    },

    versionRedacted(storeId, versionId, erasedSha256) {
      if (erasedSha256 !== null) contents.forget(erasedSha256);
      dropPaged(storeId, versionId);
      pastChanged(storeId);
    },

    redactionsMissed() {
      contents.clear();
      pastChanged(null);
    },

    // Only dead ones: a live mount under the root is another process's (a second server with the
    // same mount root), and unmounting it would pull the floor from under its agents.
    async clearStale(root: string): Promise<void> {
      for (const path of await fuseMountsUnder(resolve(root))) {
        if (mounts.has(path)) continue;
        if (!(await isDeadMount(path))) {
          log(`mnemo fs: left live mount ${path} alone: another process serves it`);
          continue;
        }
        await lazyUnmount(path).then(
          () => log(`mnemo fs: cleared stale mount ${path}`),
          (err: unknown) => log(`mnemo fs: could not clear stale mount ${path}: ${String(err)}`),
        );
      }
    },

    async clearDead(hostPath: string): Promise<void> {
      const path = resolve(hostPath);
      if (mounts.has(path) || !(await fuseMountsUnder(path)).includes(path) || !(await isDeadMount(path))) return;
      await lazyUnmount(path).then(
        () => log(`mnemo fs: cleared dead mount ${path}`),
        (err: unknown) => log(`mnemo fs: could not clear dead mount ${path}: ${String(err)}`),
      );
    },

    // Asked of the kernel, not just our table: a mount someone unmounted behind our back is not live.
    async mounted(): Promise<readonly string[]> {
      const live = new Set(await fuseMountsUnder('/'));
      return [...mounts.keys()].filter((p) => live.has(p));
    },

    keptStats(hostPath: string) {
      return mounts.get(resolve(hostPath))?.live.keptStats.info() ?? null;
    },

    statsAnswered() {
      let n = answeredBefore;
      for (const { live } of mounts.values()) n += live.keptStats.info().answered;
      return n;
    },

    async unmountAll(): Promise<void> {
      await Promise.all([...mounts.keys()].map((p) => unmount(p)));
    },
  };
}
