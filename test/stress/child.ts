/**
 * @module What the stress runs share: a child process's standard output, once it ends. They run
 * outside vitest, so they cannot use test/helpers/mount.ts (which registers vitest hooks).
 */
import { spawn } from 'node:child_process';

/** Runs `cmd` in `cwd` and resolves with what it printed, trimmed (stderr passes through). */
export function output(cmd: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve) => {
    const c = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    c.stdout.on('data', (b: Buffer) => (out += b.toString()));
    c.on('close', () => resolve(out.trim()));
  });
}
