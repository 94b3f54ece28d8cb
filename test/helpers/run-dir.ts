/**
 * @module vitest globalSetup: one temp directory per test run, which every test's temp directory
 * (and every process a test starts) makes its own below: TMPDIR points there for the workers, which
 * inherit the environment this sets. Each test removes its own directories when it finishes
 * (tmp.ts); a run cut short by a signal never runs those cleanups, and left its tests' directories
 * (`mnemo-fs-*` by the dozen) in /tmp. This removes the whole directory at the end of the run,
 * interrupted or not: first any mount still under it is detached (lazily, as the tests do), then
 * the tree is removed without crossing into another file system.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanUpOnExit } from './on-exit.js';

/** Mount points at or below `dir`, deepest first (/proc/self/mountinfo escapes spaces as \040). */
function mountsUnder(dir: string): string[] {
  let info: string;
  try {
    info = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  return info
    .split('\n')
    .map((line) => unescape(line.split(' ')[4] ?? ''))
    .filter((point) => point === dir || point.startsWith(dir + '/'))
    .sort((a, b) => b.length - a.length);
}

/** Detaches what is mounted below `dir` and removes it; synchronous, so a signal's listener can run it. */
export function removeRunDir(dir: string): void {
  for (const point of mountsUnder(dir)) {
    const fuse = spawnSync('fusermount3', ['-uz', point], { stdio: 'ignore' });
    if (fuse.status !== 0) spawnSync('umount', ['-l', point], { stdio: 'ignore' });
  }
  // --one-file-system: a mount that would not detach is left alone, not emptied through.
  spawnSync('rm', ['-rf', '--one-file-system', dir], { stdio: 'ignore' });
}

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-test-run-'));
  // Traversable by the postgres user, whose clusters some tests start in a directory of their own here.
  chmodSync(dir, 0o755);
  process.env['TMPDIR'] = dir;
  const remove = () => removeRunDir(dir);
  cleanUpOnExit(remove);
  return remove;
}
