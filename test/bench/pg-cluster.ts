/**
 * @module The bench's own throwaway PostgreSQL cluster (the engine rows, engines.ts): initdb as the
 * `postgres` user into a temp dir, served on a unix socket in that dir only (no TCP), stopped and
 * removed by `stop()`, which the bench calls at the end, pass or fail. Unlike the test cluster
 * (test/helpers/postgres-cluster.ts, fsync off), a bench cluster keeps `fsync = on` and the
 * default `synchronous_commit = on`: its figures include the WAL flush of every durable commit,
 * as a production server's would. `max_wal_size` is raised so that seeding the large store does
 * not checkpoint every few seconds; every other setting is PostgreSQL's default.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const BIN = '/usr/lib/postgresql/15/bin';
/** The socket's name only (.s.PGSQL.<port>): there is no TCP listener, so no port can clash. */
const PORT = 5432;

export interface BenchCluster {
  /** The server's settings that matter to the figures, for the report. */
  settings: string;
  /** A URL of its `postgres` database, to create and drop others from. */
  admin: string;
  /** A URL of a new, empty database on the cluster, made as the README asks of a mnemo database. */
  createDatabase(name: string): Promise<string>;
  stop(): void;
}

/** Why the engine rows cannot run here, or null when they can. */
export function clusterSkip(): string | null {
  if (!existsSync(join(BIN, 'initdb'))) return `PostgreSQL is not installed (${BIN}/initdb is missing; apt-get install postgresql)`;
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return 'not root: the bench starts its cluster as the postgres user (runuser)';
  return null;
}

export async function startBenchCluster(log: (s: string) => void): Promise<BenchCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-bench-pg-'));
  const owner = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString().trim());
  chownSync(dir, owner('-u'), owner('-g'));
  const data = join(dir, 'data');
  const asPostgres = (cmd: string, args: string[]) => execFileSync('runuser', ['-u', 'postgres', '--', join(BIN, cmd), ...args], { stdio: 'pipe' });
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    try {
      asPostgres('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
    } catch {
      // Not started, or already gone: the directory goes either way.
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // A bench interrupted before its cleanup still stops the cluster on the way out.
  process.once('exit', stop);
  try {
    asPostgres('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C']);
    asPostgres('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-w', '-o', `-c listen_addresses='' -k ${dir} -p ${PORT} -c max_wal_size=4GB`, 'start']);
  } catch (err) {
    stop();
    throw err;
  }
  const admin = `postgres://postgres@/postgres?host=${encodeURIComponent(dir)}&port=${PORT}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  let settings: string;
  try {
    const names = ['fsync', 'synchronous_commit', 'wal_sync_method', 'shared_buffers', 'max_wal_size', 'wal_writer_delay'];
    const parts: string[] = [];
    for (const n of names) parts.push(`${n}=${(await c.query<{ v: string }>('SELECT current_setting($1) AS v', [n])).rows[0]!.v}`);
    settings = parts.join(', ');
  } finally {
    await c.end();
  }
  log(`engines: PostgreSQL cluster on ${dir} (${settings})`);
  return {
    settings,
    admin,
    async createDatabase(name) {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C.utf8'`);
      } finally {
        await c.end();
      }
      return `postgres://postgres@/${name}?host=${encodeURIComponent(dir)}&port=${PORT}`;
    },
    stop,
  };
}
