/**
 * @module The PostgreSQL adapter's plumbing: a pool whose bigints read back as numbers, and the two
 * ways a port operation runs, as its own transaction (BEGIN … COMMIT on one pooled client) or as a
 * savepoint inside a caller's `atomic`. Role files write their operations against `Q` (the pool or
 * one client) and never open transactions themselves.
 */
import pg from 'pg';
import { ReadLane } from './read-lane.js';

/** Where an operation's statements go: the pool (a read on its own) or the transaction's client. */
export type Q = pg.Pool | pg.PoolClient;

/** bigint (int8) columns and count(*) as JS numbers: every seq, size and count here is far below 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/**
 * How long an unreachable database may hold an operation before it fails as `unavailable`
 * (unavailable.ts): opening a connection (or waiting for a free one) 5 s; any one statement 60 s,
 * which also bounds a network that drops packets instead of refusing them. Keepalive notices a
 * dead peer on an idle connection.
 */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * node-postgres's `query_timeout` only stops the client waiting: the backend goes on, and a
 * statement that waited on a lock then runs, with the COMMIT pipelined behind it, after mnemo
 * answered its write as failed. So PostgreSQL itself cancels any statement of the pool's
 * connections (and the lane's) first, `statement_timeout` sent at connect (no statement of its
 * own); the transaction it was in is aborted and the COMMIT after it answers ROLLBACK. The 10 s
 * between the two cover the statements ahead of it in one write and the way there.
 */
export interface Timeouts {
  /** PostgreSQL's `statement_timeout` on each connection. */
  statementMs: number;
  /** node-postgres's `query_timeout`: the client's own limit, above `statementMs`. */
  queryMs: number;
}
export const TIMEOUTS: Timeouts = { statementMs: 50_000, queryMs: 60_000 };

/**
 * `onIdleError` hears when an idle pooled connection breaks (PostgreSQL restarted, a proxy cut it):
 * the pool drops that connection and the next operation opens a new one. Without a listener the
 * pool's 'error' event would end the process.
 */
export function createPool(url: string, max: number, onIdleError: (err: Error) => void, timeouts: Timeouts = TIMEOUTS): pg.Pool {
  const config = {
    connectionString: url,
    types,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    statement_timeout: timeouts.statementMs,
    query_timeout: timeouts.queryMs,
    keepAlive: true,
  };
  const pool = new pg.Pool({ ...config, max, pipeline: true });
  pool.on('error', onIdleError);
  lanes.set(pool, new ReadLane(config, onIdleError));
  return pool;
}

/** Each pool's read lane (read-lane.ts): one more connection, for `lookup`s made on their own. */
const lanes = new WeakMap<pg.Pool, ReadLane>();

/** Ends the pool and its read lane. */
export async function endPool(pool: pg.Pool): Promise<void> {
  await lanes.get(pool)?.end();
  await pool.end();
}

/**
 * Runs `fn` on a connection of its own, outside the pool and without its statement timeout: the
 * migrations, which on a big database may rewrite tables for longer than any request should wait,
 * or wait that long for another server's migration lock. A broken connection still fails them.
 */
export async function withOwnClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url, types, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true });
  // Heard, not fatal: the statement in flight (or the next one) fails on its own.
  c.on('error', () => {});
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => {});
  }
}

/**
 * PostgreSQL text cannot hold U+0000 (a parameter with one is an encoding error), so no stored
 * value equals or contains one: a read keyed by such a value (an id from a URL) finds nothing, as
 * it does on SQLite, instead of failing. Writes never get here with one (assertStorable refuses).
 */
const holdsNul = (params: readonly unknown[]): boolean => params.some((p) => typeof p === 'string' && p.includes('\0'));

/**
 * Statements by name: each pooled connection parses and plans a statement's text once and then
 * only binds and executes it (an unnamed statement is parsed and planned on every call, which cost
 * about a third of a point lookup's round trip here). Names are per text, and the adapter's texts
 * are a fixed set; past NAMED_MAX distinct texts the rest run unnamed, so nothing grows unbounded.
 */
const names = new Map<string, string>();
const NAMED_MAX = 1000;

function nameOf(sql: string): string | undefined {
  let name = names.get(sql);
  if (name === undefined && names.size < NAMED_MAX) names.set(sql, (name = `mnemo_${names.size + 1}`));
  return name === '' ? undefined : name;
}

