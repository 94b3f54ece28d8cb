/**
 * @module The diff thread's entry (diff-thread.ts starts it): one job at a time, answered by its id.
 * It runs at a lower priority, as the reader threads do, so that on a host whose cores are busy the
 * serving thread gets its turn first.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { runDiffJob, type DiffJob } from './diff-jobs.js';

const { nice } = workerData as { nice: number };
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), nice);
} catch {
  // Not Linux, or not allowed: the thread runs at the process's priority.
}

parentPort!.on('message', ({ id, job }: { id: number; job: DiffJob }) => {
  try {
    parentPort!.postMessage({ id, result: runDiffJob(job) });
  } catch (err) {
    parentPort!.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
