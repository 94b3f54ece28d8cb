/**
 * @module Background search-index upkeep: writes only queue memories for the full-text index, and
 * this indexes the queue shortly after, in batches that each yield to the event loop. A search does
 * not wait for it (it indexes what is still queued first); this keeps that wait short.
 */

export interface SearchUpkeepOptions {
  /** Indexes up to `max` queued memories in one transaction; returns how many still wait. */
  index: (max: number) => number;
  log: (line: string) => void;
  everyMs?: number;
  batch?: number;
}

/** Starts the upkeep; the returned function stops it. */
export function startSearchUpkeep({ index, log, everyMs = 200, batch = 500 }: SearchUpkeepOptions): () => void {
  let stopped = false;
  let running = false;

  function step(): void {
    try {
      // One batch per turn of the event loop, so requests are served between them.
      if (!stopped && index(batch) > 0) {
        setImmediate(step);
        return;
      }
    } catch (err) {
      log(`mnemo: search indexing failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    running = false;
  }

  const timer = setInterval(() => {
    if (running) return;
    running = true;
    step();
  }, everyMs);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
