/**
 * @module vitest globalSetup: one throwaway PostgreSQL cluster per test run, for the PostgreSQL
 * adapter's tests (test/helpers/postgres.ts). CI exports MNEMO_TEST_DATABASE_URL (.ci/run starts
 * the cluster); otherwise, as root with Debian's postgresql installed, this starts one: initdb as the
 * `postgres` user into a temp dir, a unix socket in that dir on a free port, fsync off (a test
 * cluster, never a bench), stopped and removed at the end. Without either, the PG tests skip.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A URL of a database on the test cluster (the one to CREATE DATABASE from), or why there is none. */
    postgres: { url: string } | { skip: string };
  }
}

const BIN = '/usr/lib/postgresql/15/bin';

export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  const given = process.env['MNEMO_TEST_DATABASE_URL'];
  if (given) {
    project.provide('postgres', { url: given });
    return undefined;
  }
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!existsSync(join(BIN, 'initdb')) || !isRoot) {
    const why = process.env['CI']
      ? 'CI must set MNEMO_TEST_DATABASE_URL (.ci/run starts a cluster)'
      : `no PostgreSQL: set MNEMO_TEST_DATABASE_URL, or run as root with ${BIN}/initdb installed (apt-get install postgresql)`;
    if (process.env['CI']) throw new Error(why);
    project.provide('postgres', { skip: why });
    return undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-pg-'));
  chownSync(dir, uid('postgres'), gid('postgres'));
  const data = join(dir, 'data');
  const port = await freePort();
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
  // A run that is interrupted (Ctrl-C, a timeout's SIGTERM) skips the teardown: stop the cluster
  // on the way out anyway, then let the signal do what it would have done.
  process.once('exit', stop);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      stop();
      process.kill(process.pid, sig);
    });
  }
  try {
    asPostgres('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
    asPostgres('pg_ctl', [
      '-D', data, '-l', join(dir, 'log'), '-w',
      '-o', `-c listen_addresses='' -k ${dir} -p ${port} -c fsync=off -c max_connections=200`, 'start',
    ]);
  } catch (err) {
    stop();
    throw err;
  }
  project.provide('postgres', { url: `postgres://postgres@/postgres?host=${encodeURIComponent(dir)}&port=${port}` });
  return stop;
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
