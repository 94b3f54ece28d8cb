/**
 * @module The serve process's pid file in the data dir. The lock (storage/sqlite/lock.ts) decides who
 * owns the directory; the pid file only lets a refusal name the owner's pid.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const PID_FILE = 'mnemo.pid';
const pidFile = (dataDir: string) => join(dataDir, PID_FILE);

export function writePidFile(dataDir: string): void {
  writeFileSync(pidFile(dataDir), `${process.pid}\n`);
}

export function removePidFile(dataDir: string): void {
  rmSync(pidFile(dataDir), { force: true });
}

/**
 * The pid of a live server on this data dir, or null (no file, or a stale one left by a crash).
 * A stale file's pid may name another process by now (a container restarted on the same volume
 * numbers its processes from 1 again): where /proc shows the process's arguments, one that is not
 * a `serve` is no server. `mnemo mount` and `mnemo mcp` leave search indexing to the server this
 * names (main.ts), so a wrong answer here would leave nobody indexing.
 */
export function runningServerPid(dataDir: string): number | null {
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile(dataDir), 'utf8').trim());
  } catch {
    return null;
  }
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return null;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return null;
  }
  return servesOrUnknown(pid) ? pid : null;
}

/** False only when /proc shows the process and none of its arguments is `serve`. */
function servesOrUnknown(pid: number): boolean {
  let args: string[];
  try {
    args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return true;
  }
  return args.includes('serve');
}
