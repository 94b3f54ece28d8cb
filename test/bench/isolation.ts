/**
 * @module The bench's isolation figures (issue 13): a served store of 100,000 memories (bigstore.ts),
 * first idle, then while SEARCH_CLIENTS clients run full-text searches of a common word back to
 * back. In each phase a python child stats files of the mount it has never looked at (each stat a
 * FUSE round trip to the server, not the kernel's cache) and the bench retrieves memories over the
 * API; the server's own event-loop delay (monitorEventLoopDelay: mnemo_event_loop_delay_seconds on
 * /metrics, api/loop-delay.ts, reset by each scrape) is read at the end of the phase.
 * The searching phase runs twice: with reader threads, then on a server with MNEMO_READER_THREADS=0.
 * Then the worker hop's cost: a tiny listing page inline against through a reader thread, in-process.
 * `BENCH_ONLY=isolation npm run bench` runs it alone.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { openSqliteStorage } from '../../src/storage/sqlite/open.js';
import { makeTempDir } from '../helpers/server.js';
import { buildBigStore, pathOf } from './bigstore.js';
import { metricSample, pick } from './http.js';
import { fmt, table, type Check } from './report.js';
import { startMnemo, type Mnemo } from './targets.js';

const MEMORIES = 100_000;
const SEARCH_CLIENTS = 4;
/** In every memory's text (bigstore.ts). */
const COMMON = 'agent';

/** Stats the paths on stdin's lines one after another, `gap` seconds apart; prints each stat's ms. */
const STATTER = `
import os, sys, time
gap = float(sys.argv[1])
for line in sys.stdin:
    p = line.strip()
    t = time.perf_counter()
    os.stat(p)
    print((time.perf_counter() - t) * 1000, flush=True)
    time.sleep(gap)
`;

interface Phase {
  loopP99: number;
  loopMax: number;
  statP99: number;
  retrieveP99: number;
  searches: number;
  seconds: number;
}

/** The server's event-loop delay since the previous scrape (mnemo_event_loop_delay_seconds), ms. */
export async function loopDelay(m: Mnemo): Promise<{ p99: number; max: number }> {
  const text = await m.api.text('/metrics');
  const stat = (s: string) => metricSample(text, `mnemo_event_loop_delay_seconds{stat="${s}"}`) * 1000;
  return { p99: stat('p99'), max: stat('max') };
}

export function statAll(paths: string[], gapSeconds: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-c', STATTER, String(gapSeconds)], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out.trim().split('\n').map(Number)) : reject(new Error(`statter exited ${code}`))));
    child.stdin.end(paths.join('\n') + '\n');
  });
}

