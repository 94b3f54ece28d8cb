/**
 * @module MNEMO_MOUNT_SPIN_US: while mount requests come in a burst, the event loop keeps turning
 * between them instead of sleeping, so the next request finds it awake. A request reaches this thread
 * through an eventfd that wakes it from epoll_wait, and a sleeping thread pays the scheduler's wake-up
 * for it: on a VM whose idle vCPUs halt at once, about half of a request's round trip
 * (test/bench/README.md, stop 54). The turns are `setImmediate`s, so timers, I/O and every other
 * callback run as usual and nothing waits on them; the price is CPU, the thread's idle time between a
 * burst's requests and the window after its last one.
 *
 * Only a burst is worth it: a request that came longer than the window after the one before it would
 * not have been caught by a window either, and a window after it would most likely expire unused
 * (an agent's lone `stat`, a save now and then). So the loop turns only after a request that came
 * within the window of the previous one: a lone request costs nothing, a burst's first request pays
 * one wake-up, the rest none. One window for the process: every mount shares the one event loop.
 */

let until = 0;
let turning = false;
let lastRequest = -Infinity;

/** Called on each mount request: keeps the event loop from sleeping for `ms` from now if the request is part of a burst. */
export function stayAwake(ms: number): void {
  const now = performance.now();
  const gap = now - lastRequest;
  lastRequest = now;
  if (gap > ms) return;
  const end = now + ms;
  if (end > until) until = end;
  if (!turning) {
    turning = true;
    setImmediate(turn);
  }
}

function turn(): void {
  if (performance.now() < until) setImmediate(turn);
  else turning = false;
}
