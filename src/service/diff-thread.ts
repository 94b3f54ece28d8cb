/**
 * @module A worker thread for diffs (diff-jobs.ts), started at the first diff and restarted if it
 * dies. Its cost is a structured clone of the two texts in and of the answer out: well under a
 * millisecond for 100 KiB, where the diff itself took up to hundreds. A build without its compiled
 * worker (the TypeScript sources alone) runs the jobs inline. The thread keeps the process alive only
 * while it has jobs.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { runDiffJob, type DiffJob, type DiffResult } from './diff-jobs.js';

/** The thread's nice value: as a reader thread's (sqlite/readers.ts READER_NICE). */
const DIFF_NICE = 10;

export interface DiffThread {
  run<J extends DiffJob>(job: J): Promise<DiffResult<J>>;
  /** Stops the thread; jobs in flight reject. */
  close(): void;
}

/** `entry`: the worker's compiled module; null runs every job inline, on the calling thread, with the domain's 20 ms search budget (a build without it does; tests pass null to). */
export function createDiffThread(entry: URL | null = workerEntry()): DiffThread {
  let worker: Worker | null = null;
  let nextId = 1;
  const pending = new Map<number, { resolve: (r: unknown) => void; reject: (e: Error) => void }>();

  function failAll(err: Error): void {
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  }

  function started(url: URL): Worker {
    if (worker) return worker;
    const w = new Worker(url, { workerData: { nice: DIFF_NICE } });
    w.unref();
    w.on('message', ({ id, result, error }: { id: number; result?: unknown; error?: string }) => {
      const p = pending.get(id);
      if (!p) return;
      pending.delete(id);
      if (pending.size === 0) w.unref();
      if (error !== undefined) p.reject(new Error(`the diff failed: ${error}`));
      else p.resolve(result);
    });
    // A thread that died takes its jobs with it; the next job starts a new one.
    const gone = (err: Error) => {
      if (worker !== w) return;
      worker = null;
      failAll(err);
    };
    w.on('error', gone);
    w.on('exit', (code) => gone(new Error(`the diff thread exited (code ${code})`)));
    worker = w;
    return w;
  }

  return {
    run<J extends DiffJob>(job: J): Promise<DiffResult<J>> {
      if (entry === null) return Promise.resolve().then(() => runDiffJob(job));
      const w = started(entry);
      const id = nextId++;
      return new Promise<DiffResult<J>>((resolve, reject) => {
        if (pending.size === 0) w.ref();
        pending.set(id, { resolve: resolve as (r: unknown) => void, reject });
        w.postMessage({ id, job });
      });
    },
    close() {
      const w = worker;
      worker = null;
      failAll(new Error('the diff thread was stopped'));
      void w?.terminate();
    },
  };
}

function workerEntry(): URL | null {
  const here = import.meta.url;
  const url = here.endsWith('.ts') ? new URL('../../dist/src/service/diff-worker.js', here) : new URL('./diff-worker.js', here);
  return existsSync(fileURLToPath(url)) ? url : null;
}
