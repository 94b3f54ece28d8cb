/**
 * @module The engine rows (issue 14, "Targets"): PostgreSQL beside SQLite in one run, on the bench's
 * own throwaway cluster (pg-cluster.ts: fsync on, default synchronous_commit, a unix socket),
 * stopped at the end pass or fail. Two servers run side by side, one per engine, and every round
 * alternates between them, so a shared host's load hits both sides of each ratio alike:
 * - API creates and retrieves from 4 clients (as the API rows of run.ts), PostgreSQL over SQLite;
 * - the file workloads on a session mount of each (saves are the target; reads and stats shown);
 * - a store of 100,000 memories / 1,000,000 versions on PostgreSQL (seeded in bulk, pg-bigstore.ts)
 *   against an empty one: the mount's list/stat/read/save latencies and the API rows.
 * Without PostgreSQL (or without root, which starting the cluster needs) it prints why and skips.
 * `BENCH_ONLY=engines npm run bench` runs it alone.
 */
import { existsSync } from 'node:fs';
import { apiFigures, apiRows, searchSettled, warmupRequests } from './api.js';
import { DIR_SIZE, middleDir } from './bigstore.js';
import { load, median, type LoadResult } from './http.js';
import { clusterSkip, startBenchCluster } from './pg-cluster.js';
import { seedPgBigStore } from './pg-bigstore.js';
import { fmt, ratio, table, type Check } from './report.js';
import { startMnemo, workload, type Mnemo } from './targets.js';

const CLIENTS = 4;
const FILES = 2000;

interface Section {
  lines: string[];
  found: Check[];
}

/** PostgreSQL over SQLite, per round, and the range over rounds. */
interface Compared {
  sqlite: number;
  pg: number;
  ratio: number;
  range: string;
}

function compare(sqlite: number[], pg: number[]): Compared {
  const ratios = pg.map((p, i) => p / sqlite[i]!);
  const range = ratios.length > 1 ? ` (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})` : '';
  return { sqlite: median(sqlite), pg: median(pg), ratio: median(ratios), range };
}

export async function enginesSection(quick: boolean, log: (s: string) => void, runs = quick ? 1 : 3): Promise<Section> {
  const skip = clusterSkip();
  if (skip) return { lines: [`### PostgreSQL beside SQLite\n`, `PostgreSQL rows skipped: ${skip}.\n`], found: [] };
  const cluster = await startBenchCluster(log);
  const stops: (() => Promise<void>)[] = [];
  try {
    return await measure(quick, log, runs, cluster, stops);
  } finally {
    for (const s of stops.reverse()) await s().catch((err: unknown) => log(`engines cleanup: ${String(err)}`));
    cluster.stop();
  }
}

