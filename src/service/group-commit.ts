/**
 * @module Group commit for the API's writes. Every commit costs an fsync
 * (synchronous=FULL), and the event loop serves one request at a time, so concurrent clients used to
 * queue behind each other's fsyncs. Writes that arrive in the same event-loop turn now run one after
 * another inside one transaction, each in its own savepoint (a refused write rolls back alone), and
 * share its commit. No caller hears "done" before that commit is on disk; if it fails, every write
 * in the group fails with it and none is reported as saved.
 */
import type { Storage } from '../storage/port.js';

export interface GroupCommit {
  /** Runs `write` (port writes through its `tx`) in the next group; settles once the group has committed. */
  run<T>(write: (tx: Storage) => Promise<T>): Promise<T>;
}

interface Job {
  write: (tx: Storage) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  outcome?: { ok: true; value: unknown } | { ok: false; err: unknown };
}

export function createGroupCommit(storage: Pick<Storage, 'atomic'>): GroupCommit {
  let queue: Job[] = [];

  async function flush(): Promise<void> {
    const jobs = queue;
    queue = [];
    try {
      await storage.atomic(async (tx) => {
        for (const job of jobs) {
          try {
            job.outcome = { ok: true, value: await tx.atomic(job.write) };
          } catch (err) {
            job.outcome = { ok: false, err };
          }
        }
      });
    } catch (err) {
      for (const job of jobs) job.reject(err);
      return;
    }
    for (const job of jobs) {
      const o = job.outcome!;
      if (o.ok) job.resolve(o.value);
      else job.reject(o.err);
    }
  }

  return {
    run<T>(write: (tx: Storage) => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ write, resolve: resolve as (v: unknown) => void, reject });
        // After this turn's I/O callbacks: every request that arrived with this one joins the group.
        if (queue.length === 1) setImmediate(() => void flush());
      });
    },
  };
}
