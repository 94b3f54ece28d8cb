/**
 * @module Starts the real server (`node dist/src/main.js serve --port 0`) as a child process,
 * reads its URL from the first stdout line, and stops it by PID. Also runs one-shot CLI commands.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface StartOptions {
  /** A data directory the caller owns (kept on stop). Without it, a temp dir is made and removed. */
  dataDir?: string;
  /** Extra environment; `MNEMO_ADMIN_KEY` here replaces the generated admin key. */
  env?: Record<string, string>;
  /** Extra `serve` arguments after the usual ones (e.g. `['--log-level', 'info']`). */
  args?: string[];
  /** A PostgreSQL database to serve (`--database-url`); without it, the file's engine (serverDatabase) decides. */
  databaseUrl?: string;
  /** The server's stderr goes to this descriptor (a pipe nobody reads, say) instead of being read here; stderr() is '' then. */
  stderrFd?: number;
}

/**
 * Which database a server on `dataDir` serves when its start names none: null (the default) is
 * SQLite in the data dir. test/helpers/engine.ts sets it for the files it runs on PostgreSQL.
 */
let serverDatabase: (dataDir: string) => Promise<string | null> = async () => null;

export function useServerDatabase(pick: (dataDir: string) => Promise<string | null>): void {
  serverDatabase = pick;
}

export interface RunningServer {
  url: string;
  adminKey: string;
  dataDir: string;
  pid: number;
  /** What the server wrote to stderr so far (for failure messages). */
  stderr(): string;
  /** How the process ended, or null while it runs. */
  exit(): { code: number | null; signal: NodeJS.Signals | null } | null;
  /** SIGTERM by PID, then wait for the process to exit; removes the temp data dir if we made it. */
  stop(): Promise<void>;
  /** SIGKILL by PID, then wait for the process to exit; never removes the data dir. */
  kill9(): Promise<void>;
}

const STARTUP_MS = 20_000;
const STOP_MS = 10_000;

export const REPO_ROOT = findRepoRoot(dirname(fileURLToPath(import.meta.url)));
export const MAIN_JS = join(REPO_ROOT, 'dist', 'src', 'main.js');

export function makeTempDir(prefix = 'mnemo-api-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** The servers started here and still running, with their stderr so far (helpers/watchdog.ts). */
export const liveServers = new Map<number, () => string>();

export async function startServer({ dataDir, env = {}, args = [], databaseUrl, stderrFd }: StartOptions = {}): Promise<RunningServer> {
  if (!existsSync(MAIN_JS)) throw new Error(`${MAIN_JS} is missing: run \`npx tsc -p .\` first`);
  const ownsDir = dataDir === undefined;
  const dir = dataDir ?? makeTempDir();
  const adminKey = env['MNEMO_ADMIN_KEY'] ?? `mnemo-test-${randomBytes(18).toString('hex')}`;
  const database = databaseUrl ?? (await serverDatabase(dir));
  const child = spawn(
    process.execPath,
    [MAIN_JS, 'serve', '--port', '0', '--data-dir', dir, '--mount-root', join(dir, 'mnt'), ...(database ? ['--database-url', database] : []), ...args],
    { env: { ...childEnv(), ...env, MNEMO_ADMIN_KEY: adminKey }, stdio: ['ignore', 'pipe', stderrFd ?? 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    if (stderr.length < 64 * 1024) stderr += chunk;
  });

  let url: string;
  try {
    url = await firstLine(child, exited, () => stderr);
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    if (ownsDir) rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const pid = child.pid!;
  liveServers.set(pid, () => stderr);
  void exited.then(() => liveServers.delete(pid));

  async function signal(sig: NodeJS.Signals): Promise<void> {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(pid, sig);
      } catch {
        // already gone
      }
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_MS);
    await exited;
    clearTimeout(timer);
  }

  return {
    url,
    adminKey,
    dataDir: dir,
    pid,
    stderr: () => stderr,
    exit: () => (child.exitCode === null && child.signalCode === null ? null : { code: child.exitCode, signal: child.signalCode }),
    async stop() {
      await signal('SIGTERM');
      if (ownsDir) rmSync(dir, { recursive: true, force: true });
    },
    kill9: () => signal('SIGKILL'),
  };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** True when the command was still running after `timeoutMs` and was stopped (SIGTERM by PID). */
  timedOut: boolean;
}

export interface CliOptions {
  /** Stop the command (SIGTERM, then SIGKILL) if it has not exited by then: for commands that should fail fast. */
  timeoutMs?: number;
  cwd?: string;
  /** Written to the command's stdin, which then ends (without it, stdin ends at once). */
  input?: string;
}

/** Runs `node dist/src/main.js <args>` to completion (e.g. `keys create --data-dir D`). */
export async function runCli(args: string[], env: Record<string, string> = {}, { timeoutMs, cwd, input }: CliOptions = {}): Promise<CliResult> {
  // A command on a server's data dir reaches the database that server serves (serverDatabase): in
  // place of the data dir (the two are alternatives), except for serve, which keeps its data dir beside it.
  const at = args.indexOf('--data-dir');
  const database = at >= 0 && !args.includes('--database-url') && env['MNEMO_DATABASE_URL'] === undefined ? await serverDatabase(args[at + 1]!) : null;
  const argv = !database ? args : args[0] === 'serve' ? [...args, '--database-url', database] : [...args.slice(0, at), '--database-url', database, ...args.slice(at + 2)];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN_JS, ...argv], {
      env: { ...childEnv(), ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(cwd ? { cwd } : {}),
    });
    child.stdin.on('error', () => {}).end(input ?? '');
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timers: NodeJS.Timeout[] = [];
    if (timeoutMs !== undefined) {
      timers.push(
        setTimeout(() => {
          timedOut = true;
          child.kill('SIGTERM');
          timers.push(setTimeout(() => child.kill('SIGKILL'), STOP_MS));
        }, timeoutMs),
      );
    }
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.once('error', reject);
    child.once('close', (code) => {
      for (const t of timers) clearTimeout(t);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}

/** The parent's environment without MNEMO_* settings, so only what a test passes reaches the child. */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MNEMO_')) env[k] = v;
  return env;
}

function firstLine(child: ChildProcess, exited: Promise<void>, stderr: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    let done = false;
    const timer = setTimeout(() => reject(new Error(`server printed no URL in ${STARTUP_MS} ms\n${stderr()}`)), STARTUP_MS);
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      if (done) return; // later lines are drained and ignored
      buf += chunk;
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      done = true;
      clearTimeout(timer);
      const line = buf.slice(0, nl).trim();
      if (/^https?:\/\/\S+$/.test(line)) resolve(line);
      else reject(new Error(`first stdout line is not a URL: ${JSON.stringify(line)}\n${stderr()}`));
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`server exited (code ${child.exitCode}, signal ${child.signalCode}) before printing its URL\n${stderr()}`));
    });
  });
}

function findRepoRoot(from: string): string {
  let dir = from;
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${from}`);
    dir = up;
  }
  return dir;
}
