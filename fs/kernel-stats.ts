/**
 * @module The binding's copy of the view's kept file stats (native/fuse/stat-cache.h): a stat by
 * path of a file whose stat the view keeps is answered on libfuse's own thread, with no hop to this
 * thread and back (about 8 of a stat's 20 µs on the 2-core host), and not held up by what this
 * thread is doing.
 *
 * It answers exactly when the getattr handler's own fast path would (ops.ts): nothing in flight in
 * the mount's queue (`busy`), no working copy or retried open at the path (`hold`), the view keeps
 * the stat and nothing changed since it was read. That last is the hard part, since the view finds
 * out lazily, when asked: here every kept stat carries the generation the view's answers were valid
 * at, and the generation moves at once whenever storage's change mark may move (onMarkMoved: each
 * write of this process as it is made, another's when the mark notices it) and whenever the view
 * drops its answers. A mount whose store has pending expiries keeps nothing here (`on`), since
 * those hide rows without a write. Another process's commits are noticed by polling (the mount
 * manager asks the mark every POLL_MS and vouches for it); while this thread is too busy to, the
 * binding stops answering after STAT_VOUCH_NS (150 ms) and the stats wait here as before.
 */
import { KEPT_BUSY, KEPT_GEN, KEPT_ON, type FuseStat, type KeptStats } from './binding/fuse.js';
import type { Drafts } from './drafts.js';
import { KEPT_MS, type Reopens } from './reopens.js';
import type { StorageView } from './storage-view.js';

/** How often the mount manager asks the change mark and vouches (the binding trusts a vouch for 150 ms). */
export const POLL_MS = 50;

export class KernelStats {
  private port: KeptStats | null = null;
  /** The generation the view's answers were last valid at: kept stats carry it. */
  private validGen = 0;
  private busyNow = false;
  private onNow = false;
  /** Paths held in the binding (a hold is sent only where the view may have a stat). */
  private readonly held = new Set<string>();

  /**
   * `usable`: the store's change mark can be followed (the reader reports its moves, or never moves:
   * a point-in-time mount); otherwise nothing is ever answered by the binding.
   */
  constructor(private readonly usable: boolean) {}

  /** The mount started: its binding's kept stats. */
  attach(port: KeptStats): void {
    this.port = port;
    Atomics.store(port.cells, KEPT_BUSY, this.busyNow ? 1 : 0);
    this.changed();
    this.valid();
    Atomics.store(port.cells, KEPT_ON, this.onNow && this.usable ? 1 : 0);
  }

  /** Storage may have changed, or the view dropped its answers: no stat kept so far is answered. */
  changed(): void {
    if (this.port) Atomics.add(this.port.cells, KEPT_GEN, 1);
  }

  /** The view's answers are valid now (read or kept since the last change). */
  valid(): void {
    this.validGen = this.port ? Atomics.load(this.port.cells, KEPT_GEN) : 0;
  }

  keep(path: string, st: FuseStat): void {
    // Kept only where the binding may answer: a copy it never answers is an addon call per stat for nothing.
    if (this.port && this.onNow && this.usable) this.port.keep(path, st, this.validGen);
  }

  forget(path: string): void {
    this.port?.forget(path);
  }

  /** Whether the view may hold expiring answers (`false`: nothing is answered by the binding). */
  on(on: boolean): void {
    this.onNow = on;
    if (this.port) Atomics.store(this.port.cells, KEPT_ON, on && this.usable ? 1 : 0);
  }

  /** The mount's queue has an operation in flight. */
  busy(busy: boolean): void {
    this.busyNow = busy;
    if (this.port) Atomics.store(this.port.cells, KEPT_BUSY, busy ? 1 : 0);
  }

  /**
   * Whether `path` has a working copy or a retried open: its stat is the handler's to answer.
   * `kept`: the view keeps a stat of it (only then can the binding hold one to answer).
   */
  hold(path: string, held: boolean, kept: boolean): void {
    if (!this.port) return;
    if (held === this.held.has(path)) return;
    if (held) {
      // A stat is kept only for a path without a working copy; a retried open's is held regardless.
      if (!kept) return;
      this.held.add(path);
    } else {
      this.held.delete(path);
    }
    this.port.hold(path, held);
  }

  /** The mount manager's poll: the JS thread is alive and has looked for others' changes. */
  vouch(): void {
    this.port?.vouch();
  }
}

/**
 * Holds each path in the binding while the handler must answer its stats: while it has a working
 * copy here (drafts), and while an open of it that met ESTALE is being retried (reopens: such a
 * retry's lookup is noted by the handler). A retry's note lapses with time, unseen, so the path is
 * looked at again once it may have.
 */
export function followHolds(stats: KernelStats, drafts: Drafts, reopens: Reopens, view: Pick<StorageView, 'keepsStat'>): void {
  const settle = (path: string) => stats.hold(path, drafts.has(path) || reopens.waiting(path), view.keepsStat(path));
  drafts.watch(settle);
  reopens.watch((path) => {
    stats.hold(path, true, true);
    setTimeout(function recheck() {
      if (reopens.waiting(path)) return void setTimeout(recheck, KEPT_MS).unref();
      settle(path);
    }, KEPT_MS).unref();
  });
}