async function phase(m: Mnemo, storeId: string, mnt: string, memoryIds: string[], firstFile: number, stats: number, searching: boolean): Promise<Phase> {
  const paths = Array.from({ length: stats }, (_, i) => mnt + pathOf(firstFile + i));
  let stop = false;
  let searches = 0;
  const searchers = searching
    ? Array.from({ length: SEARCH_CLIENTS }, async () => {
        while (!stop) {
          await m.api.call('GET', `/v1/memory_stores/${storeId}/search?mode=fts&limit=100&q=${COMMON}`);
          searches++;
        }
      })
    : [];
  const retrieveMs: number[] = [];
  const retriever = (async () => {
    for (let i = 0; !stop; i++) {
      const t = performance.now();
      await m.api.call('GET', `/v1/memory_stores/${storeId}/memories/${memoryIds[(i * 7919) % memoryIds.length]!}`);
      retrieveMs.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  // Let the searches get going, then reset the server's loop histogram (a scrape resets it).
  await new Promise((r) => setTimeout(r, 300));
  await loopDelay(m);
  const started = performance.now();
  const statMs = await statAll(paths, 0.005);
  const seconds = (performance.now() - started) / 1000;
  const { p99: loopP99, max: loopMax } = await loopDelay(m);
  stop = true;
  await Promise.all([...searchers, retriever]);
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  return { loopP99, loopMax, statP99: pick(sorted(statMs), 0.99), retrieveP99: pick(sorted(retrieveMs), 0.99), searches, seconds };
}

/** µs per call of a tiny listing page (one store), inline and through one reader thread, alternating rounds. */
async function hopCost(file: string, calls: number): Promise<{ inline: number; worker: number }> {
  const inline = openSqliteStorage(file, { readers: 0 });
  const worker = openSqliteStorage(file, { readers: 1 });
  const q = { includeArchived: false, createdGte: null, createdLte: null, limit: 1, page: null };
  try {
    const ws = (await inline.defaultWorkspace())!.id;
    const round = async (s: typeof inline) => {
      const t = performance.now();
      for (let i = 0; i < calls; i++) await s.listStores(ws, q);
      return ((performance.now() - t) * 1000) / calls;
    };
    await round(inline);
    await round(worker); // the worker's start and first statements
    const a: number[] = [];
    const b: number[] = [];
    for (let r = 0; r < 5; r++) {
      a.push(await round(inline));
      b.push(await round(worker));
    }
    const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1]!;
    return { inline: med(a), worker: med(b) };
  } finally {
    await worker.close();
    await inline.close();
  }
}

export async function isolationSection(quick: boolean, log: (s: string) => void): Promise<{ lines: string[]; found: Check[] }> {
  const dir = makeTempDir('mnemo-bench-isolation-');
  let m: Mnemo | null = null;
  try {
    const memories = quick ? 10_000 : MEMORIES;
    const big = await buildBigStore(dir, memories, memories, log);
    log(`isolation: ${fmt(memories)} memories built in ${big.seconds.toFixed(1)} s`);
    m = await startMnemo(dir);
    const mnt = await m.mountSession(big.storeId);
    const stats = quick ? 200 : 500;
    // Files the mount has never been asked about, a different set per phase: each stat reaches the server.
    const idle = await phase(m, big.storeId, mnt, big.memoryIds, 10_000 % memories, stats, false);
    log('isolation: idle phase done');
    const busy = await phase(m, big.storeId, mnt, big.memoryIds, 20_000 % memories, stats, true);
    log('isolation: search phase done');
    const adminKey = m.server.adminKey;
    await m.stop();
    // The same searches on a server that runs them on its event loop, as before issue 13.
    m = await startMnemo(dir, { MNEMO_READER_THREADS: '0', MNEMO_ADMIN_KEY: adminKey });
    const inlineMnt = await m.mountSession(big.storeId);
    const inline = await phase(m, big.storeId, inlineMnt, big.memoryIds, 30_000 % memories, stats, true);
    log('isolation: inline search phase done');
    await m.stop();
    m = null;
    const hop = await hopCost(join(dir, 'mnemo.db'), quick ? 500 : 2000);
    const found: Check[] = [
      { what: `event-loop delay p99 < 5 ms while ${SEARCH_CLIENTS} clients search`, ok: busy.loopP99 < 5, detail: `${fmt(busy.loopP99, 1)} ms` },
      { what: `event-loop delay max < 20 ms while ${SEARCH_CLIENTS} clients search`, ok: busy.loopMax < 20, detail: `${fmt(busy.loopMax, 1)} ms` },
      { what: 'mount stat p99 < 20 ms while searches run', ok: busy.statP99 < 20, detail: `${fmt(busy.statP99, 1)} ms` },
      { what: 'API retrieve p99 < 20 ms while searches run', ok: busy.retrieveP99 < 20, detail: `${fmt(busy.retrieveP99, 1)} ms` },
    ];
    const row = (label: string, p: Phase) => [label, fmt(p.loopP99, 1), fmt(p.loopMax, 1), fmt(p.statP99, 2), fmt(p.retrieveP99, 2), fmt(p.searches / p.seconds, 1)];
    return {
      found,
      lines: [
        `### Isolation (${fmt(memories)} memories served; ${stats} first-time mount stats from a child process and API retrieves in each phase; ms)\n`,
        table(['phase', 'loop delay p99', 'loop delay max', 'stat p99', 'retrieve p99', 'searches/s'], [
          row('idle', idle),
          row(`${SEARCH_CLIENTS} clients searching "${COMMON}" (fts, limit 100), reader threads`, busy),
          row('the same, searches on the event loop (MNEMO_READER_THREADS=0)', inline),
        ]),
        '',
        `Worker hop: a one-store listing page costs ${fmt(hop.inline, 0)} µs inline and ${fmt(hop.worker, 0)} µs through a reader thread (${fmt(hop.worker - hop.inline, 0)} µs more a call; median of 5 rounds).\n`,
      ],
    };
  } finally {
    await m?.stop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}
