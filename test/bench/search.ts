/**
 * @module The bench's search figures (issue 11): latency of a rare and a common word, in both modes,
 * on a 100-memory and a 100,000-memory store (built through the engine, bigstore.ts), over HTTP
 * against a served store; then the longest event-loop stall while a client pages through the
 * common word, measured with perf_hooks.monitorEventLoopDelay in the bench's own process on the
 * in-process engine over the same file (a search is synchronous, so its stall is the same there).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setImmediate as turn } from 'node:timers/promises';
import { openSqliteStorage } from '../../src/storage/sqlite.js';
import { makeTempDir } from '../helpers/server.js';
import { buildBigStore } from './bigstore.js';
import { median } from './http.js';
import { fmt, ratio, table, type Check } from './report.js';
import { startMnemo } from './targets.js';

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

async function measureSize(memories: number, reps: number, log: (s: string) => void): Promise<SizeFigures> {
  const dir = makeTempDir('mnemo-bench-search-');
  try {
    const { storeId } = buildBigStore(dir, memories, memories, () => {});
    const server = await startMnemo(dir);
    const p50 = {} as Record<Key, number>;
    const capped = {} as Record<Key, boolean>;
    try {
      for (const c of CASES) {
        const path = `/v1/memory_stores/${storeId}/search?mode=${c.mode}&limit=10&q=${encodeURIComponent(c.q)}`;
        for (let i = 0; i < 20; i++) await server.api.call('GET', path);
        const lat: number[] = [];
        for (let i = 0; i < reps; i++) {
          const t = performance.now();
          capped[c.key] = (await server.api.call<Page>('GET', path)).candidates_capped;
          lat.push(performance.now() - t);
        }
        p50[c.key] = median(lat);
      }
    } finally {
      await server.stop();
    }
    log(`search: ${fmt(memories)} memories measured`);
    const file = join(dir, 'mnemo.db');
    return { p50, capped, stallMs: { fts: await stall(file, storeId, 'fts'), substring: await stall(file, storeId, 'substring') } };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Pages through the common word, one page per turn of the event loop: the longest delay seen and the median page (ms). */
async function stall(file: string, storeId: string, mode: 'fts' | 'substring'): Promise<{ max: number; page: number }> {
  const storage = openSqliteStorage(file);
  const pageMs: number[] = [];
  const h = monitorEventLoopDelay({ resolution: 1 });
  try {
    let page: string | null = null;
    h.enable();
    for (let i = 0; i < 20; i++) {
      await turn();
      const t = performance.now();
      page = storage.searchMemories(storeId, { q: COMMON, mode, pathPrefix: '/', limit: 100, page }).nextPage;
      pageMs.push(performance.now() - t);
      if (!page) break;
    }
    await turn();
    h.disable();
    return { max: h.max / 1e6, page: median(pageMs) };
  } finally {
    storage.close();
  }
}

export async function searchSection(quick: boolean, log: (s: string) => void): Promise<{ lines: string[]; found: Check[] }> {
  const reps = quick ? 20 : 50;
  const small = await measureSize(SEARCH_SIZES[0], reps, log);
  const big = await measureSize(SEARCH_SIZES[1], reps, log);
  const found: Check[] = [];
  const rows = CASES.map(({ key }) => {
    const r = big.p50[key] / small.p50[key];
    if (key === 'fts rare') found.push({ what: 'search a rare word at 100,000 memories within 1.5x of 100', ok: r <= 1.5, detail: ratio(r) });
    return [key, fmt(small.p50[key], 2), fmt(big.p50[key], 2), ratio(r), big.capped[key] ? 'yes' : 'no'];
  });
  const stallRows = (['fts', 'substring'] as const).map((m) => [m, fmt(small.stallMs[m].max, 1), fmt(big.stallMs[m].max, 1), fmt(small.stallMs[m].page, 2), fmt(big.stallMs[m].page, 2)]);
  const worst = Math.max(big.stallMs.fts.max, big.stallMs.substring.max);
  found.push({ what: 'longest event-loop stall paging a common word at 100,000 memories < 50 ms', ok: worst < 50, detail: `${fmt(big.stallMs.fts.max, 1)} ms fts, ${fmt(big.stallMs.substring.max, 1)} ms substring` });
  return {
    found,
    lines: [
      `### Search (first page, limit=10, p50 of ${reps} requests over HTTP; ms)\n`,
      table(['query', '100 memories', '100,000 memories', '100k / 100', 'capped at 100k'], rows),
      '',
      'Event-loop stall while paging the common word (20 pages of 100): the longest delay monitorEventLoopDelay saw in the bench process, the engine in-process over the same file, and the median page; ms:\n',
      table(['mode', 'longest stall, 100', 'longest stall, 100,000', 'median page, 100', 'median page, 100,000'], stallRows),
      '',
    ],
  };
}