/**
 * Transaction control (BEGIN, SET LOCAL, SAVEPOINT, RELEASE) and writes whose result nothing reads
 * (`runWithNext`) are held back per client and sent in one write with the next statement the
 * transaction waits for: the pooled connections pipeline (node-postgres `pipeline`), so what is
 * held and that statement reach the server together and are answered in one round trip. A save's
 * BEGIN, SET LOCAL, SAVEPOINT and probe are one round trip; its append, RELEASE and COMMIT another.
 * The order of everything sent is unchanged. Held writes go out as named statements with bound
 * parameters like any other (written into the text as literals, as they once were, PostgreSQL
 * parsed and planned a save's 4 KiB of text on every call).
 */
type Held = { control: string } | { sql: string; params: readonly unknown[] };
const held = new WeakMap<object, Held[]>();

function hold(c: pg.PoolClient, item: Held): void {
  const h = held.get(c);
  if (h) h.push(item);
  else held.set(c, [item]);
}

/** Whatever runs one statement: the pool, a transaction's client or the read lane. */
interface Queryable {
  query(config: pg.QueryConfig): Promise<pg.QueryResult>;
}

/** A statement with its parameters: named (parsed and planned once per connection) unless past NAMED_MAX. */
async function bound(q: Queryable, sql: string, params: readonly unknown[]): Promise<pg.QueryResult> {
  const name = nameOf(sql);
  const values = params as unknown[];
  if (name === undefined) return q.query({ text: sql, values });
  try {
    return await q.query({ name, text: sql, values });
  } catch (err) {
    // Another server's migration changed a table under a statement this connection prepared
    // (`SELECT *`): PostgreSQL refuses that prepared statement from then on. The text runs
    // unnamed from now on: a read on its own is answered at once, an operation inside a
    // transaction fails this once (its transaction is aborted by then).
    if (err instanceof pg.DatabaseError && err.code === '0A000' && /cached plan/.test(err.message)) {
      names.set(sql, '');
      if (!transacting.has(q)) return q.query({ text: sql, values });
    }
    throw err;
  }
}

/**
 * Sends `items` on `c` in one write (control statements in a row as one simple query) and waits
 * for every answer; the last one's result (of a simple query, its last statement's). A transaction
 * that one of them aborted fails every statement after it, so the first failure is the one thrown.
 * On a client that does not pipeline (a pool not made by createPool) each goes out after the one
 * before it was answered, whatever that answer: the same statements in the same order, a round
 * trip each (node-postgres queues a query asked for while one runs, deprecated since 8.x).
 */
async function send(c: pg.PoolClient, items: readonly Held[]): Promise<pg.QueryResult | undefined> {
  // After a refusal nothing more reaches the server in this run of the transaction, not even a
  // ROLLBACK TO SAVEPOINT that would make it whole again: it must not commit, it runs again.
  if (refused.has(c)) throw new GuardRefusedError();
  const statements: (() => Promise<pg.QueryResult>)[] = [];
  let controls: string[] = [];
  const sendControls = () => {
    const text = controls.join('; ');
    if (controls.length > 0) statements.push(() => c.query(text));
    controls = [];
  };
  for (const item of items) {
    if ('control' in item) {
      controls.push(item.control);
    } else {
      sendControls();
      statements.push(() => bound(c, item.sql, item.params));
    }
  }
  sendControls();
  let settled: PromiseSettledResult<pg.QueryResult>[];
  if (c.pipeline) {
    const stream = (c as unknown as { connection: { stream: { cork(): void; uncork(): void } } }).connection.stream;
    const answers: Promise<pg.QueryResult>[] = [];
    stream.cork();
    try {
      for (const statement of statements) answers.push(statement());
    } finally {
      stream.uncork();
    }
    settled = await Promise.allSettled(answers);
  } else {
    settled = [];
    for (const statement of statements) settled.push((await Promise.allSettled([statement()]))[0]!);
  }
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    if (failed.reason instanceof pg.DatabaseError && failed.reason.code === GUARD_REFUSED) refused.add(c);
    throw failed.reason;
  }
  const last = (settled[settled.length - 1] as PromiseFulfilledResult<pg.QueryResult | pg.QueryResult[]> | undefined)?.value;
  return Array.isArray(last) ? last[last.length - 1] : last;
}

