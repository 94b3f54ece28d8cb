/**
 * A setup file for every test file: a test still running after WATCH_MS prints what the processes
 * it started are waiting on, before the 60 s timeout ends it without a word. Two tests once hung
 * for 60 s under heavy load and never again when rerun (see the README's "Testing"); this is what
 * the next one leaves behind: each descendant process's command, state and, per thread, the kernel
 * function it sleeps in (`wchan`) and its kernel stack (root only), the FUSE mounts, and the tail
 * of each test server's stderr (helpers/server.ts). It reads /proc only and changes nothing.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { afterEach, beforeEach } from 'vitest';
import { liveServers } from './server.js';

const WATCH_MS = Number(process.env['MNEMO_TEST_WATCH_MS'] ?? 40_000);

let timer: NodeJS.Timeout | null = null;

beforeEach((ctx) => {
  const name = ctx.task.name;
  timer = setTimeout(() => console.error(report(name)), WATCH_MS);
  timer.unref();
});

afterEach(() => {
  if (timer) clearTimeout(timer);
  timer = null;
});

function read(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** Every process below `root`, by walking /proc's parent links. */
function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    // The fields after the command (which may hold spaces) start after its closing parenthesis.
    const stat = read(`/proc/${entry}/stat`);
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    parent.set(Number(entry), Number(fields[1]));
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    for (const [child, ppid] of parent) {
      if (ppid !== pid) continue;
      out.push(child);
      walk(child);
    }
  };
  walk(root);
  return out;
}

function describeProcess(pid: number): string {
  const cmd = read(`/proc/${pid}/cmdline`).split('\0').join(' ').trim().slice(0, 300);
  const stat = read(`/proc/${pid}/stat`);
  const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? '?';
  const lines = [`pid ${pid} [${state}] ${cmd}`];
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return lines.join('\n');
  }
  for (const tid of tasks) {
    const comm = read(`/proc/${pid}/task/${tid}/comm`).trim();
    const wchan = read(`/proc/${pid}/task/${tid}/wchan`).trim() || '-';
    const stack = read(`/proc/${pid}/task/${tid}/stack`).trim().split('\n').slice(0, 8).join(' < ');
    lines.push(`  thread ${tid} ${comm}: wchan ${wchan}${stack ? `; ${stack}` : ''}`);
  }
  return lines.join('\n');
}

function report(test: string): string {
  const out = [`watchdog: "${test}" is still running after ${WATCH_MS / 1000} s; its processes:`];
  for (const pid of descendants(process.pid)) out.push(describeProcess(pid));
  const fuse = read('/proc/mounts').split('\n').filter((l) => / fuse/.test(l));
  out.push(`FUSE mounts (${fuse.length}):`, ...fuse);
  for (const [pid, stderr] of liveServers) out.push(`server ${pid} stderr (last 4 KiB):`, stderr().slice(-4096));
  return out.join('\n');
}
