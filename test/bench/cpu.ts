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

/**
 * Saves `files` new 4 KiB files into `dir` from a child process and returns the serving process's
 * main-thread CPU per save. The work a save leaves for later lands within the pause after it: a
 * write-behind batch's commit (10 ms), search indexing (once the saves pause, 200–400 ms).
 */
export async function cpuPerSave(pid: number, dir: string, files: number): Promise<number> {
  const before = mainThreadCpuMs(pid);
  await workload('save', dir, files);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  return (mainThreadCpuMs(pid) - before) / files;
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