/** SQLSTATE of a guarded statement's refusal (postgres/schema/v17.ts). */
const GUARD_REFUSED = 'MNG01';
/** Clients whose transaction runs for the first time: its writes may be guarded statements (`mayGuard`). */
const guarding = new WeakSet<object>();
/** Clients on which a guarded statement refused: their transaction is over, and runs again without guards. */
const refused = new WeakSet<object>();

/**
 * True when a write on `q` may go out as a guarded statement: one that checks under the store's
 * lock what the write decides on and refuses when it is not as the write needs, instead of a probe
 * the write waits for. Only inside a transaction's first run; a refusal runs it again, and then no.
 */
export function mayGuard(q: Q): boolean {
  return guarding.has(q);
}

/** Sends what is held on `c` together with `sql` (or alone); the last statement's result. */
async function control(c: pg.PoolClient, sql?: string): Promise<pg.QueryResult | undefined> {
  const h = held.get(c) ?? [];
  held.delete(c);
  if (sql !== undefined) h.push({ control: sql });
  return h.length === 0 ? undefined : send(c, h);
}

/**
 * PostgreSQL answers COMMIT in a transaction a failed statement aborted with ROLLBACK, not an
 * error. That happens only if a failure was caught and the transaction went on (a held statement
 * that failed ahead of a savepoint, so there was none to roll back to): the caller must not hear
 * "saved".
 */
function assertCommitted(r: pg.QueryResult | undefined): void {
  if (r?.command === 'ROLLBACK') throw new RolledBackError();
}

/** A COMMIT answered with ROLLBACK: the transaction is over and its connection as good as before. */
class RolledBackError extends Error {
  constructor() {
    super('the transaction was rolled back: a statement in it failed and PostgreSQL answered its COMMIT with ROLLBACK');
    this.name = 'RolledBackError';
  }
}

async function exec(q: Q, sql: string, params: readonly unknown[]): Promise<pg.QueryResult> {
  const h = held.get(q);
  if (h === undefined) {
    if (refused.has(q)) throw new GuardRefusedError();
    return bound(q, sql, params);
  }
  held.delete(q);
  return (await send(q as pg.PoolClient, [...h, { sql, params }]))!;
}

export async function all<T>(q: Q, sql: string, params: readonly unknown[] = []): Promise<T[]> {
  if (holdsNul(params)) return [];
  return (await exec(q, sql, params)).rows as T[];
}

export async function first<T>(q: Q, sql: string, params: readonly unknown[] = []): Promise<T | undefined> {
  if (holdsNul(params)) return undefined;
  return (await exec(q, sql, params)).rows[0] as T | undefined;
}

/**
 * `first` for a read by key: one row found through a unique index, of bounded size. Made on its own
 * (on the pool), it rides the pool's read lane (read-lane.ts) instead of a pooled connection; in a
 * transaction it is `first`.
 */
export async function lookup<T>(q: Q, sql: string, params: readonly unknown[]): Promise<T | undefined> {
  const lane = q instanceof pg.Pool ? lanes.get(q) : undefined;
  if (lane === undefined) return first<T>(q, sql, params);
  if (holdsNul(params)) return undefined;
  return (await bound(lane, sql, params)).rows[0] as T | undefined;
}

/** Rows changed by a write. */
export async function run(q: Q, sql: string, params: readonly unknown[] = []): Promise<number> {
  return (await exec(q, sql, params)).rowCount ?? 0;
}

/** The clients of open transactions (inTransaction), while they run. */
const transacting = new WeakSet<object>();

/**
 * A write whose result nothing reads (a version's append, a memory's attributes, a store-less
 * write's notice). In a transaction it is held and goes out with the transaction's next statement
 * or its COMMIT: a mount's save is two round trips instead of three, and each write of an API
 * group after the first one round trip instead of two (its append rides with the next write's
 * probe). A failure of it then shows at that later statement, so it cannot roll back only the
 * savepoint around it: the group's next write fails on the aborted transaction (its savepoint was
 * never made), with its own error (the first failure of what went out together is the one thrown),
 * and so does the COMMIT. No write is ever reported saved that did not commit; what a held write's
 * failure costs is the rest of its group, and an append fails only when the database does (every
 * rule it could break is checked by the probe before it). Outside a transaction it runs now.
 */
