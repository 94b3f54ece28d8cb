/** @module The state of one mount: its store, actor, access, drafts, mount-local directories and handles. */
import { after, type Answer } from './answer.js';
import Fuse from './binding/fuse.js';
import { mountAccess, type Actor, type Caller, type MountReader, type MountService, type Store } from '../src/index.js';
import { fsError } from './errno.js';
import { HandleTable, type Draft } from './handles.js';
import type { ContentCache } from './content-cache.js';
import { DirTable } from './dirs.js';
import { Drafts } from './drafts.js';
import { LocalBudget } from './local-budget.js';
import type { LiveMount } from './mounts.js';
import { OpQueue } from './op-queue.js';
import { Reopens } from './reopens.js';
import { StorageView } from './storage-view.js';
import { followHolds, KernelStats } from './kernel-stats.js';

export interface MountContext {
  readonly storeId: string;
  /** The service's writes, clock and ids: all the mount may call of the core. */
  readonly service: MountService;
  /** The store's reads, handed by the service (src/service/mount-reader.ts); the view memoises them. */
  readonly reader: MountReader;
  readonly actor: Actor;
  readonly log: (line: string) => void;
  readonly startedMs: number;
  /** Set at mount for read-only sessions, and later when the store is archived. */
  readOnly: boolean;
  /** The store was deleted: the mount shows an empty root. */
  gone: boolean;
  /** Working copies by mount path: open files, new files not saved yet, scratch files. */
  readonly drafts: Drafts;
  /** Directories that exist only in the mount (mkdir, or kept after their last file left), with modes. */
  readonly localDirs: Map<string, number>;
  /** Every directory's inode number, times and owner, for the life of the mount (dirs.ts). */
  readonly dirs: DirTable;
  readonly handles: HandleTable;
  /** The version whose size the kernel may cache, by path (ops.ts freshReply). */
  readonly served: Map<string, string>;
  /**
   * The version whose bytes the kernel may hold in its page cache for a path: the one an open of it
   * last served, or the one a save here made of what the kernel wrote (ops.ts freshReply).
   */
  readonly paged: Map<string, string>;
  /** Opens that found their file deleted since the kernel's lookup, and what a stat saw since (reopens.ts). */
  readonly reopens: Reopens;
  /** Working copies only readers hold whose file was deleted elsewhere, by the path they left (tree.ts adoptOrphan). */
  readonly orphans: Map<string, Draft>;
  /** Stored files renamed onto temp-looking names and held in the mount, by the path storage still has them at (set-aside.ts). */
  readonly asides: Map<string, Draft>;
  /** The live mount's kernel cache control; null until mounted. */
  kernel: Pick<LiveMount, 'invalidate' | 'invalidateEntry' | 'invalidateFile' | 'invalidateName'> | null;
  /** Storage answers kept until storage changes: every read of the store goes through it. */
  readonly view: StorageView;
  /** The binding's copy of the view's kept stats, answered without a hop here (kernel-stats.ts). */
  readonly kernelStats: KernelStats;
  /** File bytes by version id, shared by every mount of the server. */
  readonly contents: ContentCache;
  /** This mount's mount-local bytes (local-budget.ts), and the budget all mounts of the process share. */
  readonly local: LocalBudget;
  readonly serverLocal: LocalBudget;
  /** The budget the mounts of the store's workspace share: set by the mount manager once the store is known, before the mount starts. */
  workspaceLocal: LocalBudget;
  /** This mount's operations, one at a time in arrival order (op-queue.ts). */
  readonly queue: OpQueue;
  /** Told of each operation as it arrives (MountManagerDeps.onOperation). */
  readonly onOperation: ((op: string, path: string, queued: boolean) => void) | undefined;
}

export function createContext(
  init: Pick<MountContext, 'storeId' | 'service' | 'actor' | 'log' | 'readOnly' | 'contents' | 'serverLocal' | 'onOperation'> & { mountLocalMaxBytes: number; asOf?: string | undefined },
): MountContext {
  const { mountLocalMaxBytes, asOf, ...rest } = init;
  const startedMs = Date.now();
  // A point-in-time mount reads the store as it was then (src/service/mount-reader.ts), read-only.
  const reader = asOf === undefined ? init.service.mountReader(init.storeId) : init.service.mountReader(init.storeId, asOf);
  if (asOf !== undefined) rest.readOnly = true;
  // Only a mark whose moves are heard (or a past that never moves) can tell the binding when to stop.
  const kernelStats = new KernelStats(reader.onMarkMoved !== undefined || reader.asOf !== null);
  const view = new StorageView(reader, init.service.clock, kernelStats);
  const drafts = new Drafts();
  const reopens = new Reopens();
  followHolds(kernelStats, drafts, reopens, view);
  return {
    ...rest,
    local: new LocalBudget(mountLocalMaxBytes, 'MNEMO_MOUNT_LOCAL_MAX_BYTES'),
    workspaceLocal: new LocalBudget(Number.MAX_SAFE_INTEGER, 'MNEMO_LOCAL_MAX_BYTES'),
    startedMs,
    gone: false,
    drafts,
    localDirs: new Map(),
    dirs: new DirTable(startedMs),
    handles: new HandleTable(),
    served: new Map(),
    paged: new Map(),
    reopens,
    orphans: new Map(),
    asides: new Map(),
    kernel: null,
    reader,
    view,
    kernelStats,
    queue: new OpQueue((busy) => kernelStats.busy(busy)),
  };
}

/** The caller a mount writes as: the mount's actor, in the store's own workspace. */
export function mountCaller(ctx: MountContext): Answer<Caller> {
  // The view keeps the store row until storage changes, so asking on every check costs no query.
  return after(ctx.view.store(), (store) => callerOf(ctx, store));
}

function callerOf(ctx: MountContext, store: Store | null): Caller {
  // Unmounted (its session ended) with a descriptor still open: what it writes now is not saved.
  if (ctx.gone) throw fsError(Fuse.ENOENT, 'the mount has ended (its session ended or its store was deleted)');
  const access = mountAccess(store, ctx.readOnly);
  if (access === 'gone') {
    ctx.gone = true;
    throw fsError(Fuse.ENOENT, 'the memory store was deleted');
  }
  if (access === 'archived') ctx.readOnly = true;
  if (access !== 'writable') throw fsError(Fuse.EROFS, access === 'archived' ? 'the memory store is archived' : 'read-only mount');
  return { workspaceId: store!.workspaceId, actor: ctx.actor };
}

/** Throws EROFS (or ENOENT for a deleted store) before any change through the mount. */
export function assertWritable(ctx: MountContext): Answer<void> {
  if (ctx.gone) throw fsError(Fuse.ENOENT, 'the memory store was deleted');
  if (ctx.readOnly) throw fsError(Fuse.EROFS, 'read-only mount');
  return after(mountCaller(ctx), () => undefined);
}
