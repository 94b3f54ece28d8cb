/**
 * @module The bench's search figures (issue 11): latency of a rare and a common word, in both modes,
 * on a 100-memory and a 100,000-memory store (built through the engine, bigstore.ts), over HTTP
 * against a served store; then the longest event-loop stall while a client pages through the
 * common word, measured with perf_hooks.monitorEventLoopDelay in the bench's own process on the
 * in-process engine over the same file, its searches inline (no reader threads: a page's own cost,
 * which a server now pays on a reader thread; isolation.ts measures what the event loop sees).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setImmediate as turn } from 'node:timers/promises';
import { openSqliteStorage } from '../../src/storage/sqlite/open.js';
import { makeTempDir } from '../helpers/server.js';
import { buildBigStore } from './bigstore.js';
import { median } from './http.js';
import { fmt, ratio, table, type Check } from './report.js';
import { startMnemo, type Mnemo } from './targets.js';

export const SEARCH_SIZES = [100, 100_000] as const;
/** In every store: note 50's fact number, which bigstore.ts gives to no other memory (the 100k store's "# note 95941" too). */
const RARE = String((50 * 7919) % 100_003);
/** In every memory's text. */
const COMMON = 'agent';

type Key = `${'fts' | 'substring'} ${'rare' | 'common'}`;
const CASES: { key: Key; q: string; mode: 'fts' | 'substring' }[] = [
  { key: 'fts rare', q: RARE, mode: 'fts' },
  { key: 'fts common', q: COMMON, mode: 'fts' },
  { key: 'substring rare', q: `fact ${RARE} `, mode: 'substring' },
  { key: 'substring common', q: COMMON, mode: 'substring' },
];

interface SizeFigures {
  /** p50 ms of a first page (limit=10) over HTTP, per case. */
  p50: Record<Key, number>;
  capped: Record<Key, boolean>;
  /** Longest event-loop stall (ms) while paging the common word through 20 pages of 100, per mode. */
  stallMs: Record<'fts' | 'substring', { max: number; page: number }>;
}

interface Page {
  data: unknown[];
  next_page: string | null;
  candidates_capped: boolean;
}

interface Served {
  memories: number;
  dir: string;
  storeId: string;
  server: Mnemo;
}

async function serveStore(memories: number): Promise<Served> {
  const dir = makeTempDir('mnemo-bench-search-');
  const { storeId } = await buildBigStore(dir, memories, memories, () => {});
  return { memories, dir, storeId, server: await startMnemo(dir) };
}

/**
 * Both stores are served at once and each case alternates requests between them, so that other
 * work on a shared host slows both sides of a ratio alike.
 */
async function measure(stores: Served[], reps: number): Promise<{ p50: Record<Key, number>; capped: Record<Key, boolean> }[]> {
  const out = stores.map(() => ({ p50: {} as Record<Key, number>, capped: {} as Record<Key, boolean> }));
  for (const c of CASES) {
    const paths = stores.map((s) => `/v1/memory_stores/${s.storeId}/search?mode=${c.mode}&limit=10&q=${encodeURIComponent(c.q)}`);
    const lat = stores.map(() => [] as number[]);
    for (let i = 0; i < 20 + reps; i++) {
      for (let k = 0; k < stores.length; k++) {
        const t = performance.now();
        const page = await stores[k]!.server.api.call<Page>('GET', paths[k]!);
        if (i >= 20) lat[k]!.push(performance.now() - t);
        out[k]!.capped[c.key] = page.candidates_capped;
      }
    }
    stores.forEach((_, k) => (out[k]!.p50[c.key] = median(lat[k]!)));
  }
  return out;
}

async function measureAll(reps: number, log: (s: string) => void): Promise<SizeFigures[]> {
  const stores: Served[] = [];
  try {
    for (const n of SEARCH_SIZES) {
      stores.push(await serveStore(n));
      log(`search: ${fmt(n)} memories built and served`);
    }
    const http = await measure(stores, reps);
    for (const s of stores) await s.server.stop();
    const figures: SizeFigures[] = [];
    for (const [k, s] of stores.entries()) {
      const file = join(s.dir, 'mnemo.db');
      figures.push({ ...http[k]!, stallMs: { fts: await stall(file, s.storeId, 'fts'), substring: await stall(file, s.storeId, 'substring') } });
    }
    return figures;
  } finally {
    for (const s of stores) {
      await s.server.stop().catch(() => {});
      rmSync(s.dir, { recursive: true, force: true });
    }
  }
}

/** Pages through the common word, one page per turn of the event loop: the longest delay seen and a page's median CPU time (ms). */
async function stall(file: string, storeId: string, mode: 'fts' | 'substring'): Promise<{ max: number; page: number }> {
  // Inline (no reader threads): this row measures what a page costs the thread that runs it.
  const storage = openSqliteStorage(file, { readers: 0 });
  const pageMs: number[] = [];
  const h = monitorEventLoopDelay({ resolution: 1 });
  try {
    let page: string | null = null;
    // One untimed first page: a fresh process's first search also compiles its JavaScript path.
    await storage.searchMemories(storeId, { q: COMMON, mode, pathPrefix: '/', limit: 100, page: null });
    h.enable();
    for (let i = 0; i < 20; i++) {
      await turn();
      // CPU time, not wall time: on a shared host the wall clock also counts other processes' turns.
      const t = process.cpuUsage();
      page = (await storage.searchMemories(storeId, { q: COMMON, mode, pathPrefix: '/', limit: 100, page })).nextPage;
      const used = process.cpuUsage(t);
      pageMs.push((used.user + used.system) / 1000);
      if (!page) break;
    }
    await turn();
    h.disable();
    return { max: h.max / 1e6, page: median(pageMs) };
  } finally {
    await storage.close();
  }
}

export async function searchSection(quick: boolean, log: (s: string) => void): Promise<{ lines: string[]; found: Check[] }> {
  const reps = quick ? 20 : 50;
  const [small, big] = (await measureAll(reps, log)) as [SizeFigures, SizeFigures];
  const found: Check[] = [];
  const rows = CASES.map(({ key }) => {
    const r = big.p50[key] / small.p50[key];
    if (key === 'fts rare') found.push({ what: 'search a rare word at 100,000 memories within 1.5x of 100', ok: r <= 1.5, detail: ratio(r) });
    return [key, fmt(small.p50[key], 2), fmt(big.p50[key], 2), ratio(r), big.capped[key] ? 'yes' : 'no'];
  });
  const stallRows = (['fts', 'substring'] as const).map((m) => [m, fmt(small.stallMs[m].max, 1), fmt(big.stallMs[m].max, 1), fmt(small.stallMs[m].page, 2), fmt(big.stallMs[m].page, 2)]);
  return {
    found,
    lines: [
      `### Search (first page, limit=10, p50 of ${reps} requests over HTTP, alternating between the two stores; ms)\n`,
      table(['query', '100 memories', '100,000 memories', '100k / 100', 'capped at 100k'], rows),
      '',
      'Event-loop stall while paging the common word (20 pages of 100): the longest delay monitorEventLoopDelay saw in the bench process, the engine in-process over the same file, and the median CPU time of a page; ms:\n',
      table(['mode', 'longest stall, 100', 'longest stall, 100,000', 'CPU per page, 100', 'CPU per page, 100,000'], stallRows),
      '',
    ],
  };
}
