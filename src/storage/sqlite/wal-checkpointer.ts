/**
 * @module WAL checkpoints on a thread of their own. A checkpoint copies the WAL's pages into the
 * database file and fsyncs both; run by SQLite's autocheckpoint, it ran inside whichever commit
 * crossed 1,000 WAL pages, on the thread that serves every mount and request: one save in ~60 took
 * 8–13 ms, 0.15–0.2 ms a save on average, as much as the rest of a non-fsync'd save's SQL.
 *
 * A worker thread opens its own connection and runs PASSIVE checkpoints, which never block the
 * writer and never take its lock. The serving connection keeps a much larger autocheckpoint as a
 * backstop (BACKSTOP_PAGES), for a worker that fails or falls behind; when both try at once, the
 * later one's passive attempt is refused at once, not waited for.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import type { Db } from './tx.js';
import { LOCK_WAIT_MS } from './lock-wait.js';
import { withBusyTimeout } from './pragmas.js';

/** The serving connection's own autocheckpoint while a worker checkpoints: about 40 MiB of WAL. */
export const BACKSTOP_PAGES = 10_000;

/** What the worker's last pass that ran found: the WAL's frames, those copied, and how many passes have run. */
export interface WalState {
  log: number;
  checkpointed: number;
  pass: number;
}

/**
 * WAL frames past which work that may wait (a deleted store's removal) waits for a pass: half the
 * backstop. A WAL only starts over when a commit finds every frame copied, and such work commits
 * every turn of the event loop (up to ~36 frames a millisecond), so its commits land between the
 * worker's passes and the WAL grew to the backstop, where every commit checkpointed on the serving
 * thread: 15–33 ms each with the fsyncs (test/bench/README.md, stop 51).
 */
export const BEHIND_FRAMES = BACKSTOP_PAGES / 2;

/**
 * Whether work that may wait should commit now, given the worker's last pass (`w`) and the pass it
 * went by when it last committed: yes while the WAL is short; past BEHIND_FRAMES, only once a later
 * pass has copied every frame it found, so that this commit may start the WAL over. (A pass that ran
 * between that decision and its commit counts too: at most one more commit a pass, never a stall.)
 */
export function mayCommitBeside(w: WalState, passAtLastCommit: number): boolean {
  if (w.log < BEHIND_FRAMES) return true;
  return w.pass !== passAtLastCommit && w.checkpointed === w.log;
}

/** Whether a pass left the WAL long and not wholly copied (a reader holds the passes back, or commits outrun them). */
export function walBehind(w: WalState): boolean {
  return w.log >= BEHIND_FRAMES && w.checkpointed < w.log;
}

/**
 * A `wait` for work that may wait (sqlite/store-purge.ts): true while it should not commit
 * (`mayCommitBeside`); a false answer counts the pass it went by. Never waits without a worker.
 */
export function waitForPasses(checkpointer: Checkpointer | null): () => boolean {
  let passAtLastCommit = -1;
  return () => {
    if (!checkpointer) return false;
    const w = checkpointer.wal();
    if (!mayCommitBeside(w, passAtLastCommit)) return true;
    passAtLastCommit = w.pass;
    return false;
  };
}

/**
 * Empties the WAL after a redaction, a prune or an erasing merge, so the old page images holding the
 * erased text leave the disk (and a full checkpoint copies the new pages over the main file's old
 * ones). Never waits on the serving thread: one TRUNCATE that gives up at once if another connection
 * (an operator's `sqlite3` shell, a replicator, a reader thread mid-search) holds a read transaction
 * or the checkpoint lock; then the worker retries until it succeeds, and logs while it cannot
 * (`Checkpointer.truncate`). It waited up to busy_timeout (5 s) here, holding every request and
 * mount operation, and then went on as if done. Without a worker (a CLI), it waits as before.
 */
export function truncateWalSoon(db: Db): void {
  const checkpointer = truncaters.get(db);
  if (!checkpointer) {
    withBusyTimeout(db, LOCK_WAIT_MS, () => db.pragma('wal_checkpoint(TRUNCATE)'));
    return;
  }
  const [r] = withBusyTimeout(db, 0, () => db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[]);
  if (r && r.busy === 0) return;
  checkpointer.truncate();
}

const truncaters = new WeakMap<Db, Checkpointer>();

/** Hands `truncateWalSoon` on `db` to the worker of `checkpointer` when its own attempt finds the WAL busy. */
export function truncateThrough(db: Db, checkpointer: Checkpointer): void {
  truncaters.set(db, checkpointer);
}

