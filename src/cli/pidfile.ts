/**
 * @module The serve process's pid file in the data dir. The lock (storage/sqlite/lock.ts) decides who
 * owns the directory; the pid file lets a refusal name the owner's pid, and tells `mnemo mount` and
 * `mnemo mcp` on SQLite whether a server on the same file does the search upkeep (main.ts).
 *
 * Three lines: the pid, the server's engine (`sqlite`, or `postgres`: a server on PostgreSQL keeps
 * no SQLite file up), and the process's start time as /proc/<pid>/stat gives it (field 22, clock
 * ticks since boot), which tells the server from a process that got its pid after a crash (a
 * container restarted on the same volume numbers its processes from 1 again). A file of one line
 * (an older mnemo) is a SQLite server's, recognised by its arguments instead.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const PID_FILE = 'mnemo.pid';
const pidFile = (dataDir: string) => join(dataDir, PID_FILE);

export type ServerEngine = 'sqlite' | 'postgres';

export function writePidFile(dataDir: string, engine: ServerEngine): void {
  writeFileSync(pidFile(dataDir), `${process.pid}\n${engine}\n${startTime(process.pid) ?? ''}\n`);
}

export function removePidFile(dataDir: string): void {
  rmSync(pidFile(dataDir), { force: true });
}

/** The pid of a live server on this data dir (on `engine` if given), or null (no file, or a stale one left by a crash). */
export function runningServerPid(dataDir: string, engine?: ServerEngine): number | null {
  let lines: string[];
  try {
    lines = readFileSync(pidFile(dataDir), 'utf8').split('\n');
  } catch {
    return null;
  }
  const pid = Number(lines[0]!.trim());
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return null;
  if (engine !== undefined && (lines[1]?.trim() || 'sqlite') !== engine) return null;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return null;
  }
  return isThatServer(pid, lines[2]?.trim() ?? '') ? pid : null;
}

/** Whether the live process `pid` is the one that wrote the file: same start time, or (an older file) a `serve`; true where /proc cannot tell. */
function isThatServer(pid: number, started: string): boolean {
  if (started !== '') {
    const now = startTime(pid);
    return now === null || now === started;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('serve');
  } catch {
    return true;
  }
}

/** Field 22 of /proc/<pid>/stat (after the command name, which may hold spaces), or null without /proc. */
function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}
