/** @module A named pipe whose reader is this test: held open and read only when the test says so. */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { tmpDir } from './tmp.js';

export interface Fifo {
  /** A write end that answers EAGAIN when full (as Node makes a stderr pipe). */
  writeFd: number;
  /** Reads whatever the pipe holds now ('' if nothing). */
  drain(): string;
  /** Closes the read end: writes fail with EPIPE from then on. */
  closeReader(): void;
}

/** A fifo in a temp dir, both ends open (non-blocking), closed when the test finishes. */
export function fifo(): Fifo {
  const path = join(tmpDir('mnemo-fifo-'), 'pipe');
  execFileSync('mkfifo', [path]);
  let readFd: number | null = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const writeFd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
  onTestFinished(() => {
    closeSync(writeFd);
    if (readFd !== null) closeSync(readFd);
  });
  return {
    writeFd,
    drain() {
      if (readFd === null) return '';
      const buf = Buffer.alloc(1 << 16);
      let out = '';
      for (;;) {
        let n = 0;
        try {
          n = readSync(readFd, buf, 0, buf.length, null);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return out;
          throw err;
        }
        if (n === 0) return out;
        out += buf.toString('utf8', 0, n);
      }
    },
    closeReader() {
      if (readFd !== null) closeSync(readFd);
      readFd = null;
    },
  };
}