export interface Checkpointer {
  /** What the worker's last pass found (all -1 before its first). Shared memory: no message, no wait. */
  wal(): WalState;
  /** Asks the worker for a TRUNCATE checkpoint, retried every RETRY_TRUNCATE_MS until one succeeds. */
  truncate(): void;
  /** Stops the worker (its connection closes with it); the caller's connection stays usable. */
  stop(): void;
}

export function startCheckpointer(file: string, onError: (message: string) => void): Checkpointer {
  // The loop travels as source (`eval`), so the same code runs from dist/ and under the tests' TS loader.
  const sqlite = createRequire(import.meta.url).resolve('better-sqlite3');
  // What the worker's last pass found (log, checkpointed, passes), shared: read on every purge step, so no message.
  // The fourth slot: 1 while a TRUNCATE is wanted (truncateWalSoon), set here and cleared by the worker.
  const last = new Int32Array(new SharedArrayBuffer(16)).fill(-1);
  Atomics.store(last, 3, 0);
  const source = `const { workerData } = require('node:worker_threads');
const { parentPort } = require('node:worker_threads');
(${checkpointLoop.toString()})(require(workerData.sqlite), workerData.file, (${passPacer.toString()})(Date.now()), new Int32Array(workerData.last), (line) => parentPort.postMessage(line));`;
  const worker = new Worker(source, { eval: true, workerData: { file, sqlite, last: last.buffer } });
  let stopped = false;
  worker.on('message', (line: string) => onError(line));
  // An error thrown in the worker arrives as a plain object when its class is not a built-in one (a
  // SqliteError has only its `code` left), so both fields are read.
  worker.on('error', (err: { code?: unknown; message?: unknown }) => {
    if (stopped) return;
    const reason = [err.code, err.message].filter((x) => typeof x === 'string').join(': ') || String(err);
    onError(`mnemo: background WAL checkpoints stopped (the commits take them over): ${reason}`);
  });
  // Never what keeps a process alive: a CLI or a server exits when its own work is done.
  worker.unref();
  return {
    wal: () => ({ log: Atomics.load(last, 0), checkpointed: Atomics.load(last, 1), pass: Atomics.load(last, 2) }),
    truncate: () => void Atomics.store(last, 3, 1),
    stop() {
      if (stopped) return;
      stopped = true;
      void worker.terminate();
    },
  };
}

/** What a PASSIVE checkpoint reports: the WAL's frames when it began and those copied (-1: it could not run). */
export interface PassResult {
  log: number;
  checkpointed: number;
}

/**
 * When the worker's next pass runs, from what the last one found: every 100 ms while the WAL grows,
 * every 25 ms while a bulk write runs (a fork, many saves of new texts at once), every 250 ms while
 * it does not grow. Returns the wait after a pass that reported `r` at `now`. Self-contained: it
 * travels as source into the worker with the loop.
 *
 * Not more often for a mount's saves: a rewritten file reuses the pages its old version freed, and
 * a checkpoint copies each page once however many commits wrote it since the one before, so rarer
 * passes copy less (passes every 20 ms, back to back while they found new frames, copied far more;
 * the bench's README has the figures). A bulk write is another matter: a fork grows the WAL by
 * 3,000–7,700 frames a tenth of a second (saves: 500–1,250), and a pass that copies that much and
 * fsyncs the database file after held the serving thread's own WAL writes back for tens of ms
 * (a mount's stat p99 13–22 ms during a fork of 10,000 memories, 10–12 ms with fast passes:
 * test/bench/README.md, stop 40). Fast passes copy a bulk write's pages a quarter at a time, from a
 * pass that finds more than 20 new frames a millisecond until one finds the WAL as the last left it.
 */
export function passPacer(start: number): (r: PassResult, now: number) => number {
  const BUSY_MS = 100;
  const FAST_MS = 25;
  const IDLE_MS = 250;
  /** WAL frames a millisecond (4 KiB each) past which the WAL grows fast: 2,000 a tenth of a second. */
  const FAST_FRAMES_PER_MS = 20;
  let last: PassResult = { log: -1, checkpointed: -1 };
  let lastAt = start;
  let fast = false;
  return (r, now) => {
    const moved = r.log !== last.log || r.checkpointed !== last.checkpointed;
    // Frames added since the last pass that ran (the whole WAL if it started over meanwhile).
    const grown = r.log < 0 ? 0 : r.log >= last.log ? r.log - last.log : r.log;
    // The first pass has no rate to go by: what the WAL held at the start is not a bulk write.
    fast = moved && (fast || (last.log >= 0 && grown >= FAST_FRAMES_PER_MS * Math.max(1, now - lastAt)));
    if (r.log >= 0) {
      last = r;
      lastAt = now;
    }
    return !moved ? IDLE_MS : fast ? FAST_MS : BUSY_MS;
  };
}

