/**
 * @module The bench's fork figure (issue 15): the time to fork a served store of 10,000 memories
 * (bigstore.ts) over the API, and a mount's stat p99 and the server's event-loop delay while the
 * fork runs against idle (each stat a FUSE round trip to the server: files the mount has never
 * looked at). The fork is built in bounded batches (src/service/forks.ts), so the mount must keep
 * answering. `BENCH_ONLY=fork npm run bench` runs it alone.
 */
import { rmSync } from 'node:fs';
import { makeTempDir } from '../helpers/server.js';
import { buildBigStore, pathOf } from './bigstore.js';
import { pick } from './http.js';
import { loopDelay, statAll } from './isolation.js';
import { fmt, table, type Check } from './report.js';
import { startMnemo, type Mnemo } from './targets.js';

const MEMORIES = 10_000;

export async function forkSection(quick: boolean, log: (s: string) => void): Promise<{ lines: string[]; found: Check[] }> {
  const dir = makeTempDir('mnemo-bench-fork-');
  let m: Mnemo | null = null;
  try {
    const memories = quick ? 2_000 : MEMORIES;
    const big = await buildBigStore(dir, memories, memories, log);
    m = await startMnemo(dir);
    const mnt = await m.mountSession(big.storeId);
    const stats = quick ? 100 : 300;
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    const paths = (from: number) => Array.from({ length: stats }, (_, i) => mnt + pathOf((from + i) % memories));

    await loopDelay(m);
    const idle = sorted(await statAll(paths(0), 0.002));
    const idleLoop = await loopDelay(m);
    log('fork: idle phase done');

    const rows: string[][] = [];
    const forkSeconds: number[] = [];
    const during: number[] = [];
    let busyLoop = { p99: 0, max: 0 };
    for (let round = 0; round < (quick ? 1 : 3); round++) {
      await loopDelay(m);
      const started = performance.now();
      let done = false;
      const fork = m.api.call('POST', `/v1/memory_stores/${big.storeId}/fork`, { name: `bench fork ${round}` }).then(() => {
        done = true;
        forkSeconds.push((performance.now() - started) / 1000);
      });
      // Stats until the fork has answered (the statter gets a fresh set each round).
      let from = (round + 1) * stats * 3;
      while (!done) {
        during.push(...(await statAll(paths(from), 0.002)));
        from += stats;
      }
      await fork;
      const l = await loopDelay(m);
      busyLoop = { p99: Math.max(busyLoop.p99, l.p99), max: Math.max(busyLoop.max, l.max) };
      log(`fork: round ${round + 1} in ${forkSeconds[forkSeconds.length - 1]!.toFixed(2)} s`);
    }
    const busy = sorted(during);
    const forkMedian = sorted(forkSeconds)[forkSeconds.length >> 1]!;
    rows.push(['idle', '—', fmt(pick(idle, 0.5), 2), fmt(pick(idle, 0.99), 2), fmt(idleLoop.p99, 1), fmt(idleLoop.max, 1)]);
    rows.push([`forking ${fmt(memories)} memories`, fmt(forkMedian, 2), fmt(pick(busy, 0.5), 2), fmt(pick(busy, 0.99), 2), fmt(busyLoop.p99, 1), fmt(busyLoop.max, 1)]);
    const found: Check[] = [
      { what: `mount stat p99 < 20 ms while a ${fmt(memories)}-memory fork runs`, ok: pick(busy, 0.99) < 20, detail: `${fmt(pick(busy, 0.99), 2)} ms (idle ${fmt(pick(idle, 0.99), 2)} ms)` },
    ];
    return {
      lines: [
        `### Fork (a served store of ${fmt(memories)} memories forked over the API; a mount's stat and the event-loop delay in ms)\n`,
        table(['phase', 'fork s (median)', 'stat p50', 'stat p99', 'loop delay p99', 'loop delay max'], rows),
        '',
      ],
      found,
    };
  } finally {
    if (m) await m.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