export async function runWithNext(q: Q, sql: string, params: readonly unknown[]): Promise<void> {
  if (transacting.has(q)) hold(q as pg.PoolClient, { sql, params });
  else await run(q, sql, params);
}

export interface TxOptions {
  /** false: `synchronous_commit = off` for this transaction only (a mount's save, DESIGN §5). */
  durable?: boolean;
}

/**
 * Runs `fn` as one transaction on one pooled client. A client whose connection broke is dropped
 * from the pool instead of being handed to the next caller. A transaction a guarded statement
 * refused (`mayGuard`) runs once more, whole, without guards: everything `fn` does is in the
 * transaction, which the refusal rolled back, so running it again from the start is safe.
 */
export async function inTransaction<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>, options: TxOptions = {}): Promise<T> {
  try {
    return await runOnce(pool, fn, options, true);
  } catch (err) {
    if (!(err instanceof GuardRefusedError)) throw err;
    return runOnce(pool, fn, options, false);
  }
}

/** A transaction a guarded statement refused, rolled back: `inTransaction` runs it again. */
class GuardRefusedError extends Error {
  constructor() {
    super('a guarded statement refused: the transaction runs again without guards');
    this.name = 'GuardRefusedError';
  }
}

async function runOnce<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>, options: TxOptions, guards: boolean): Promise<T> {
  const c = await pool.connect();
  let broken: Error | undefined;
  // A checked-out client whose connection dies emits 'error' (the pool listens only while it is
  // idle): unheard, that would end the process. The statement in flight fails on its own.
  const onError = (err: Error) => (broken = err);
  c.on('error', onError);
  // Whatever a transaction a guard refused then failed with (the refusal itself, a later statement
  // on the aborted transaction, a COMMIT answered with ROLLBACK), it is that refusal's doing.
  const orRefused = (err: unknown) => (refused.has(c) ? new GuardRefusedError() : err);
  if (guards) guarding.add(c);
  try {
    let result: T;
    try {
      hold(c, { control: 'BEGIN' });
      if (options.durable === false) hold(c, { control: 'SET LOCAL synchronous_commit = off' });
      transacting.add(c);
      result = await fn(c);
    } catch (err) {
      // A rule's refusal or a statement's error: roll back and keep the client; a broken connection fails here too.
      // What is still held never reached the server: the rollback covers it.
      held.delete(c);
      await c.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw orRefused(err);
    }
    try {
      assertCommitted(await control(c, 'COMMIT'));
    } catch (err) {
      held.delete(c);
      if (err instanceof RolledBackError) {
        // Ended by the server, cleanly: the client goes back to the pool.
      } else if (err instanceof GuardRefusedError) {
        // The COMMIT never went out: end the transaction a refusal left open.
        await c.query('ROLLBACK').catch((e: Error) => (broken = e));
      } else if (!(err instanceof pg.DatabaseError)) {
        broken = err as Error;
      } else {
        // A held RELEASE that failed skipped the COMMIT after it: end the transaction here (a no-op when COMMIT ran).
        await c.query('ROLLBACK').catch((e: Error) => (broken = e));
      }
      throw orRefused(err);
    }
    return result;
  } finally {
    transacting.delete(c);
    guarding.delete(c);
    refused.delete(c);
    c.removeListener('error', onError);
    c.release(broken);
  }
}

let savepoints = 0;

/**
 * Runs `fn` inside the caller's transaction as a savepoint: a failure rolls back only its own
 * writes (as a nested SQLite transaction does), and the transaction stays usable.
 */
export async function inSavepoint<T>(c: pg.PoolClient, fn: () => Promise<T>): Promise<T> {
  const name = `mnemo_sp_${++savepoints}`;
  hold(c, { control: `SAVEPOINT ${name}` });
  try {
    const result = await fn();
    hold(c, { control: `RELEASE SAVEPOINT ${name}` });
    return result;
  } catch (err) {
    await control(c, `ROLLBACK TO SAVEPOINT ${name}; RELEASE SAVEPOINT ${name}`);
    throw err;
  }
}
