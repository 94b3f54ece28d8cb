/**
 * MNEMO_MOUNT_SPIN_US (fs/binding/stay-awake.ts) through a real server's session mount: with it, the
 * serving thread stays awake through a run of saves 2 ms apart; without it, it sleeps in epoll_wait
 * in every gap. Each sleep is a voluntary context switch of the thread (/proc/<pid>/task/<pid>/status),
 * so the test counts them rather than timing anything. The gaps make the count independent of the
 * host's load: back to back, a busy host's requests queued up while the thread was preempted, and it
 * slept less than once a save even without the setting. Lone requests, further apart than the window,
 * must not make it turn at all: the thread's CPU time over a run of them stays far below what a window
 * after each would burn.
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

/** Looks up <n> names that do not exist in <dir>, <gapMs> apart: one LOOKUP request each (a new name every time, so no cached answer). */
const LOOKUPS = `
import os, sys, time
d, n, gap = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) / 1000
for i in range(n):
    os.path.exists(os.path.join(d, 'absent%04d.md' % i))
    time.sleep(gap)
`;

const RUN = 300;

function python(script: string, args: string[]): Promise<void> {
  const child = spawn('python3', ['-c', script, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  return new Promise((resolve, reject) => child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`python exited ${code}: ${err}`)))));
}

const saves = (dir: string, n: number) => python(SAVES, [dir, String(n)]);
const lookups = (dir: string, n: number, gapMs: number) => python(LOOKUPS, [dir, String(n), String(gapMs)]);

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

/** The CPU time (user + system) the process's main thread has used so far, in ms (clock ticks of 10 ms). */
function threadCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are the stat file's 14th and 15th fields; the slice starts at the 3rd.
  return (Number(fields[11]) + Number(fields[12])) * 10;
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

  it('does not turn after lone requests further apart than the window', async () => {
    const server = await startServer({ env: { MNEMO_MOUNT_SPIN_US: '10000' } });
    try {
      const { mnt } = await mountedStore(server, 'lone');
      await lookups(mnt, 10, 30);
      const n = 60;
      const before = threadCpuMs(server.pid);
      await lookups(mnt, n, 30);
      const spent = threadCpuMs(server.pid) - before;
      // A 10 ms window after each lookup would burn n × 10 ms; the lookups themselves, the timers
      // and a GC take a few ms.
      expect(spent).toBeLessThan((n * 10) / 4);
    } finally {
      await server.stop();
    }
  });
});
