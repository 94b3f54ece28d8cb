/**
 * @module Group commit for the API's writes. Every commit costs an fsync
 * (synchronous=FULL), and the event loop serves one request at a time, so concurrent clients used to
 * queue behind each other's fsyncs. Writes that arrive in the same event-loop turn now run one after
 * another inside one transaction, each in its own savepoint (a refused write rolls back alone), and
 * share its commit. No caller hears "done" before that commit is on disk; if it fails, every write
 * in the group fails with it and none is reported as saved. (On PostgreSQL a write's append goes out
 * with the next write's first statement, so one the database itself refuses fails the whole group
 * the same way: storage/postgres/db.ts `runWithNext`. The rules' refusals come before it.) One
 * group is in flight at a time: writes that arrive while it commits form the next group, which
 * starts when it is done. (On
 * PostgreSQL, groups running side by side each waited for the store's row lock held by the one
 * before, and each paid its own WAL flush: 4 clients' creates ran in groups of one.)
 */
import type { Storage } from '../storage/port.js';

/**
 * Writes per group at most; the rest wait for the next group. Each write is a savepoint, and its
 * receipt or nested `atomic` another: on PostgreSQL every one that writes is a subtransaction with
 * an id of its own, and past 64 in one open transaction a backend's subtransaction cache overflows,
 * so every other session's snapshot checks go to pg_subtrans until it commits (a cliff for the
 * whole cluster). 30 writes keep a group under it; at 4 clients a group holds about two.
 */
export const MAX_GROUP = 30;

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
  const queue: Job[] = [];
  /** A group is scheduled or committing: new writes wait in `queue` for the next one. */
  let busy = false;

  function schedule(): void {
    busy = true;
    // After this turn's I/O callbacks: every request that arrived with this one joins the group.
    setImmediate(() => void flush().finally(() => (queue.length > 0 ? schedule() : (busy = false))));
  }

  async function flush(): Promise<void> {
    const jobs = queue.splice(0, MAX_GROUP);
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
        if (!busy) schedule();
      });
    },
  };
}
