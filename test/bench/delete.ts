/**
 * @module The bench's store-deletion figure: deleting a served SQLite store of 20,000 memories of
 * 4 KiB over the API, with a mount of another store stat-ing files it has never looked at, and the
 * server's event-loop delay, against the same while idle. The request only hides the store; the
 * upkeep removes its rows in short steps (src/storage/sqlite/store-purge.ts), where one transaction
 * used to hold every mount and request for seconds. `BENCH_ONLY=delete npm run bench` runs it alone.
 */
import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ImportedWrite } from '../../src/storage/sqlite/bulk.js';
import { makeTempDir } from '../helpers/server.js';
import { openBenchEngine } from './engine.js';
import { idleRun, keptStore, statsUntil } from './beside.js';
import { pick } from './http.js';
import { fmt, table, type Check } from './report.js';
import { startMnemo, type Mnemo } from './targets.js';
import { clusterSkip, startBenchCluster } from './pg-cluster.js';
import { seedPgBigStore } from './pg-bigstore.js';
import pg from 'pg';

const MEMORIES = 20_000;

/** A store of `n` memories of 4 KiB under /d/, written straight into the file before the server starts. */
export async function fillStore(file: string, n: number): Promise<string> {
  const { storage, service, caller, storeId } = await openBenchEngine(file, 'bench-loader', 'bench doomed', 'deleted by npm run bench');
  try {
    const line = (i: number) => `memory ${i}: the agent noted something worth keeping about task ${i % 97}\n`;
    for (let first = 0; first < n; first += 1000) {
      const writes: ImportedWrite[] = [];
      for (let i = first; i < Math.min(n, first + 1000); i++) {
        writes.push({ memoryId: service.ids('memory'), operation: 'created', path: `/d/${i}.md`, content: line(i).repeat(60).slice(0, 4096), versionId: service.ids('version'), now: service.clock(), actor: caller.actor });
      }
      storage.importWrites(storeId, writes);
    }
    return storeId;
  } finally {
    await storage.close();
  }
}