/**
 * The worker's loop: a PASSIVE checkpoint on its own connection, as often as `pace` says.
 * Self-contained: it runs from its source text in the worker.
 * A WAL only starts over from its beginning when a commit finds every frame copied: after
 * a burst that is the first commit after the next pass; in a steady burst, commits land between
 * passes, so the WAL grows until the serving connection's backstop checkpoint, which then copies
 * only what came since the last pass.
 */
function checkpointLoop(Sqlite: typeof Database, file: string, pace: (r: PassResult, now: number) => number, last: Int32Array, log: (line: string) => void): void {
  /**
   * How often a wanted TRUNCATE is tried again while a reader holds it off, and after how many tries
   * it logs (a second: a busy writer or a reader thread's search holds it for milliseconds), then a minute.
   */
  const RETRY_TRUNCATE_MS = 100;
  const LOG_AFTER_TRIES = 10;
  const LOG_EVERY_TRIES = 600;
  /** The waits after a pass that failed: doubled each failure, from half a second to ten. */
  const FIRST_BACKOFF_MS = 500;
  const MAX_BACKOFF_MS = 10_000;
  const db = new Sqlite(file);
  // A checkpoint fsyncs the WAL before it copies and the database file after (FULL or NORMAL alike).
  db.pragma('synchronous = FULL');
  // Never wait: a lock held elsewhere (the backstop, a redaction's TRUNCATE) means try next turn.
  db.pragma('busy_timeout = 0');
  db.pragma('wal_autocheckpoint = 0');
  const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  const truncate = db.prepare('PRAGMA wal_checkpoint(TRUNCATE)');
  let failedTries = 0;
  /** A wanted TRUNCATE (slot 3): true when it is still wanted after this try. Cleared first, so a request made meanwhile is kept. */
  const truncateIfWanted = (): boolean => {
    if (Atomics.load(last, 3) !== 1) return false;
    Atomics.store(last, 3, 0);
    let r: PassResult & { busy: number };
    try {
      r = truncate.get() as PassResult & { busy: number };
    } catch (err) {
      // Still wanted: the pass after the failure's backoff tries it again.
      Atomics.store(last, 3, 1);
      throw err;
    }
    if (r.busy === 0) {
      if (failedTries >= LOG_AFTER_TRIES) log(`mnemo: WAL emptied after ${failedTries} tries: the redacted or pruned text is gone from ${file} and its WAL`);
      failedTries = 0;
      return false;
    }
    Atomics.store(last, 3, 1);
    failedTries += 1;
    if (failedTries % LOG_EVERY_TRIES === LOG_AFTER_TRIES) {
      log(`mnemo: cannot empty the WAL yet (another connection holds a read transaction on ${file}): redacted or pruned text stays in the database file until it ends; retrying every ${RETRY_TRUNCATE_MS} ms`);
    }
    return true;
  };
  // A pass that throws (SQLITE_FULL on a full disk, SQLITE_IOERR) is tried again later, never the
  // end of the loop: an uncaught error ended the thread, and the WAL grew for good once the disk was
  // freed. Logged when the failure starts or changes and when passes work again, not on every try.
  let failure: string | null = null;
  let backoffMs = 0;
  const turn = (): void => {
    let wait: number;
    try {
      if (truncateIfWanted()) {
        wait = RETRY_TRUNCATE_MS;
      } else {
        const r = checkpoint.get() as PassResult;
        // A pass refused (another checkpoint ran: -1) tells nothing new.
        if (r.log >= 0) {
          Atomics.store(last, 0, r.log);
          Atomics.store(last, 1, r.checkpointed);
          Atomics.add(last, 2, 1);
        }
        wait = pace(r, Date.now());
      }
      if (failure !== null) log(`mnemo: background WAL checkpoints resumed on ${file}`);
      failure = null;
      backoffMs = 0;
    } catch (err) {
      const e = err as { code?: unknown; message?: unknown };
      const reason = `${typeof e.code === 'string' ? `${e.code}: ` : ''}${typeof e.message === 'string' ? e.message : String(err)}`;
      backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(FIRST_BACKOFF_MS, backoffMs * 2));
      if (reason !== failure) {
        const full = /FULL|ENOSPC|disk is full/i.test(reason) ? ' (the disk is full: free space on it)' : '';
        log(`mnemo: background WAL checkpoints fail on ${file}${full}: ${reason}; the WAL grows until they work again, retrying with backoff up to every ${MAX_BACKOFF_MS / 1000} s`);
      }
      failure = reason;
      wait = backoffMs;
    }
    setTimeout(turn, wait);
  };
  turn();
}
