/**
 * Another process holding SQLite's write lock: a python3 child in BEGIN IMMEDIATE on a database file,
 * as an operator's sqlite3 shell would be, until the test lets go (or kills it, by PID).
 */
import { spawn } from 'node:child_process';

export interface WriteLockHolder {
  /** Rolls back (nothing was written) and waits for the child to exit. */
  release(): Promise<void>;
  kill(): void;
  gone: Promise<void>;
}

export async function holdWriteLock(file: string): Promise<WriteLockHolder> {
  // Reading stdin: the child also lets go when the test process dies and its pipe closes.
  const script = "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1], isolation_level=None)\nc.execute('BEGIN IMMEDIATE')\nprint('held', flush=True)\nsys.stdin.readline()\nc.execute('ROLLBACK')\nc.close()";
  const child = spawn('python3', ['-c', script, file], { stdio: ['pipe', 'pipe', 'inherit'] });
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    void gone.then(() => reject(new Error('the lock holder exited before taking the lock')));
  });
  return {
    async release() {
      child.stdin.end('\n');
      await gone;
    },
    kill() {
      if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL');
    },
    gone,
  };
}