export async function deleteSection(quick: boolean, log: (s: string) => void): Promise<{ lines: string[]; found: Check[] }> {
  const dir = makeTempDir('mnemo-bench-delete-');
  let m: Mnemo | null = null;
  const file = join(dir, 'mnemo.db');
  const db: { handle: Database.Database | null } = { handle: null };
  try {
    const memories = quick ? 5_000 : MEMORIES;
    const doomed = await fillStore(file, memories);
    log(`delete: ${fmt(memories)} memories of 4 KiB written`);
    m = await startMnemo(dir);
    const mnt = await m.mountSession(await keptStore(m));
    const idle = await idleRun(m, mnt);

    db.handle = new Database(file, { readonly: true });
    const left = db.handle.prepare('SELECT count(*) FROM stores WHERE id = ?').pluck();
    const started = performance.now();
    let requestMs: number | null = null;
    const request = m.api.call('DELETE', `/v1/memory_stores/${doomed}`).then(() => {
      requestMs = performance.now() - started;
    });
    // Stats from the request on, until it has answered and the store's last row has gone: a
    // deletion that held the thread shows in both.
    const busy = await statsUntil(m, mnt, () => {
      if (performance.now() - started > 600_000) throw new Error('the deleted store was not removed within 10 minutes');
      return requestMs !== null && (left.get(doomed) as number) === 0;
    });
    await request;
    const purgeSeconds = (performance.now() - started) / 1000;
    log(`delete: request ${fmt(requestMs!, 1)} ms, rows gone after ${fmt(purgeSeconds, 1)} s`);

    const rows = [
      ['idle', '—', '—', fmt(pick(idle.stats, 0.5), 2), fmt(pick(idle.stats, 0.99), 2), fmt(idle.loop.p99, 1), fmt(idle.loop.max, 1)],
      [`deleting ${fmt(memories)} memories`, fmt(requestMs!, 1), fmt(purgeSeconds, 1), fmt(pick(busy.stats, 0.5), 2), fmt(pick(busy.stats, 0.99), 2), fmt(busy.loop.p99, 1), fmt(busy.loop.max, 1)],
    ];
    const found: Check[] = [
      { what: `mount stat p99 < 20 ms while a deleted store of ${fmt(memories)} memories of 4 KiB is removed`, ok: pick(busy.stats, 0.99) < 20, detail: `${fmt(pick(busy.stats, 0.99), 2)} ms (idle ${fmt(pick(idle.stats, 0.99), 2)} ms; the request ${fmt(requestMs!, 1)} ms)` },
    ];
    const onPg = await postgresDeletion(quick, log);
    return {
      lines: [
        `### Store deletion (SQLite: a served store of ${fmt(memories)} memories of 4 KiB deleted over the API; a mount of another store stat-ing, in ms)\n`,
        table(['phase', 'DELETE ms', 'rows gone s', 'stat p50', 'stat p99', 'loop delay p99', 'loop delay max'], rows),
        '',
        `The request hides the store; the upkeep removes its rows in short steps. Before that, one transaction took the index and the rows: about 12 s for 20,000 such memories on the 2-core host, the serving thread held throughout.\n`,
        ...onPg.lines,
      ],
      found: [...found, ...onPg.found],
    };
  } finally {
    db.handle?.close();
    if (m) await m.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The same on PostgreSQL (postgres/schema/v14.ts): a store seeded in bulk (pg-bigstore.ts) deleted
 * over the API of a server on it; the rows are counted on the database until they are gone. The
 * request used to delete them all in one transaction (58.5 s for 1,000,000 versions, against the
 * adapter's 60 s statement limit).
 */
async function postgresDeletion(quick: boolean, log: (s: string) => void): Promise<{ lines: string[]; found: Check[] }> {
  const skip = clusterSkip();
  if (skip !== null) return { lines: [`PostgreSQL store deletion skipped: ${skip}.\n`], found: [] };
  const cluster = await startBenchCluster(log);
  let m: Mnemo | null = null;
  try {
    const url = await cluster.createDatabase('mnemo_bench_delete');
    const [memories, versions] = quick ? [2_000, 20_000] : [10_000, 100_000];
    const big = await seedPgBigStore(url, memories, versions, log);
    m = await startMnemo(undefined, { MNEMO_DATABASE_URL: url });
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const left = async () => Number((await db.query('SELECT (SELECT count(*) FROM stores WHERE id = $1) + (SELECT count(*) FROM versions WHERE store_id = $1) AS n', [big.storeId])).rows[0].n);
      const started = performance.now();
      await m.api.call('DELETE', `/v1/memory_stores/${big.storeId}`);
      const requestMs = performance.now() - started;
      while ((await left()) > 0) {
        if (performance.now() - started > 600_000) throw new Error('the deleted PostgreSQL store was not removed within 10 minutes');
        await new Promise((r) => setTimeout(r, 100));
      }
      const goneSeconds = (performance.now() - started) / 1000;
      log(`delete (PostgreSQL): request ${fmt(requestMs, 1)} ms, rows gone after ${fmt(goneSeconds, 1)} s`);
      return {
        lines: [
          `PostgreSQL, a store of ${fmt(memories)} memories and ${fmt(versions)} versions (seeded in bulk): the DELETE answered in ${fmt(requestMs, 1)} ms; its rows were gone ${fmt(goneSeconds, 1)} s later (the servers' upkeep, a slice of rows per step).\n`,
        ],
        found: [
          { what: `PostgreSQL: the DELETE of a store of ${fmt(versions)} versions answers within 1 s (its rows go afterwards)`, ok: requestMs < 1000, detail: `${fmt(requestMs, 1)} ms; rows gone after ${fmt(goneSeconds, 1)} s` },
        ],
      };
    } finally {
      await db.end();
    }
  } finally {
    if (m) await m.stop();
    cluster.stop();
  }
}
