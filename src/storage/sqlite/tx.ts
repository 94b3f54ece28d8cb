/**
 * @module One write transaction per port operation: BEGIN IMMEDIATE takes the write lock up front.
 * `atomic` transactions (asyncTx) span awaits, so they are opened by hand rather than through
 * better-sqlite3's `db.transaction`, which runs only synchronous functions; the port operations
 * called inside them are still `db.transaction` functions, which become savepoints of the open one.
 */
import type Database from 'better-sqlite3';
import { isDatabaseBusy } from '../common/database-busy.js';

export type Db = Database.Database;

export function writeTx<A extends unknown[], R>(db: Db, fn: (...args: A) => R): (...args: A) => R {
  const t = db.transaction(fn);
  return (...args: A) => {
    settleHeld(db);
    if (db.inTransaction) return t.immediate(...args);
    const observe = commitObservers.get(db);
    const started = observe ? performance.now() : 0;
    const result = t.immediate(...args);
    noteCommit(db);
    observe?.((performance.now() - started) / 1000);
    return result;
  };
}

const commits = new WeakMap<Db, number>();

/**
 * How many outermost transactions (and writes outside any: sqlite/changes.ts) the connection has
 * committed for its callers. A call that met another process's write lock and left this unchanged
 * wrote nothing, so it may run again whole (sqlite/lock-wait.ts). A held batch's COMMIT is not
 * counted: it commits earlier calls' writes, which a second run of this one does not repeat.
 */
export function commitsOf(db: Db): number {
  return commits.get(db) ?? 0;
}

export function noteCommit(db: Db): void {
  commits.set(db, (commits.get(db) ?? 0) + 1);
}

const refusedAtBegin = new WeakSet<object>();

/** True for the error of a BEGIN IMMEDIATE refused by another process's write lock: the transaction's function never ran. */
export function isRefusedAtBegin(err: unknown): boolean {
  return typeof err === 'object' && err !== null && refusedAtBegin.has(err);
}

/** Runs a BEGIN IMMEDIATE, marking its SQLITE_BUSY as refused at the start (isRefusedAtBegin). */
function begin(c: Controls): void {
  try {
    c.begin.run();
  } catch (err) {
    if (isDatabaseBusy(err)) refusedAtBegin.add(err as object);
    throw err;
  }
}

const commitObservers = new WeakMap<Db, (seconds: number) => void>();

/**
 * Reports how long each outermost write transaction took, BEGIN to COMMIT (the fsync of
 * synchronous=FULL included; a mount's relaxed commit has none, sqlite/sync.ts): the commit-latency
 * metric. A transaction that throws is not reported.
 */
export function observeCommits(db: Db, observe: (seconds: number) => void): void {
  commitObservers.set(db, observe);
}

export type Statement = Database.Statement;

const pending = new WeakMap<Db, (() => void)[]>();
const runners = new WeakMap<Db, Database.Transaction<(fn: () => unknown) => unknown>>();

/** One transaction function per connection that runs its argument: `db.transaction()` per call cost ~10 µs a request. */
function runner(db: Db): Database.Transaction<(fn: () => unknown) => unknown> {
  let run = runners.get(db);
  if (!run) {
    run = db.transaction((fn: () => unknown) => fn());
    runners.set(db, run);
  }
  return run;
}

/**
 * Runs `fn` once the current transaction commits (now, if there is none). For work SQLite refuses
 * inside a transaction, such as the WAL checkpoint after a redaction inside `atomic`.
 */
export function afterCommit(db: Db, fn: () => void): void {
  if (!db.inTransaction) return fn();
  const list = pending.get(db) ?? [];
  list.push(fn);
  pending.set(db, list);
}

/**
 * One outer transaction whose after-commit work runs once it has committed (and is dropped if it
 * rolls back). Called inside another transaction (a group commit), it is a savepoint and leaves the
 * after-commit work to the outermost one, which alone knows when the data is on disk.
 */
export function outerTx<R>(db: Db, fn: () => R): R {
  settleHeld(db);
  const run = runner(db);
  if (db.inTransaction) return run(fn) as R;
  let result: R;
  const observe = commitObservers.get(db);
  const started = observe ? performance.now() : 0;
  try {
    result = run.immediate(fn) as R;
    noteCommit(db);
    observe?.((performance.now() - started) / 1000);
  } catch (err) {
    pending.delete(db);
    throw err;
  }
  runAfterCommit(db);
  return result;
}

interface Controls {
  begin: Statement;
  commit: Statement;
  rollback: Statement;
  /** SAVEPOINT, RELEASE and ROLLBACK TO statements by nesting depth (1 = the first savepoint). */
  savepoints: { open: Statement; release: Statement; undo: Statement }[];
  depth: number;
}

