/**
 * @module MNEMO_MOUNT_SPIN_US: after a mount request, the event loop keeps turning for a while instead
 * of sleeping, so the next request of a burst finds it awake. A request reaches this thread through
 * an eventfd that wakes it from epoll_wait, and a sleeping thread pays the scheduler's wake-up for
 * it: on a VM whose idle vCPUs halt at once, about half of a request's round trip (test/bench/README.md,
 * stop 54). The turns are `setImmediate`s, so timers, I/O and every other callback run as usual and
 * nothing waits on them; the price is CPU, the thread's idle time while requests keep coming and the
 * window after the last one. One window for the process: every mount shares the one event loop.
 */

let until = 0;
let turning = false;

/** Keeps the event loop from sleeping for at least `ms` from now. */
export function stayAwake(ms: number): void {
  const end = performance.now() + ms;
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
