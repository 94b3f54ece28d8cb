/**
 * @module Background search-index upkeep: writes only queue memories for the full-text index, and
 * this indexes the queue once writes pause, in batches that each yield to the event loop. A search
 * does not wait for it (it indexes what is still queued first); this keeps that wait short.
 *
 * Why it waits for a pause: indexing runs on the thread that serves mounts and requests, and in its
 * own fsync'd transactions. Run every tick during a burst of saves, it added about a quarter to each
 * save's time; run once the burst ends, the same work costs the writers nothing. A burst that never
 * pauses still gets indexed every `maxDeferMs`, so the queue (and a search's first wait) stays bounded.
 * A burst that queues much (about 1,000 saves: `urgentAfter` marks, a save moves the mark by ~2) is
 * indexed at once rather than after the pause: a search indexes at most a few batches itself and
 * refuses (503) past them (sqlite/search.ts), so the queue must stay well below that.
 */

export interface SearchUpkeepOptions {
  /** Indexes up to `max` queued memories in one transaction; returns how many still wait. */
  index: (max: number) => Promise<number> | number;
  /**
   * A number that moves whenever storage is written (Storage.changeMark). Indexing should not move
   * it; a heavy turn SQLite runs on the writer thread's connection does (sqlite/open.ts threadWrites),
   * so after a run of those the next tick may wait one more tick for a pause.
   */
  changeMark: () => number;
  log: (line: string) => void;
  everyMs?: number;
  batch?: number;
  /** The longest indexing waits for writes to pause. */
  maxDeferMs?: number;
  /** How far the change mark may move since indexing last started before it stops waiting for a pause. */
  urgentAfter?: number;
  /**
   * True while another process does this upkeep for the same database (a server beside `mnemo
   * mount`): the tick starts nothing. Two processes indexing one SQLite file take turns at its one
   * write lock, and a writer that meets it waits for it (up to 5 s: storage/sqlite/lock-wait.ts).
   */
  standBy?: () => boolean;
}

export interface SearchUpkeep {
  /**
   * One turn of the server's timer: unless writes are still going (or another process stands in),
   * indexes the queue a batch per turn of the event loop. Resolves when that run ends (at once if it waits for a pause).
   */
  tick(): Promise<void>;
  /** No run starts after this, and a run under way stops before its next batch. */
  stop(): void;
}

/**
 * The upkeep without its timer: `tick` is what the server calls every `everyMs`, and `now` the
 * clock it measures its deferral by, so a test turns both by hand.
 */
export function createSearchUpkeep({
  index, changeMark, log, batch = 500, maxDeferMs = 5000, urgentAfter = 2000, standBy = () => false, now = Date.now,
}: Omit<SearchUpkeepOptions, 'everyMs'> & { now?: () => number }): SearchUpkeep {
  let stopped = false;
  let running: Promise<void> | null = null;
  let lastMark = changeMark();
  let markAtIndex = lastMark;
  let busySince: number | null = null;

  async function step(done: () => void): Promise<void> {
    try {
      // One batch per turn of the event loop, so requests are served between them.
      if (!stopped && (await index(batch)) > 0) {
        setImmediate(() => void step(done));
        return;
      }
    } catch (err) {
      log(`mnemo: search indexing failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    running = null;
    done();
  }

  /** True while storage was written since the last tick, for at most maxDeferMs in a row and until much queued. */
  function deferring(): boolean {
    const mark = changeMark();
    if (mark === lastMark) {
      busySince = null;
      return false;
    }
    lastMark = mark;
    if (mark - markAtIndex >= urgentAfter) {
      busySince = null;
      return false;
    }
    const t = now();
    busySince ??= t;
    if (t - busySince < maxDeferMs) return true;
    busySince = null;
    return false;
  }

  return {
    tick(): Promise<void> {
      if (running) return running;
      if (stopped || standBy() || deferring()) return Promise.resolve();
      markAtIndex = lastMark;
      let done!: () => void;
      const run = new Promise<void>((resolve) => {
        done = resolve;
      });
      running = run;
      void step(done);
      return run;
    },
    stop(): void {
      stopped = true;
    },
  };
}

/** Starts the upkeep on the server's timer; the returned function stops it. */
export function startSearchUpkeep(options: SearchUpkeepOptions): () => void {
  const upkeep = createSearchUpkeep(options);
  const timer = setInterval(() => void upkeep.tick(), options.everyMs ?? 200);
  timer.unref();
  return () => {
    upkeep.stop();
    clearInterval(timer);
  };
}
