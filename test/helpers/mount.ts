/**
 * @module Mount tests' helpers: start a mount host child process (mount-host.ts) over a real SQLite
 * file, run bash/python/node children against the mount, and clean up by PID and path.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { onTestFinished } from 'vitest';
import type { MemoryVersion } from '../../src/domain/types.js';
import { tmpDir } from './tmp.js';

export const FUSE_AVAILABLE = existsSync('/dev/fuse');
export const NO_FUSE_REASON = '/dev/fuse is missing: FUSE mount tests are skipped (install fuse3 and libfuse3-dev and run with /dev/fuse)';

const root = new URL('../..', import.meta.url).pathname;
const HOST = join(root, 'dist/test/helpers/mount-host.js');

export type Tree = Record<string, string>;

export interface MountHost {
  /** The mount point. */
  mnt: string;
  dir: string;
  db: string;
  storeId: string;
  sessionId: string;
  /** The host holds a mount's writes back in batches (it owns the data dir: MountOptions.holdMs). */
  writeBehind: boolean;
  pid: number;
  /** An API-side service call in the host (create, update, rename, delete, archive, deleteStore, memory, advanceClock, redact, keepLast, prune, mountAsOf, unmount). */
  call<T = unknown>(op: string, args?: Record<string, unknown>): Promise<T>;
  /** Every version of the store, oldest first. */
  versions(): Promise<MemoryVersion[]>;
  /** The versions written through the mount, as "operation path" lines, oldest first. */
  mountLog(): Promise<string[]>;
  tree(): Promise<Tree>;
  stderr(): string;
  /** How the host process ended, or null while it runs. */
  exit(): { code: number | null; signal: NodeJS.Signals | null } | null;
  /** SIGTERM, then SIGKILL if the host has not exited after STOP_MS; unmounts what it left mounted. */
  stop(): Promise<void>;
}

/**
 * How long a host has to exit after SIGTERM before it is killed: a clean stop (unmounts, the last
 * sync) is well under a second when idle, but can take seconds on a loaded CI host.
 */
const STOP_MS = 10_000;

export interface MountOptions {
  seed?: Tree;
  readOnly?: boolean;
  /** Reuse a data dir (and its db) from an earlier host. */
  dir?: string;
  store?: string;
  /** Mount point name inside the data dir (two hosts can share one db). */
  mountName?: string;
  session?: string;
  /** Extra mounts of the same store served by the same host: mount name → session id. */
  also?: Record<string, string>;
  /** MNEMO_MOUNT_SYNC for the host: fsync (the default) or close. */
  mountSync?: 'fsync' | 'close';
  /** Serve on a clock that stands still until `call('advanceClock', { ms })` moves it. */
  movableClock?: boolean;
  /**
   * How long a batch of mount writes stays open before it commits (sqlite/write-behind.ts; the
   * host's default is the server's), the background WAL sync held back as long; 0: every write
   * commits at once. Only the first host on a data dir holds writes back.
   */
  holdMs?: number;
  /** The kernel's entry and attribute timeout in seconds (MNEMO_MOUNT_CACHE_SECONDS; default 1). */
  cacheSeconds?: number;
  /** Extra environment for the host process. */
  env?: Record<string, string>;
  /** After how many ms a request the mount's handlers have not answered is logged (default 10 s). */
  unansweredMs?: number;
}

export async function startMount(opts: MountOptions = {}): Promise<MountHost> {
  const dir = opts.dir ?? tmpDir('mnemo-fs-');
  const db = join(dir, 'mnemo.db');
  const mnt = join(dir, opts.mountName ?? 'mnt');
  const args = [HOST, '--db', db, '--mount', mnt];
  if (opts.seed) args.push('--seed', JSON.stringify(opts.seed));
  if (opts.readOnly) args.push('--read-only');
  if (opts.store) args.push('--store', opts.store);
  if (opts.session) args.push('--session', opts.session);
  if (opts.mountSync) args.push('--mount-sync', opts.mountSync);
  if (opts.movableClock) args.push('--movable-clock');
  if (opts.holdMs !== undefined) args.push('--hold-ms', String(opts.holdMs));
  if (opts.cacheSeconds !== undefined) args.push('--cache-seconds', String(opts.cacheSeconds));
  if (opts.unansweredMs !== undefined) args.push('--unanswered-ms', String(opts.unansweredMs));
  for (const [name, session] of Object.entries(opts.also ?? {})) args.push('--also', `${join(dir, name)}=${session}`);
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...opts.env } });
  child.stdin.on('error', () => {});
  let err = '';
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const lines = createInterface({ input: child.stdout });
  const pending = new Map<number, (msg: { ok: boolean; result: unknown; error: string }) => void>();
  let ready: (v: { storeId: string; sessionId: string; writeBehind?: boolean }) => void;
  const readyP = new Promise<{ storeId: string; sessionId: string; writeBehind?: boolean }>((r) => (ready = r));
  lines.on('line', (line) => {
    const msg = JSON.parse(line) as { ready?: boolean; id?: number; storeId: string; sessionId: string; ok: boolean; result: unknown; error: string };
    if (msg.ready) ready(msg);
    else if (msg.id !== undefined) pending.get(msg.id)?.(msg);
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    await stopHost(child, exited, mnt);
    for (const name of Object.keys(opts.also ?? {})) await stopHost(child, exited, join(dir, name));
  };
  onTestFinished(stop);
  const info = await Promise.race([
    readyP,
    exited.then(() => Promise.reject(new Error(`mount host exited before it was ready:\n${err}`))),
    sleep(15_000).then(() => Promise.reject(new Error(`mount host not ready after 15 s:\n${err}`))),
  ]);
  let nextId = 1;
  const call = <T>(op: string, a: Record<string, unknown> = {}) =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, (m) => (m.ok ? resolve(m.result as T) : reject(new Error(m.error))));
      child.stdin.write(JSON.stringify({ id, op, ...a }) + '\n');
    });
  const versions = () => call<MemoryVersion[]>('versions');
  return {
    mnt,
    dir,
    db,
    storeId: info.storeId,
    sessionId: info.sessionId,
    writeBehind: info.writeBehind === true,
    pid: child.pid!,
    call,
    versions,
    async mountLog() {
      return (await versions()).filter((v) => v.createdBy.type === 'session_actor').map((v) => `${v.operation} ${v.path}`);
    },
    tree: () => call<Tree>('tree'),
    stderr: () => err,
    exit: () => (child.exitCode === null && child.signalCode === null ? null : { code: child.exitCode, signal: child.signalCode }),
    stop,
  };
}

