/** @module API figures: create, retrieve, list page and version list page from 4 concurrent clients. */
import { load, median, type Api, type LoadResult } from './http.js';
import { fmt, ratio } from './report.js';

export type ApiFigures = Record<string, LoadResult>;

const CLIENTS = 4;

/**
 * `existing`: ids of memories already in the store (the large store), or null for an empty store,
 * where the retrieve and list figures use what the create runs made.
 */
export async function apiFigures(api: Api, storeId: string, existing: string[] | null, bigDir: string, quick: boolean): Promise<ApiFigures> {
  const reps = quick ? 1 : 3;
  const n = { create: quick ? 500 : 2000, retrieve: quick ? 1000 : 5000, list: quick ? 300 : 1000, versions: quick ? 300 : 1000 };
  const base = `/v1/memory_stores/${storeId}`;
  const created: string[] = [];
  const runs: Record<string, LoadResult[]> = { create: [], retrieve: [], list: [], versions: [] };
  const content = 'x'.repeat(200) + '\n';
  for (let r = 0; r < reps; r++) {
    runs['create']!.push(
      await load(CLIENTS, n.create, async (i) => {
        const m = await api.call<{ id: string }>('POST', `${base}/memories`, { path: `/api-r${r}/m${String(i).padStart(5, '0')}.md`, content });
        created.push(m.id);
      }),
    );
  }
  const ids = existing ?? created;
  const listPrefix = existing ? bigDir : '/api-r0/';
  for (let r = 0; r < reps; r++) {
    runs['retrieve']!.push(await load(CLIENTS, n.retrieve, (i) => api.call('GET', `${base}/memories/${ids[(i * 7919) % ids.length]}`)));
    runs['list']!.push(await load(CLIENTS, n.list, () => api.call('GET', `${base}/memories?path_prefix=${encodeURIComponent(listPrefix)}&limit=100`)));
    runs['versions']!.push(await load(CLIENTS, n.versions, () => api.call('GET', `${base}/memory_versions?limit=100`)));
  }
  // Checkpoint restore (issue 6), when this build has it: a bundle referencing 20 memories.
  const restore = await checkpointRestore(api, base, ids.slice(0, 20), reps, quick ? 300 : 1000);
  if (restore.length > 0) runs['restore'] = restore;
  const out: ApiFigures = {};
  for (const [k, rs] of Object.entries(runs)) {
    out[k] = { opsPerSec: median(rs.map((x) => x.opsPerSec)), p50: median(rs.map((x) => x.p50)), p99: median(rs.map((x) => x.p99)) };
  }
  return out;
}

async function checkpointRestore(api: Api, base: string, refs: string[], reps: number, n: number): Promise<LoadResult[]> {
  try {
    const references = [];
    for (const id of refs) {
      const m = await api.call<{ content_sha256: string }>('GET', `${base}/memories/${id}`);
      references.push({ memory_id: id, content_sha256: m.content_sha256 });
    }
    await api.call('POST', `${base}/checkpoints`, {
      agent_id: 'bench-agent',
      session_id: 'bench-session',
      goal: 'measure restore latency',
      summary: 'a checkpoint made by npm run bench',
      references,
    });
  } catch (err) {
    process.stderr.write(`checkpoint restore skipped: ${err instanceof Error ? err.message : String(err)}\n`);
    return [];
  }
  const out: LoadResult[] = [];
  for (let r = 0; r < reps; r++) {
    out.push(await load(CLIENTS, n, () => api.call('POST', `${base}/checkpoints/sessions/bench-agent/bench-session/restore`, {})));
  }
  return out;
}

const LABELS: Record<string, string> = {
  restore: 'checkpoint restore (20 refs)',
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