const controls = new WeakMap<Db, Controls>();

function controlsOf(db: Db): Controls {
  let c = controls.get(db);
  if (!c) {
    c = { begin: db.prepare('BEGIN IMMEDIATE'), commit: db.prepare('COMMIT'), rollback: db.prepare('ROLLBACK'), savepoints: [], depth: 0 };
    controls.set(db, c);
  }
  return c;
}

/**
 * The async twin of `outerTx`: BEGIN IMMEDIATE, await `fn`, COMMIT (ROLLBACK if it rejects), then
 * the after-commit work. Inside an open one it is a savepoint. The caller (open.ts) keeps every
 * other user of the connection out until it settles: nothing else may run statements meanwhile.
 */
export async function asyncTx<R>(db: Db, fn: () => Promise<R>): Promise<R> {
  settleHeld(db);
  const c = controlsOf(db);
  if (c.depth > 0 || db.inTransaction) return savepoint(db, c, fn);
  const observe = commitObservers.get(db);
  const started = observe ? performance.now() : 0;
  begin(c);
  let result: R;
  try {
    result = await fn();
    c.commit.run();
    noteCommit(db);
  } catch (err) {
    pending.delete(db);
    // SQLite rolls some failures back by itself (a full disk); then there is nothing left to undo.
    if (db.inTransaction) c.rollback.run();
    throw err;
  }
  observe?.((performance.now() - started) / 1000);
  runAfterCommit(db);
  return result;
}

function runAfterCommit(db: Db): void {
  const list = pending.get(db) ?? [];
  pending.delete(db);
  for (const f of list) f();
}

/**
 * A held batch (sqlite/write-behind.ts): the connection's transaction, left open after a mount's
 * write so that the writes after it commit with it. Anything else that writes commits it first
 * (`settleHeld`: every transaction helper here, and the write counter for a write outside them), so
 * no other write ever joins it by accident; the writes that join it do so as savepoints, through
 * `joinHeld`, with `joining` set.
 */
export interface HeldBatch {
  readonly open: boolean;
  readonly joining: boolean;
  /** Commits the batch (no-op when none is open). */
  settle(): void;
}

const heldBatches = new WeakMap<Db, HeldBatch>();

export function registerHeldBatch(db: Db, batch: HeldBatch): void {
  heldBatches.set(db, batch);
}

/** Commits the connection's held batch, unless the caller is a write joining it. */
export function settleHeld(db: Db): void {
  const h = heldBatches.get(db);
  if (h !== undefined && h.open && !h.joining) h.settle();
}

/** BEGIN IMMEDIATE of a held batch; the batch is the only transaction that can be open between gated calls. */
export function beginHeld(db: Db): void {
  begin(controlsOf(db));
}

/** Runs `fn` as a savepoint of the open held batch (the caller, sqlite/write-behind.ts, holds the writer gate). */
export function joinHeld<R>(db: Db, fn: () => Promise<R>): Promise<R> {
  return savepoint(db, controlsOf(db), fn);
}

/**
 * COMMIT of the held batch, then its after-commit work. Throws what COMMIT throws (the batch is then
 * still open or rolled back). The commit observer hears the COMMIT's own time, once per batch: the
 * batch is open for its hold by design (up to 10 ms), which says nothing about the writes' cost.
 */
export function commitHeld(db: Db): void {
  const observe = commitObservers.get(db);
  const started = observe ? performance.now() : 0;
  controlsOf(db).commit.run();
  observe?.((performance.now() - started) / 1000);
  runAfterCommit(db);
}

/** Drops the held batch (ROLLBACK if SQLite has not already rolled it back) and its after-commit work. */
export function rollbackHeld(db: Db): void {
  pending.delete(db);
  if (db.inTransaction) controlsOf(db).rollback.run();
}

async function savepoint<R>(db: Db, c: Controls, fn: () => Promise<R>): Promise<R> {
  const level = ++c.depth;
  let sp = c.savepoints[level - 1];
  if (!sp) {
    const name = `mnemo_atomic_${level}`;
    sp = { open: db.prepare(`SAVEPOINT ${name}`), release: db.prepare(`RELEASE ${name}`), undo: db.prepare(`ROLLBACK TO ${name}`) };
    c.savepoints[level - 1] = sp;
  }
  sp.open.run();
  try {
    const result = await fn();
    sp.release.run();
    return result;
  } catch (err) {
    if (db.inTransaction) {
      sp.undo.run();
      sp.release.run();
    }
    throw err;
  } finally {
    c.depth = level - 1;
  }
}
