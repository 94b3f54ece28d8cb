/**
 * @module One helper process per mnemo process that unmounts, lazily, every mount still listed
 * when this process dies. libfuse's `auto_unmount` did that with a `fusermount3` helper of its own
 * per mount, which lived (with a socket to it in this process) until this process exited, though
 * its mount had long been unmounted: a server that ended a thousand sessions held a thousand
 * sleeping helpers (about 1 GiB) and a thousand descriptors. This helper is told of each mount and
 * unmount on its stdin; when stdin ends (this process exited, or was killed), it runs
 * `fusermount3 -uz` on each mount it was told of and not of its unmount, then exits.
 *
 * It runs in its own process group, so the signal that stops this process's group (a terminal's
 * Ctrl-C) lets this process unmount its mounts itself; it keeps nothing open but its stdin and
 * never keeps this process alive.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** The helper: a Set of mount points kept from JSON lines; at stdin's end, each left is unmounted. */
const HELPER = `
const { execFileSync } = require('node:child_process');
const mounts = new Set();
let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  for (let nl = buffer.indexOf('\\n'); nl !== -1; nl = buffer.indexOf('\\n')) {
    const [op, path] = JSON.parse(buffer.slice(0, nl));
    buffer = buffer.slice(nl + 1);
    if (op === '+') mounts.add(path);
    else mounts.delete(path);
  }
});
process.stdin.on('end', () => {
  for (const path of mounts) { try { execFileSync('fusermount3', ['-uz', path], { stdio: 'ignore' }); } catch {} }
  process.exit(0);
});
`;

let helper: ChildProcess | null = null;

function tell(message: [op: '+' | '-', path: string]): void {
  if (helper === null) {
    // Its last argument names it in `ps` (and lets tests find it: `pgrep -f mnemo-unmount-guard`).
    helper = spawn(process.execPath, ['-e', HELPER, 'mnemo-unmount-guard'], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
    helper.on('error', () => {}); // no helper: a killed process leaves its mounts, which the next start clears
    helper.stdin!.on('error', () => {});
    helper.unref();
    (helper.stdin as unknown as { unref?: () => void }).unref?.();
  }
  helper.stdin!.write(`${JSON.stringify(message)}\n`);
}

/** `mnt` is mounted: unmount it should this process die before it does. */
export function guardMount(mnt: string): void {
  tell(['+', mnt]);
}

/** `mnt` was unmounted by this process: nothing to do for it any more. */
export function releaseMount(mnt: string): void {
  if (helper !== null) tell(['-', mnt]);
}
