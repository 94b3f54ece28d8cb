/**
 * @module The serving thread's CPU time per save: what a save costs the one thread that answers
 * every mount request and API call (FUSE handlers, the service, SQLite), read from
 * /proc/<pid>/task/<pid>/stat around a run of saves. Unlike a rate, it hardly moves with what else
 * the host runs: a save's wall time on this 2-core VM swung 4x between runs of identical code, its
 * CPU time by a few percent.
 */
import { readFileSync } from 'node:fs';
import { workload } from './targets.js';

/** The main thread's user + system time so far, in ms (clock ticks of 10 ms). */
export function mainThreadCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  // Fields after the command name, which may hold spaces: utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** What a burst of saves cost: the serving thread's CPU a save, with and without the pause after it, and its wall time a save. */
export interface SaveCost {
  /** The thread's CPU a save, the work the burst left for the pause after it included. */
  cpuMs: number;
  /** The thread's CPU a save while the burst ran: what the writer's requests could wait on. */
  burstCpuMs: number;
  /** The burst's wall time a save, as the writer saw it. */
  wallMs: number;
}

/**
 * Saves `files` new 4 KiB files into `dir` from a child process and returns what they cost the
 * serving process's main thread. The work a save leaves for later lands within the pause after it:
 * a write-behind batch's commit (10 ms), search indexing (once the saves pause, 200–400 ms).
 */
export async function cpuPerSave(pid: number, dir: string, files: number): Promise<SaveCost> {
  const before = mainThreadCpuMs(pid);
  const { save } = await workload('save', dir, files);
  const burst = mainThreadCpuMs(pid);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  return { cpuMs: (mainThreadCpuMs(pid) - before) / files, burstCpuMs: (burst - before) / files, wallMs: (save! * 1000) / files };
}

/**
 * The most CPU a save may cost the serving thread during a burst for the mount to save at `target`
 * of the ceiling's speed. A save's wall time is about the part of the ceiling's that its serving
 * thread does not run (the round trip: the writer, the kernel, libfuse's threads and their wake-ups,
 * which mnemo's save makes alike) plus that thread's CPU: `predictedSaveMs` is that sum for mnemo.
 */
export function saveCpuBudget(ceiling: SaveCost, target: number): number {
  return ceiling.wallMs / target - roundTripMs(ceiling);
}

/** A save's wall time predicted from the ceiling's round trip and a serving thread's CPU in the burst. */
export function predictedSaveMs(ceiling: SaveCost, burstCpuMs: number): number {
  return roundTripMs(ceiling) + burstCpuMs;
}

/** The part of the ceiling's save its serving thread does not run: the round trip every save makes. */
export function roundTripMs(ceiling: SaveCost): number {
  return ceiling.wallMs - ceiling.burstCpuMs;
}

/** Waits until the thread has been idle (under 5 ms of CPU in 500 ms), at least 1 s and at most 30 s. */
async function settled(pid: number): Promise<void> {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  await sleep(500);
  for (let waited = 500; waited < 30_000; waited += 500) {
    const before = mainThreadCpuMs(pid);
    await sleep(500);
    if (waited >= 1000 && mainThreadCpuMs(pid) - before < 5) return;
  }
}

/**
 * The serving process's main-thread CPU per edit of an existing 4 KiB note of prose-like text
 * (workload.py `prose`): `files` notes are written and left to be indexed, then each is written
 * again with other words, and the CPU is read around those edits and the indexing after them.
 * Unlike the bench's other texts (one line repeated, a dozen distinct words), an edit of prose
 * takes a few hundred words out of the search index and puts as many in.
 */
export async function cpuPerEdit(pid: number, dir: string, files: number): Promise<{ cpuMs: number; wallMs: number }> {
  await workload('prose', dir, files, '1');
  await settled(pid);
  const before = mainThreadCpuMs(pid);
  const { prose } = await workload('prose', dir, files, '2');
  await settled(pid);
  return { cpuMs: (mainThreadCpuMs(pid) - before) / files, wallMs: (prose! * 1000) / files };
}
