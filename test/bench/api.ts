/** @module API figures: create, retrieve, list page and version list page from 4 concurrent clients; checkpoints. */
import { load, median, metricSample, type Api, type LoadResult } from './http.js';
import { fmt, ratio } from './report.js';
import { restoreFigures } from './restore.js';

export type ApiFigures = Record<string, LoadResult>;

const CLIENTS = 4;
/** Requests of each kind run before the measured rounds and not counted (see apiFigures). */
export const warmupRequests = (quick: boolean) => (quick ? 100 : 500);

/**
 * `existing`: ids of memories already in the store (the large store), or null for an empty store,
 * where the retrieve and list figures use what the create runs made.
 */
export async function apiFigures(api: Api, storeId: string, existing: string[] | null, bigDir: string, quick: boolean): Promise<ApiFigures> {
  // Reads are cheap to repeat: three rounds in quick runs too, whose single round swung by 2x.
  const reps = { writes: quick ? 1 : 3, reads: 3 };
  const n = { create: quick ? 500 : 2000, retrieve: quick ? 1000 : 5000, list: quick ? 300 : 1000, versions: quick ? 300 : 1000 };
  const base = `/v1/memory_stores/${storeId}`;
  const created: string[] = [];
  const runs: Record<string, LoadResult[]> = { create: [], retrieve: [], list: [], versions: [] };
  const content = 'x'.repeat(200) + '\n';
  // Warm-up, not counted: the first few hundred requests of a kind run before V8 has compiled their
  // path and while the WAL file is still growing, and were 30–40% slower than the rounds after.
  const warm = warmupRequests(quick);
  const warmIds: string[] = [];
  await load(CLIENTS, warm, async (i) => {
    warmIds.push((await api.call<{ id: string }>('POST', `${base}/memories`, { path: `/api-warmup/m${String(i).padStart(5, '0')}.md`, content })).id);
  });
  await load(CLIENTS, warm, (i) => api.call('GET', `${base}/memories/${warmIds[i % warmIds.length]}`));
  for (let r = 0; r < reps.writes; r++) {
    runs['create']!.push(
      await load(CLIENTS, n.create, async (i) => {
        const m = await api.call<{ id: string }>('POST', `${base}/memories`, { path: `/api-r${r}/m${String(i).padStart(5, '0')}.md`, content });
        created.push(m.id);
      }),
    );
  }
  const ids = existing ?? created;
  const listPrefix = existing ? bigDir : '/api-r0/';
  // The creates' search indexing runs once they pause, on the thread that serves the reads: measured
  // unsettled, the first read round shared it (2.3k retrieves/s against 8.7k/s settled, stop 38).
  await searchSettled(api, (line) => process.stderr.write(`${line}\n`));
  for (let r = 0; r < reps.reads; r++) {
    runs['retrieve']!.push(await load(CLIENTS, n.retrieve, (i) => api.call('GET', `${base}/memories/${ids[(i * 7919) % ids.length]}`)));
    runs['list']!.push(await load(CLIENTS, n.list, () => api.call('GET', `${base}/memories?path_prefix=${encodeURIComponent(listPrefix)}&limit=100`)));
    runs['versions']!.push(await load(CLIENTS, n.versions, () => api.call('GET', `${base}/memory_versions?limit=100`)));
  }
  const out: ApiFigures = {};
  for (const [k, rs] of Object.entries(runs)) {
    out[k] = { opsPerSec: median(rs.map((x) => x.opsPerSec)), p50: median(rs.map((x) => x.p50)), p99: median(rs.map((x) => x.p99)) };
  }
  // Checkpoints (issue 6's restoreFigures): one client, a realistic bundle with 32 references.
  try {
    const ck = await restoreFigures(api, storeId, { total: quick ? 50 : 200 });
    out['checkpoint'] = ck.checkpoint;
    out['restore'] = ck.restore;
  } catch (err) {
    process.stderr.write(`checkpoint figures skipped: ${err instanceof Error ? err.message : String(err)}\n`);
  }
  return out;
}

/**
 * Waits until the server's search upkeep has indexed every queued write: its `mnemo_search_backlog`
 * gauge (GET /metrics; SQLite's queue, PostgreSQL's memories without their words and texts not yet
 * in the trigram index) reads 0. The upkeep indexes once writes pause, on the serving thread (SQLite)
 * or the cores a measured round shares: unsettled, a round of creates left about 1 ms of PostgreSQL's
 * time per create, or 0.25 ms of SQLite's serving thread, for the next round. Gives up after 60 s.
 */
export async function searchSettled(api: Api, log: (line: string) => void): Promise<void> {
  const started = performance.now();
  for (;;) {
    const backlog = metricSample(await api.text('/metrics'), 'mnemo_search_backlog');
    if (Number.isNaN(backlog) || backlog === 0) return;
    if (performance.now() - started > 60_000) {
      log('bench: the search backlog did not empty within 60 s; measuring anyway');
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

const LABELS: Record<string, string> = {
  checkpoint: 'checkpoint save (1 client)',
  restore: 'checkpoint restore (1 client, 32 refs)',
  create: 'create memory',
  retrieve: 'retrieve memory',
  list: 'list page (100)',
  versions: 'version list page (100)',
};

export function apiRows(empty: ApiFigures, big: ApiFigures): string[][] {
  return Object.keys(empty).map((k) => {
    const e = empty[k]!;
    const b = big[k] ?? { opsPerSec: NaN, p50: NaN, p99: NaN };
    return [LABELS[k] ?? k, fmt(e.opsPerSec), fmt(e.p50, 2), fmt(e.p99, 2), fmt(b.opsPerSec), fmt(b.p50, 2), fmt(b.p99, 2), ratio(b.opsPerSec / e.opsPerSec)];
  });
}
