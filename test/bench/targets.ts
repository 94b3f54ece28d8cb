/**
 * @module The bench's targets and child processes: a tmpfs directory, the ceiling filesystem, and
 * mnemo servers with session mounts. Every one returns a stop function that cleans up by PID and path.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT, startServer, type RunningServer } from '../helpers/server.js';
import { apiClient, metricSample, type Api } from './http.js';

export interface Target {
  name: string;
  dir: string;
  /** The process serving `dir`, when it is one of ours (the ceiling's child). */
  pid?: number;
  stop(): Promise<void>;
}

const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const WORKLOAD = join(REPO_ROOT, 'test', 'bench', 'workload.py');

/** Runs workload.py in a child process (never in a process serving a mount) and parses its JSON. */
export function workload(mode: 'full' | 'small' | 'save' | 'scale' | 'prose', dir: string, n: number, ...more: string[]): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, [WORKLOAD, mode, dir, String(n), ...more], { timeout: 300_000, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`workload ${mode} ${dir}: ${err.message}\n${stderr}`));
      resolve(JSON.parse(stdout) as Record<string, number>);
    });
  });
}

function isMountedAt(path: string): boolean {
  return readFileSync('/proc/mounts', 'utf8').split('\n').some((l) => l.split(' ')[1] === path);
}

function sh(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve) => execFile(cmd, args, { timeout: 10_000 }, () => resolve()));
}

async function unmountIfMounted(path: string): Promise<void> {
  if (!isMountedAt(path)) return;
  await sh('fusermount', ['-uz', path]);
  if (isMountedAt(path)) await sh('umount', ['-l', path]);
}

/** A directory on tmpfs: /dev/shm when it is one, else a tmpfs mounted for the bench (root only). */
export async function startTmpfs(): Promise<Target> {
  const shm = readFileSync('/proc/mounts', 'utf8').split('\n').some((l) => l.split(' ')[1] === '/dev/shm' && l.split(' ')[2] === 'tmpfs');
  if (shm) {
    const dir = mkdtempSync('/dev/shm/mnemo-bench-');
    return { name: 'tmpfs', dir, stop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const dir = mkdtempSync('/tmp/mnemo-bench-tmpfs-');
  await new Promise<void>((resolve, reject) =>
    execFile('mount', ['-t', 'tmpfs', '-o', 'size=1g', 'tmpfs', dir], (err) => (err ? reject(err) : resolve())),
  );
  return {
    name: 'tmpfs',
    dir,
    async stop() {
      await sh('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The in-memory fuse-native ceiling, served by its own child process. */
export async function startCeiling(): Promise<Target> {
  const base = mkdtempSync('/tmp/mnemo-bench-ceiling-');
  const mnt = join(base, 'mnt');
  const child = spawn(process.execPath, [join(REPO_ROOT, 'dist/test/bench/ceiling-fs.js'), mnt], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', () => resolve());
    void exited.then(() => reject(new Error(`ceiling-fs exited before it mounted:\n${err}`)));
    setTimeout(() => reject(new Error(`ceiling-fs did not mount in 15 s:\n${err}`)), 15_000).unref();
  });
  return {
    name: 'ceiling',
    dir: mnt,
    pid: child.pid!,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      await unmountIfMounted(mnt);
      rmSync(base, { recursive: true, force: true });
    },
  };
}

export interface Mnemo {
  server: RunningServer;
  api: Api;
  /** `fields`: more of the store's create body (a retention, say). */
  createStore(name: string, fields?: Record<string, unknown>): Promise<string>;
  /** Creates a session mounting `storeId` read-write; returns its host path. */
  mountSession(storeId: string): Promise<string>;
  stop(): Promise<void>;
}

/** A real mnemo server process on `dataDir` (a temp dir when omitted), with extra environment `env`. */
export async function startMnemo(dataDir?: string, env: Record<string, string> = {}): Promise<Mnemo> {
  const server = await startServer(dataDir === undefined ? { env } : { dataDir, env });
  const api = apiClient(server.url, server.adminKey);
  const mounts: string[] = [];
  return {
    server,
    api,
    async createStore(name, fields = {}) {
      return (await api.call<{ id: string }>('POST', '/v1/memory_stores', { name, ...fields })).id;
    },
    async mountSession(storeId) {
      const s = await api.call<{ resources: { host_path: string }[] }>('POST', '/v1/sessions', {
        resources: [{ type: 'memory_store', memory_store_id: storeId }],
      });
      const path = s.resources[0]!.host_path;
      mounts.push(path);
      return path;
    },
    async stop() {
      await server.stop();
      for (const m of mounts) await unmountIfMounted(m);
    },
  };
}

export function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/**
 * The server's main V8 heap, MiB, from its /metrics: what is committed and what is in use, garbage
 * not yet collected included. Beside the RSS it tells a run whose figure is high because a full
 * collection had not run yet (test/bench/README.md, stop 52) from one where the server holds more.
 */
export async function heapMiB(api: Api): Promise<{ committed: number; used: number }> {
  const text = await api.text('/metrics');
  const gauge = (name: string) => metricSample(text, name) / 1048576;
  return { committed: gauge('nodejs_heap_size_total_bytes'), used: gauge('nodejs_heap_size_used_bytes') };
}
