/**
 * @module The bench's directory-move figure: `mv` of a directory of 20,000 memories of 4 KiB in a
 * served SQLite store's mount, with a mount of another store stat-ing files it has never looked at,
 * and the server's event-loop delay, against the same while idle. The move is one transaction on a
 * writer thread's connection (src/storage/sqlite/readers.ts), where on the serving thread it held
 * every mount and request for seconds; then the same mv on a server on PostgreSQL, against it.
 * `BENCH_ONLY=move npm run bench` runs it alone.
 */
import { execFile } from 'node:child_process';
import pg from 'pg';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/server.js';
import { idleRun, keptStore, statsUntil, type StatRun } from './beside.js';
import { fillStore } from './delete.js';
import { pick } from './http.js';
import { fmt, table, type Check } from './report.js';
import { startMnemo, type Mnemo } from './targets.js';
import { searchSettled } from './api.js';
import { clusterSkip, startBenchCluster } from './pg-cluster.js';
import { newId } from '../../src/service/ids.js';
import { openPostgresStorage } from '../../src/storage/postgres/open.js';

const MEMORIES = 20_000;

export async function moveSection(quick: boolean, log: (s: string) => void): Promise<{ lines: string[]; found: Check[] }> {
  const dir = makeTempDir('mnemo-bench-move-');
  let m: Mnemo | null = null;
  try {
    const memories = quick ? 5_000 : MEMORIES;
    const moved = await fillStore(join(dir, 'mnemo.db'), memories);
    log(`move: ${fmt(memories)} memories of 4 KiB written`);
    m = await startMnemo(dir);
    const kept = await keptStore(m);
    // The seeded store's search indexing, which the server does in short turns at its start: the
    // move is measured in a settled store, on both engines.
    await new Promise((resolve) => setTimeout(resolve, quick ? 3000 : 10_000));
    await searchSettled(m.api, log);
    const aside = await measureMove(m, moved, kept, 'd', 'e');
    log(`move: mv took ${fmt(aside.moveMs, 1)} ms`);
    // The baseline in the same run: the same move back, made on the serving thread.
    const adminKey = m.server.adminKey;
    await m.stop();
    m = await startMnemo(dir, { MNEMO_READER_THREADS: '0', MNEMO_ADMIN_KEY: adminKey });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const inline = await measureMove(m, moved, kept, 'e', 'd');
    log(`move: mv on the serving thread took ${fmt(inline.moveMs, 1)} ms`);

    const row = (label: string, r: StatRun, mv: string) => [label, mv, fmt(pick(r.stats, 0.5), 2), fmt(pick(r.stats, 0.99), 2), fmt(r.loop.p99, 1), fmt(r.loop.max, 1)];
    const rows = [
      row('idle', aside.idle, '—'),
      row(`moving ${fmt(memories)} memories`, aside.busy, fmt(aside.moveMs, 1)),
      row(`the same move on the serving thread (MNEMO_READER_THREADS=0)`, inline.busy, fmt(inline.moveMs, 1)),
    ];
    await m.stop();
    m = null;
    const onPg = await postgresMove(memories, aside.moveMs, log);
    const p99 = pick(aside.busy.stats, 0.99);
    const found: Check[] = [
      { what: `mount stat p99 < 20 ms while a directory of ${fmt(memories)} memories of 4 KiB is moved`, ok: p99 < 20, detail: `${fmt(p99, 2)} ms (idle ${fmt(pick(aside.idle.stats, 0.99), 2)} ms; on the serving thread ${fmt(pick(inline.busy.stats, 0.99), 2)} ms; mv ${fmt(aside.moveMs, 1)} ms)` },
    ];
    return {
      lines: [
        `### Directory move (SQLite: mv of a directory of ${fmt(memories)} memories of 4 KiB in a served store's mount; a mount of another store stat-ing, in ms)\n`,
        table(['phase', 'mv ms', 'stat p50', 'stat p99', 'loop delay p99', 'loop delay max'], rows),
        '',
        `The move is one transaction on the writer thread's connection; the serving connection's writers wait for it, its reads do not. The last row is the same move back, on a server started on the same data with MNEMO_READER_THREADS=0: the move runs on the serving thread and every stat waits for it.\n`,
        ...onPg.lines,
      ],
      found: [...found, ...onPg.found],
    };
  } finally {
    if (m) await m.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The same `mv` on a server on PostgreSQL (a bench cluster), against the SQLite move's time in this
 * run: one transaction under the store's row lock, a page of memories per call (postgres/schema/v16.ts;
 * one statement per table since v19.ts). Before, each memory took its own round trip and moved the
 * store's commit counter on its own, and the cost of each grew with the number moved before it in
 * the transaction.
 */
async function postgresMove(memories: number, sqliteMs: number, log: (s: string) => void): Promise<{ lines: string[]; found: Check[] }> {
  const skip = clusterSkip();
  if (skip !== null) return { lines: [`PostgreSQL directory move skipped: ${skip}.\n`], found: [] };
  const cluster = await startBenchCluster(log);
  let m: Mnemo | null = null;
  try {
    const url = await cluster.createDatabase('mnemo_bench_move');
    m = await startMnemo(undefined, { MNEMO_DATABASE_URL: url });
    const moved = await m.createStore('bench moved');
    const storage = await openPostgresStorage(url);
    try {
      const line = (i: number) => `memory ${i}: the agent noted something worth keeping about task ${i % 97}\n`;
      const actor = { type: 'api_actor' as const, apiKeyId: 'bench-loader' };
      for (let first = 0; first < memories; first += 500) {
        await storage.atomic(async (tx) => {
          for (let i = first; i < Math.min(memories, first + 500); i++) {
            await tx.createMemory({ actor, now: new Date().toISOString(), versionId: newId('version'), storeId: moved, memoryId: newId('memory'), path: `/d/${i}.md`, content: line(i).repeat(60).slice(0, 4096) });
          }
        });
      }
    } finally {
      await storage.close();
    }
    const kept = await keptStore(m);
    // As on SQLite: once the seed is indexed, and once the server's upkeep has tidied what the seed
    // and its indexing left (postgres/vacuum.ts: each indexed memory and text row is rewritten, each
    // write rewrites its store's rows; until a vacuum the move's pages wade through those dead rows:
    // 3.2–4.1 s here, 1.26 s after one; test/bench/README.md, stops 47 and 48).
    await searchSettled(m.api, log);
    await vacuumed(url, log);
    const r = await measureMove(m, moved, kept, 'd', 'e');
    log(`move: mv on PostgreSQL took ${fmt(r.moveMs, 1)} ms`);
    const ratio = r.moveMs / sqliteMs;
    return {
      lines: [
        `PostgreSQL, the same mv of ${fmt(memories)} memories on a server on a bench cluster: ${fmt(r.moveMs, 1)} ms (${fmt((r.moveMs / memories) * 1000, 0)} µs a memory), ${fmt(ratio, 2)}x the SQLite move's time in this run; the other mount's stat p99 ${fmt(pick(r.busy.stats, 0.99), 2)} ms (idle ${fmt(pick(r.idle.stats, 0.99), 2)}). Writers to the moved store wait for its row lock that long.\n`,
      ],
      found: [{ what: `PostgreSQL directory move of ${fmt(memories)} memories within 3x of SQLite's`, ok: ratio <= 3, detail: `${fmt(ratio, 2)}x: ${fmt(r.moveMs, 1)} ms against ${fmt(sqliteMs, 1)} ms` }],
    };
  } finally {
    if (m) await m.stop();
    cluster.stop();
  }
}

/** Waits (up to 30 s) until the seeded tables the upkeep tidies have been vacuumed once. */
async function vacuumed(url: string, log: (line: string) => void): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const started = performance.now();
    for (;;) {
      const r = await c.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_user_tables WHERE relname IN ('memories', 'contents') AND vacuum_count > 0");
      if (r.rows[0]!.n === 2) return;
      if (performance.now() - started > 30_000) return log('bench: the upkeep did not vacuum the seeded tables within 30 s; measuring anyway');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await c.end();
  }
}

/**
 * `mv from to` in a session mount of `moved` while a session mount of `kept` stats files it has never
 * looked at, until mv exits; and the same stats and loop delay idle, before it.
 */
async function measureMove(m: Mnemo, moved: string, kept: string, from: string, to: string): Promise<{ idle: StatRun; busy: StatRun; moveMs: number }> {
  const mover = await m.mountSession(moved);
  const mnt = await m.mountSession(kept);
  const idle = await idleRun(m, mnt);
  const started = performance.now();
  let moveMs: number | null = null;
  const move = new Promise<void>((resolve, reject) =>
    execFile('mv', [join(mover, from), join(mover, to)], (err) => {
      moveMs = performance.now() - started;
      if (err) reject(err);
      else resolve();
    }),
  );
  const busy = await statsUntil(m, mnt, () => moveMs !== null);
  await move;
  return { idle, busy, moveMs: moveMs! };
}
