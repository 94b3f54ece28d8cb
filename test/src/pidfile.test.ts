/**
 * The server's pid file (src/cli/pidfile.ts): a live server is named; a stale file whose pid is
 * gone, or is held by another process by now (a pid reused after a crash), names none; and a
 * server on PostgreSQL is no server of the data directory's SQLite file.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { removePidFile, runningServerPid, writePidFile } from '../../src/cli/pidfile.js';
import { tmpDir } from '../helpers/tmp.js';

/** A child process that sleeps, run with `args` (its argv, as /proc shows it); killed after the test by its pid. */
function sleeper(args: string[]): number {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)', ...args], { stdio: 'ignore' });
  onTestFinished(() => void child.kill('SIGKILL'));
  return child.pid!;
}

/** Field 22 of /proc/<pid>/stat: the process's start time. */
const startOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
};

describe('the server pid file', () => {
  it('names no server when there is no file, or its pid is gone, or it is this process', () => {
    const dir = tmpDir('mnemo-pid-');
    expect(runningServerPid(dir)).toBeNull();
    writeFileSync(join(dir, 'mnemo.pid'), '2147483646\nsqlite\n1\n');
    expect(runningServerPid(dir)).toBeNull();
    writePidFile(dir, 'sqlite');
    expect(readFileSync(join(dir, 'mnemo.pid'), 'utf8')).toBe(`${process.pid}\nsqlite\n${startOf(process.pid)}\n`);
    expect(runningServerPid(dir)).toBeNull();
    removePidFile(dir);
    expect(runningServerPid(dir)).toBeNull();
  });

  it('names the live process that wrote it, and not one that got its pid since (another start time)', () => {
    const dir = tmpDir('mnemo-pid-');
    const pid = sleeper([]);
    writeFileSync(join(dir, 'mnemo.pid'), `${pid}\nsqlite\n${startOf(pid)}\n`);
    expect(runningServerPid(dir)).toBe(pid);
    expect(runningServerPid(dir, 'sqlite')).toBe(pid);
    writeFileSync(join(dir, 'mnemo.pid'), `${pid}\nsqlite\n${Number(startOf(pid)) - 1}\n`);
    expect(runningServerPid(dir)).toBeNull();
  });

  it('an older one-line file names a live serve process, and not a process of another kind', () => {
    const dir = tmpDir('mnemo-pid-');
    const server = sleeper(['serve', '--data-dir', dir]);
    writeFileSync(join(dir, 'mnemo.pid'), `${server}\n`);
    expect(runningServerPid(dir, 'sqlite')).toBe(server);
    const other = sleeper(['some', 'other', 'program']);
    writeFileSync(join(dir, 'mnemo.pid'), `${other}\n`);
    expect(runningServerPid(dir)).toBeNull();
  });

  it('a server on PostgreSQL is named, but not as a server of the SQLite file', () => {
    const dir = tmpDir('mnemo-pid-');
    const pid = sleeper([]);
    writeFileSync(join(dir, 'mnemo.pid'), `${pid}\npostgres\n${startOf(pid)}\n`);
    expect(runningServerPid(dir)).toBe(pid);
    expect(runningServerPid(dir, 'sqlite')).toBeNull();
  });
});
