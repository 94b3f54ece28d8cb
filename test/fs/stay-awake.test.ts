/**
 * MNEMO_MOUNT_SPIN_US (fs/binding/stay-awake.ts) through a real server's session mount: with it, the
 * serving thread stays awake through a run of saves 2 ms apart; without it, it sleeps in epoll_wait
 * in every gap. Each sleep is a voluntary context switch of the thread (/proc/<pid>/task/<pid>/status),
 * so the test counts them rather than timing anything. The gaps make the count independent of the
 * host's load: back to back, a busy host's requests queued up while the thread was preempted, and it
 * slept less than once a save even without the setting.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FUSE_AVAILABLE, NO_FUSE_REASON } from '../helpers/mount.js';
import { mountedStore } from '../helpers/sdk.js';
import { startServer } from '../helpers/server.js';

if (!FUSE_AVAILABLE) console.warn(NO_FUSE_REASON);

/** Writes <n> new 4 KiB files into <dir>, 2 ms apart. */
const SAVES = `
import os, sys, time
d, n = sys.argv[1], int(sys.argv[2])
os.makedirs(d, exist_ok=True)
for i in range(n):
    with open(os.path.join(d, 'f%04d.md' % i), 'w') as f:
        f.write(('note %d\\n' % i) * 512)
    time.sleep(0.002)
`;

const RUN = 300;

function saves(dir: string, n: number): Promise<void> {
  const child = spawn('python3', ['-c', SAVES, dir, String(n)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  return new Promise((resolve, reject) => child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`saves exited ${code}: ${err}`)))));
}

/** How many times the process's main thread gave up the CPU by itself so far. */
function voluntarySwitches(pid: number): number {
  const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
  return Number(/^voluntary_ctxt_switches:\s+(\d+)$/m.exec(status)![1]);
}

/** The serving thread's voluntary switches per save over a run of saves through a mount of a server started with `env`. */
async function sleepsPerSave(env: Record<string, string>): Promise<number> {
  const server = await startServer({ env });
  try {
    const { mnt } = await mountedStore(server, 'awake');
    await saves(`${mnt}/warm`, 50);
    const before = voluntarySwitches(server.pid);
    await saves(`${mnt}/run`, RUN);
    return (voluntarySwitches(server.pid) - before) / RUN;
  } finally {
    await server.stop();
  }
}

describe.skipIf(!FUSE_AVAILABLE)('MNEMO_MOUNT_SPIN_US', () => {
  it('keeps the serving thread awake through a run of saves 2 ms apart, where it sleeps in every gap by default', async () => {
    const byDefault = await sleepsPerSave({});
    const awake = await sleepsPerSave({ MNEMO_MOUNT_SPIN_US: '10000' });
    // By default at least once in each gap, and often between a save's five requests too. Awake,
    // what is left are waits on the process's other threads (a GC's helpers, the journal's disk) and
    // gaps a starved writer stretched past 10 ms.
    expect(byDefault).toBeGreaterThanOrEqual(1);
    expect(awake).toBeLessThan(byDefault / 3);
  });
});
