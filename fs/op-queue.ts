/**
 * @module The order of one mount's operations. The kernel sends a mount's requests on several
 * threads at once and the binding hands each to the event loop as it comes; an operation that
 * awaits storage (a save, a lookup that missed the view) would let the next one run in between
 * and see, or change, half of its work: drafts moved but not saved, a listing read before the save
 * that changes it.
 *
 * The rule: every operation that reads or changes the mount's state (drafts, handles, directories,
 * the view) runs through its mount's queue, one at a time in arrival order. An operation runs at
 * once, synchronously, when nothing is in flight: a cached stat or a read pays no more than before,
 * and one that finishes without awaiting leaves the queue as it found it. One that awaits holds the
 * queue until it settles; what arrives meanwhile waits its turn. Waiting alone does not hold it:
 * fsync waits for the disk after its save has settled, outside the queue (ops.ts whenDurable); a
 * release with nothing to save awaits nothing. On SQLite every await is settled already, so an
 * operation still ends before the next FUSE callback starts; on a remote database the queue is
 * what keeps them apart.
 */

export class OpQueue {
  /** Settles when the last operation in flight has; null when none is. */
  private tail: Promise<void> | null = null;

  /** `onBusy` hears each change of `busy` (the binding's kept stats are not answered while busy: kernel-stats.ts). */
  constructor(private readonly onBusy: (busy: boolean) => void = () => {}) {}

  /** True while an operation that awaited has not settled: a fast path must queue instead. */
  get busy(): boolean {
    return this.tail !== null;
  }

  /**
   * Runs `fn` in its turn: at once if the queue is idle (its value or throw comes back directly,
   * or its promise, which holds the queue until it settles), else after everything before it.
   */
  run<T>(fn: () => T | Promise<T>): T | Promise<T> {
    if (this.tail === null) {
      const r = fn();
      return r instanceof Promise ? this.hold(r) : r;
    }
    return this.hold(this.tail.then(fn));
  }

  private hold<T>(p: Promise<T>): Promise<T> {
    const settled: Promise<void> = p.then(
      () => this.settle(settled),
      () => this.settle(settled),
    );
    if (this.tail === null) this.onBusy(true);
    this.tail = settled;
    return p;
  }

  private settle(settled: Promise<void>): void {
    // Only the last one in empties the queue: an earlier one settling leaves later ones queued.
    if (this.tail === settled) {
      this.tail = null;
      this.onBusy(false);
    }
  }
}
