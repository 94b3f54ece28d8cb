/**
 * @module The event loop's delay as a metric: how late the thread that serves every mount and
 * request got to a timer, from perf_hooks.monitorEventLoopDelay. Node records each interval whole
 * (the timer's own RESOLUTION_MS included: idle, p50 reads 10 ms at a resolution of 10), so the
 * resolution is taken off here. Each scrape reads the window since the one before and starts anew:
 * p99 and max describe the last scrape interval, all three from one snapshot.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Gauge, type Registry } from 'prom-client';

const RESOLUTION_MS = 5;

export function registerLoopDelay(registry: Registry): void {
  const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  h.enable();
  const late = (ns: number): number => Math.max(0, ns / 1e9 - RESOLUTION_MS / 1000);
  new Gauge({
    name: 'mnemo_event_loop_delay_seconds',
    help: 'How late the serving thread ran its timers since the last scrape: stat="p50", "p99" or "max", in seconds',
    labelNames: ['stat'] as const,
    registers: [registry],
    collect() {
      const empty = h.count === 0;
      this.set({ stat: 'p50' }, empty ? 0 : late(h.percentile(50)));
      this.set({ stat: 'p99' }, empty ? 0 : late(h.percentile(99)));
      this.set({ stat: 'max' }, empty ? 0 : late(h.max));
      h.reset();
    },
  });
}
