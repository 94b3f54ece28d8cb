/**
 * @module A throwaway PostgreSQL cluster: initdb as the `postgres` user into a temp dir, a unix
 * socket in that dir on a free port, fsync off (a test cluster, never a bench). The run's shared
 * cluster (postgres-cluster.ts) is one; a test that stops and starts PostgreSQL under a server
 * (test/api/postgres-outage.test.ts) makes its own, since the other files use the shared one.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const PG_BIN = '/usr/lib/postgresql/15/bin';

export interface Cluster {
  /** The `postgres` database over the unix socket (same dir and port across stop/start). */
  url: string;
  /** The same over TCP on 127.0.0.1 (same port), when started with `tcp`; else null. */
  tcpUrl: string | null;
  /** `pg_ctl stop` (`fast` by default: sessions are ended with 57P01, then the socket goes). */
  stop(mode?: 'fast' | 'immediate'): void;
  /** `pg_ctl start` again on the same port and socket dir, waiting until it accepts connections. */
  start(): void;
  /** Stops it if running and removes its directory; safe to call twice. */
  remove(): void;
}

/** Why no cluster can be made here (not root, no initdb), or null when one can. */
export function clusterUnavailable(): string | null {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!existsSync(join(PG_BIN, 'initdb'))) return `no ${PG_BIN}/initdb (apt-get install postgresql)`;
  if (!isRoot) return 'initdb must run as the postgres user: run the tests as root';
  return null;
}

/**
 * `tcp`: listen on 127.0.0.1 too. A client that drops a TCP connection is heard by the backend
 * later than one that drops a unix socket: its first write after the drop still succeeds.
 */
export async function startCluster(options: { tcp?: boolean } = {}): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-pg-'));
  chownSync(dir, uid('postgres'), gid('postgres'));
  const data = join(dir, 'data');
  const port = await freePort();
  // In a session of its own (setsid): a signal sent to the test run's process group while the
  // cluster stops (postgres-cluster.ts) must not kill pg_ctl half way.
  const asPostgres = (cmd: string, args: string[]) => execFileSync('setsid', ['--wait', 'runuser', '-u', 'postgres', '--', join(PG_BIN, cmd), ...args], { stdio: 'pipe' });
  const start = () =>
    void asPostgres('pg_ctl', [
      '-D', data, '-l', join(dir, 'log'), '-w',
      '-o', `-c listen_addresses='${options.tcp ? '127.0.0.1' : ''}' -k ${dir} -p ${port} -c fsync=off -c max_connections=200`, 'start',
    ]);
  const stop = (mode: 'fast' | 'immediate' = 'fast') => void asPostgres('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    try {
      stop();
    } catch {
      // Not started, or already stopped: the directory goes either way.
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    asPostgres('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
    start();
  } catch (err) {
    remove();
    throw err;
  }
  const tcpUrl = options.tcp ? `postgres://postgres@127.0.0.1:${port}/postgres` : null;
  return { url: `postgres://postgres@/postgres?host=${encodeURIComponent(dir)}&port=${port}`, tcpUrl, stop, start, remove };
}

function uid(user: string): number {
  return Number(execFileSync('id', ['-u', user]).toString().trim());
}

function gid(user: string): number {
  return Number(execFileSync('id', ['-g', user]).toString().trim());
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}