async function stopHost(child: ChildProcessWithoutNullStreams, exited: Promise<void>, mnt: string): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    const done = await Promise.race([exited.then(() => true), sleep(STOP_MS).then(() => false)]);
    if (!done) {
      child.kill('SIGKILL');
      await exited;
    }
  }
  if (isMounted(mnt)) await run('fusermount', ['-uz', mnt]).catch(() => run('umount', ['-l', mnt]));
}

/** Where FUSE file systems are mounted now (octal-escaped spaces read back as spaces). */
export function mountedPaths(): string[] {
  return readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .map((l) => l.split(' '))
    .filter((f) => f[2]?.startsWith('fuse'))
    .map((f) => f[1]!.replace(/\\040/g, ' '));
}

export function isMounted(path: string): boolean {
  return readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[1] === path);
}

/** How long run() lets a child run by default. */
export const RUN_MS = 50_000;

export interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command as a child process (never in this process: see notes §1.5), killed after
 * `timeoutMs` (RUN_MS by default: a hung child still ends, with what it printed, before the test's
 * own 60 s timeout; 20 s killed a shell writing 1,200 files through a mount on a loaded host).
 */
export function run(cmd: string, args: string[], opts: { cwd?: string; input?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? RUN_MS);
    child.on('error', reject);
    // A child that exits before reading its stdin must not crash the test process with EPIPE.
    child.stdin.on('error', () => {});
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}

export function sh(script: string, cwd: string, input?: string): Promise<Result> {
  return run('bash', ['-c', script], { cwd, ...(input === undefined ? {} : { input }) });
}

export function py(script: string, cwd: string, args: string[] = [], timeoutMs?: number): Promise<Result> {
  return run('python3', ['-c', script, ...args], { cwd, ...(timeoutMs ? { timeoutMs } : {}) });
}

/**
 * Runs python `steps` (name → statements) in order in `cwd` and returns name → "ok" or the errno
 * name of the OSError that stopped that step.
 */
export async function outcomes(cwd: string, steps: [string, string][]): Promise<Record<string, string>> {
  const body = steps
    .map(([name, stmt]) => `try:\n    ${stmt.split('\n').join('\n    ')}\n    out[${JSON.stringify(name)}] = 'ok'\nexcept OSError as e:\n    out[${JSON.stringify(name)}] = errno.errorcode.get(e.errno, str(e.errno))`)
    .join('\n');
  const r = await py(`import errno, json, os\nout = {}\n${body}\nprint(json.dumps(out))`, cwd);
  if (r.code !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as Record<string, string>;
}

/** The pid of the helper that unmounts the mounts of process `pid` should it die (fs/binding/unmount-guard.ts). */
export async function unmountHelperOf(pid: number): Promise<number> {
  const found = await sh(`pgrep -P ${pid} -f mnemo-unmount-guard`, '/');
  if (!/^\d+$/.test(found.stdout.trim())) throw new Error(`no unmount helper under pid ${pid}: ${JSON.stringify(found.stdout)}`);
  return Number(found.stdout.trim());
}

/**
 * How long `eventually` retries by default: a deadline for something that must happen, not a time
 * it must happen in. CI runs many test files at once on 2 cores, where a 2 s timer or a save at
 * release can come seconds late; a check that never holds still fails, only later.
 */
export const EVENTUALLY_MS = 20_000;

/** Retries `check` until it stops throwing: some saves land at release, which is asynchronous. */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = EVENTUALLY_MS): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > end) throw err;
      await sleep(50);
    }
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