async function measure(
  quick: boolean,
  log: (s: string) => void,
  runs: number,
  cluster: Awaited<ReturnType<typeof startBenchCluster>>,
  stops: (() => Promise<void>)[],
): Promise<Section> {
  const fuse = existsSync('/dev/fuse');
  const big = quick ? { memories: 10_000, versions: 100_000 } : { memories: 100_000, versions: 1_000_000 };
  const found: Check[] = [];
  const lines: string[] = [];
  const started = async (url: string | null, adminKey?: string): Promise<Mnemo> => {
    const m = await startMnemo(undefined, { ...(url === null ? {} : { MNEMO_DATABASE_URL: url }), ...(adminKey ? { MNEMO_ADMIN_KEY: adminKey } : {}) });
    stops.push(m.stop);
    return m;
  };
  const smallUrl = await cluster.createDatabase('mnemo_bench');
  const sqlite = await started(null);
  let pgSmall = await started(smallUrl);
  const engines: [string, Mnemo][] = [['sqlite', sqlite], ['pg', pgSmall]] as [string, Mnemo][];
  // Neither server's search indexing may land in the other's measured round (api.ts searchSettled).
  const settle = async () => {
    for (const [, m] of engines) await searchSettled(m.api, log);
  };

  // 1. API creates and retrieves, rounds alternating between the engines (who goes first alternates too).
  log('engines: API creates and retrieves on SQLite and PostgreSQL');
  const reps = quick ? 1 : 3;
  const n = { create: quick ? 500 : 2000, retrieve: quick ? 1000 : 5000 };
  const content = 'x'.repeat(200) + '\n';
  const ids: Record<string, string[]> = { sqlite: [], pg: [] };
  const bases: Record<string, string> = {};
  for (const [name, m] of engines) {
    bases[name] = `/v1/memory_stores/${await m.createStore(`bench engines ${name}`)}`;
    const warm = warmupRequests(quick);
    const warmIds: string[] = [];
    await load(CLIENTS, warm, async (i) => {
      warmIds.push((await m.api.call<{ id: string }>('POST', `${bases[name]}/memories`, { path: `/warm/m${String(i).padStart(5, '0')}.md`, content })).id);
    });
    await load(CLIENTS, warm, (i) => m.api.call('GET', `${bases[name]}/memories/${warmIds[i % warmIds.length]}`));
  }
  const api: Record<string, Record<string, LoadResult[]>> = { sqlite: { create: [], retrieve: [] }, pg: { create: [], retrieve: [] } };
  const inTurn = (r: number) => (r % 2 === 0 ? engines : [...engines].reverse());
  for (let r = 0; r < reps; r++) {
    for (const [name, m] of inTurn(r)) {
      await settle();
      api[name]!['create']!.push(
        await load(CLIENTS, n.create, async (i) => {
          ids[name]!.push((await m.api.call<{ id: string }>('POST', `${bases[name]}/memories`, { path: `/r${r}/m${String(i).padStart(5, '0')}.md`, content })).id);
        }),
      );
    }
  }
  for (let r = 0; r < reps; r++) {
    for (const [name, m] of inTurn(r)) {
      const own = ids[name]!;
      await settle();
      api[name]!['retrieve']!.push(await load(CLIENTS, n.retrieve, (i) => m.api.call('GET', `${bases[name]}/memories/${own[(i * 7919) % own.length]}`)));
    }
  }
  const creates = compare(api['sqlite']!['create']!.map((x) => x.opsPerSec), api['pg']!['create']!.map((x) => x.opsPerSec));
  const retrieves = compare(api['sqlite']!['retrieve']!.map((x) => x.opsPerSec), api['pg']!['retrieve']!.map((x) => x.opsPerSec));
  const lat = (name: string, k: string) => {
    const rs = api[name]![k]!;
    return `${fmt(median(rs.map((x) => x.p50)), 2)} / ${fmt(median(rs.map((x) => x.p99)), 2)}`;
  };
  const rows: string[][] = [
    ['API create memory (4 clients), ops/s', fmt(creates.sqlite), fmt(creates.pg), ratio(creates.ratio) + creates.range, `p50 / p99 ms: SQLite ${lat('sqlite', 'create')}, PostgreSQL ${lat('pg', 'create')}`, '≥ 0.5x'],
    ['API retrieve memory (4 clients), ops/s', fmt(retrieves.sqlite), fmt(retrieves.pg), ratio(retrieves.ratio) + retrieves.range, `p50 / p99 ms: SQLite ${lat('sqlite', 'retrieve')}, PostgreSQL ${lat('pg', 'retrieve')}`, '≥ 0.7x'],
  ];
  found.push({ what: 'API creates on PostgreSQL ≥ 0.5x SQLite', ok: creates.ratio >= 0.5, detail: `${ratio(creates.ratio)}${creates.range}: ${fmt(creates.pg)}/s against ${fmt(creates.sqlite)}/s` });
  found.push({ what: 'API retrieves on PostgreSQL ≥ 0.7x SQLite', ok: retrieves.ratio >= 0.7, detail: `${ratio(retrieves.ratio)}${retrieves.range}: ${fmt(retrieves.pg)}/s against ${fmt(retrieves.sqlite)}/s` });

  // 2. The file workloads on a session mount of each engine's server, runs alternating.
  let smallScale: Record<string, number> | null = null;
  if (fuse) {
    const mnts: Record<string, string> = {};
    for (const [name, m] of engines) mnts[name] = await m.mountSession(await m.createStore(`bench files ${name}`));
    const files: Record<string, Record<string, number>[]> = { sqlite: [], pg: [] };
    for (let r = 0; r < runs; r++) {
      for (const [name] of inTurn(r)) {
        log(`engines: file workloads, run ${r + 1}/${runs} on ${name}`);
        await settle();
        files[name]!.push(await workload('small', `${mnts[name]}/run${r}`, FILES));
      }
    }
    const speed = (name: string, key: string) => files[name]!.map((x) => FILES / x[key]!);
    for (const [key, label, target] of [['save', `mount save ${fmt(FILES)} × 4 KiB`, 0.5], ['read', 'mount read them back', null], ['stat', 'mount stat them', null]] as const) {
      const c = compare(speed('sqlite', key), speed('pg', key));
      rows.push([`${label}, files/s`, fmt(c.sqlite), fmt(c.pg), ratio(c.ratio) + c.range, `median of ${runs} run${runs > 1 ? 's' : ''}`, target === null ? '—' : `≥ ${target}x`]);
      if (target !== null) found.push({ what: `mount saves on PostgreSQL ≥ ${target}x SQLite`, ok: c.ratio >= target, detail: `${ratio(c.ratio)}${c.range}: ${fmt(c.pg)} files/s against ${fmt(c.sqlite)}` });
    }
  } else {
    rows.push(['mount save', 'n/a', 'n/a', 'n/a', '/dev/fuse is missing', '≥ 0.5x']);
  }
  await sqlite.stop();
  // The small store's figures from a fresh server on the same database, as the large store's are:
  // both mounts start with nothing cached (the files just saved would otherwise be read from the
  // mount's content cache, the large store's from PostgreSQL).
  await pgSmall.stop();
  pgSmall = await started(smallUrl, pgSmall.server.adminKey);
  if (fuse) {
    const storeId = (await pgSmall.api.call<{ data: { id: string; name: string }[] }>('GET', '/v1/memory_stores?limit=100')).data.find((x) => x.name === 'bench files pg')!.id;
    log('engines: mount latencies, small PostgreSQL store');
    smallScale = await scaleFigures(`${await pgSmall.mountSession(storeId)}/run0/a`, quick);
  }
  log('engines: API rows, empty PostgreSQL store');
  const emptyApi = await apiFigures(pgSmall.api, await pgSmall.createStore('bench api empty'), null, '', quick);
  await pgSmall.stop();

  // 3. The large store on PostgreSQL, seeded in bulk, then served.
  log(`engines: seeding ${fmt(big.memories)} memories / ${fmt(big.versions)} versions on PostgreSQL`);
  const bigUrl = await cluster.createDatabase('mnemo_bench_big');
  const seeded = await seedPgBigStore(bigUrl, big.memories, big.versions, log);
  log(`engines: seeded in ${seeded.seconds.toFixed(1)} s`);
  const large = await startMnemo(undefined, { MNEMO_DATABASE_URL: bigUrl });
  stops.push(large.stop);
  let bigScale: Record<string, number> | null = null;
  if (fuse) {
    const mnt = await large.mountSession(seeded.storeId);
    log('engines: mount latencies, large PostgreSQL store');
    bigScale = await scaleFigures(mnt + middleDir(big.memories), quick);
  }
  log('engines: API rows, large PostgreSQL store');
  const bigApi = await apiFigures(large.api, seeded.storeId, seeded.memoryIds, middleDir(big.memories) + '/', quick);
  await large.stop();

  lines.push(
    '### PostgreSQL beside SQLite (same run, rounds alternating between two servers)\n',
    `PostgreSQL 15 on the bench's own cluster on this host, over a unix socket (${cluster.settings}; fsync and synchronous_commit at their defaults, unlike the test cluster). Mount saves commit with synchronous_commit = off on PostgreSQL and synchronous=NORMAL on SQLite (each engine's default mode, DESIGN §5); API writes are durable on both.\n`,
    table(['figure', 'SQLite', 'PostgreSQL', 'PostgreSQL / SQLite (range)', 'notes', 'target'], rows),
    '',
  );
  const scaleRows: string[][] = [];
  if (smallScale && bigScale) {
    for (const [label, k] of [['list a directory of 1,000', 'list'], ['stat (p50)', 'stat'], ['read 4 KiB (p50)', 'read'], ['save 4 KiB (p50)', 'save']] as const) {
      const r = bigScale[k]! / smallScale[k]!;
      found.push({ what: `PostgreSQL: mount ${label} at ${fmt(big.memories)} memories within 2x of the small store`, ok: r <= 2, detail: ratio(r) });
      scaleRows.push([`mount: ${label}, ms`, fmt(smallScale[k]!, 3), fmt(bigScale[k]!, 3), ratio(r)]);
    }
  }
  for (const row of apiRows(emptyApi, bigApi)) scaleRows.push([`API: ${row[0]}, ops/s (p50 / p99 ms)`, `${row[1]} (${row[2]} / ${row[3]})`, `${row[4]} (${row[5]} / ${row[6]})`, row[7]!]);
  for (const [k, e] of Object.entries(emptyApi)) {
    const b = bigApi[k];
    if (b) found.push({ what: `PostgreSQL: API ${k} at ${fmt(big.memories)} within 2x of empty`, ok: b.opsPerSec * 2 >= e.opsPerSec, detail: ratio(b.opsPerSec / e.opsPerSec) });
  }
  lines.push(
    `### PostgreSQL at ${fmt(big.memories)} memories / ${fmt(big.versions)} versions against an empty store (large / empty: time for the mount, ops/s for the API)\n`,
    table(['operation', 'empty store', 'large store', 'large / empty'], scaleRows),
    '',
    `The large store was seeded in bulk in ${seeded.seconds.toFixed(1)} s (multi-row INSERTs of ${fmt(10_000)} versions a transaction, test/bench/pg-bigstore.ts; of it VACUUM ANALYZE ${seeded.analyzeSeconds.toFixed(1)} s).\n`,
  );
  return { lines, found };
}

async function scaleFigures(dir: string, quick: boolean): Promise<Record<string, number>> {
  const reps: Record<string, number>[] = [];
  for (let i = 0; i < (quick ? 1 : 3); i++) reps.push(await workload('scale', dir, DIR_SIZE));
  const out: Record<string, number> = {};
  for (const k of Object.keys(reps[0]!)) out[k] = median(reps.map((r) => r[k]!));
  return out;
}
