/**
 * @module The diff thread's entry (diff-thread.ts starts it): one job at a time, answered by its id.
 * It runs at a lower priority, as the reader threads do, so that on a host whose cores are busy the
 * serving thread gets its turn first.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { runDiffJob, type DiffJob } from './diff-jobs.js';

/**
 * The line search's time bound here. The domain's 20 ms is for a diff made on the serving thread;
 * on this thread the edit bound (MAX_EDITS) is what keeps the cost down, and a 20 ms clock made an
 * easy diff of 15,000 lines come back non-minimal whenever a busy host paused the thread (CI did).
 * This bound is left for the rare long text with many near-matches, so that one diff cannot hold
 * the thread (and the diffs queued behind it) for long.
 */
const THREAD_BUDGET_MS = 2_000;

const { nice } = workerData as { nice: number };
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), nice);
} catch {
  // Not Linux, or not allowed: the thread runs at the process's priority.
}

parentPort!.on('message', ({ id, job }: { id: number; job: DiffJob }) => {
  try {
    parentPort!.postMessage({ id, result: runDiffJob(job, THREAD_BUDGET_MS) });
  } catch (err) {
    parentPort!.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
