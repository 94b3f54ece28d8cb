/**
 * @module The bench's cross-host propagation figure (issue 14): two real servers (node ids host-a
 * and host-b, their own data directories and mount roots) on one PostgreSQL database, a session
 * on each over one store; a file is saved through host A's mount, and host B's mount is read
 * until the new content shows. The delay is counted from the save's close() returning (the commit)
 * to the first read on B that shows it (target: p99 ≤ 1 s). Every other round stats the file on B
 * instead, until its size is the new one: no open refreshes it there, so that delay is the kernel's
 * entry being dropped on B's notice (fs/writes-elsewhere.ts), or its 1 s timeout.
 * `BENCH_ONLY=crosshost npm run bench` runs it alone.
 *
 * PostgreSQL: MNEMO_TEST_DATABASE_URL (a database to create a bench database from), else, as root
 * with Debian's postgresql, the engine rows' throwaway cluster (pg-cluster.ts: fsync on,
 * synchronous_commit on), stopped at the end. Without either, the
 * section says why and is skipped.
 */
import { randomBytes } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pick } from './http.js';
import { clusterSkip, startBenchCluster } from './pg-cluster.js';
import { onAdmin, withDatabase } from '../helpers/pg-url.js';
import { fmt, table, type Check } from './report.js';
import { startMnemo, type Mnemo } from './targets.js';

/** A PostgreSQL to create the bench's database on, and how to let it go; or why there is none. */
async function postgres(log: (s: string) => void): Promise<{ url: string; settings: string; stop: () => void } | { skip: string }> {
  const given = process.env['MNEMO_TEST_DATABASE_URL'];
  if (given) return { url: given, settings: "MNEMO_TEST_DATABASE_URL's server, as configured", stop: () => {} };
  const skip = clusterSkip();
  if (skip) return { skip: `no PostgreSQL (set MNEMO_TEST_DATABASE_URL, or): ${skip}` };
  log('crosshost: starting a throwaway PostgreSQL cluster');
  // The engine rows' cluster (pg-cluster.ts): fsync and synchronous_commit on, as in production.
  const cluster = await startBenchCluster(log);
  return { url: cluster.admin, settings: cluster.settings, stop: cluster.stop };
}

export async function crossHostSection(quick: boolean, log: (s: string) => void): Promise<{ lines: string[]; found: Check[] }> {
  const heading = '### Cross-host propagation (ms; two servers on one PostgreSQL: a save through host A\'s mount → its content read through host B\'s mount)\n';
  const db = await postgres(log);
  if ('skip' in db) return { lines: [heading, `Skipped: ${db.skip}.\n`], found: [] };
  const name = `mnemo_bench_xhost_${randomBytes(5).toString('hex')}`;
  await onAdmin(db.url, (c) => c.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C.utf8'`));
  const url = withDatabase(db.url, name);
  const adminKey = `mnemo-bench-${randomBytes(18).toString('hex')}`;
  const hosts: Mnemo[] = [];
  try {
    for (const node of ['host-a', 'host-b']) {
      hosts.push(await startMnemo(undefined, { MNEMO_DATABASE_URL: url, MNEMO_NODE_ID: node, MNEMO_ADMIN_KEY: adminKey }));
    }
    const [a, b] = hosts as [Mnemo, Mnemo];
    const storeId = await a.createStore('bench cross-host');
    const dirA = await a.mountSession(storeId);
    const dirB = await b.mountSession(storeId);
    const rounds = quick ? 50 : 300;
    log(`crosshost: ${2 * rounds} saves on A, each read back or stat'ed on B`);
    const delays: number[] = [];
    const statDelays: number[] = [];
    let reads = 0;
    let stats = 0;
    for (let i = 0; i < 2 * rounds; i++) {
      // Ten paths: the first ten saves create files, the rest replace content B has seen before.
      // Each save of a path changes its size (the padding alternates), so a stat can tell it apart.
      const file = `p${i % 10}.md`;
      const content = `round ${String(i).padStart(6, '0')}\n${'.'.repeat(Math.floor(i / 10) % 2 ? 8 : 0)}`;
      await writeFile(join(dirA, file), content);
      const committed = performance.now();
      const byStat = i % 2 === 1 && i >= 10;
      for (;;) {
        if (byStat) {
          stats += 1;
          const size = await stat(join(dirB, file)).then((st) => st.size, () => -1);
          if (size === Buffer.byteLength(content)) break;
        } else {
          reads += 1;
          const seen = await readFile(join(dirB, file), 'utf8').catch(() => null);
          if (seen === content) break;
        }
        if (performance.now() - committed > 10_000) throw new Error(`host B did not show ${file} = ${JSON.stringify(content)} within 10 s`);
        await new Promise((r) => setTimeout(r, 1));
      }
      (byStat ? statDelays : delays).push(performance.now() - committed);
    }
    delays.sort((x, y) => x - y);
    statDelays.sort((x, y) => x - y);
    const p50 = pick(delays, 0.5);
    const p99 = pick(delays, 0.99);
    const row = (what: string, d: number[], tries: number) => [what, fmt(d.length), fmt(pick(d, 0.5), 2), fmt(pick(d, 0.99), 2), fmt(d[d.length - 1]!, 2), fmt(tries / d.length, 1)];
    return {
      lines: [
        heading,
        table(['seen on B by', 'saves', 'p50', 'p99', 'max', 'tries on B per save'], [row('read (open)', delays, reads), row('stat (size)', statDelays, stats)]),
        '',
        `Counted from the save's close() on A to the first read (or stat) on B that shows it (B is tried every ~1 ms); half the rounds read, the other half stat a file B has seen before, whose entry B's kernel holds. PostgreSQL: ${db.settings}.\n`,
      ],
      found: [{ what: 'cross-host propagation (A mount save → B mount read) p99 ≤ 1 s', ok: p99 <= 1000, detail: `p50 ${fmt(p50, 2)} ms, p99 ${fmt(p99, 2)} ms` }],
    };
  } finally {
    for (const h of hosts) await h.stop();
    await onAdmin(db.url, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => {});
    db.stop();
  }
}

