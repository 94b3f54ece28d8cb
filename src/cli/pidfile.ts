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

/** The pid of a live server on this data dir, or null (no file, or a stale one left by a crash). */
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
    return pid;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? pid : null;
  }
}
