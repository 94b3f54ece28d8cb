/**
 * The server's pid file (src/cli/pidfile.ts): a live `serve` process is named; a stale file whose
 * pid is gone, or names a process that is no server (a pid reused after a crash), names none.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runningServerPid, writePidFile, removePidFile } from '../../src/cli/pidfile.js';
import { tmpDir } from '../helpers/tmp.js';

/** A child process that sleeps, run with `args` (its argv, as /proc shows it); stopped after the test by its pid. */
function sleeper(args: string[]): number {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)', ...args], { stdio: 'ignore' });
  onTestFinished(() => void child.kill('SIGKILL'));
  return child.pid!;
}

describe('the server pid file', () => {
  it('names no server when there is no file, or its pid is gone', () => {
    const dir = tmpDir('mnemo-pid-');
    expect(runningServerPid(dir)).toBeNull();
    writeFileSync(join(dir, 'mnemo.pid'), '2147483646\n');
    expect(runningServerPid(dir)).toBeNull();
    writePidFile(dir);
    // This process's own pid is never another server.
    expect(runningServerPid(dir)).toBeNull();
    removePidFile(dir);
    expect(runningServerPid(dir)).toBeNull();
  });

  it('names a live serve process, and not a live process of another kind that reuses the pid', () => {
    const dir = tmpDir('mnemo-pid-');
    const server = sleeper(['serve', '--data-dir', dir]);
    writeFileSync(join(dir, 'mnemo.pid'), `${server}\n`);
    expect(runningServerPid(dir)).toBe(server);
    const other = sleeper(['some', 'other', 'program']);
    writeFileSync(join(dir, 'mnemo.pid'), `${other}\n`);
    expect(runningServerPid(dir)).toBeNull();
  });
});
