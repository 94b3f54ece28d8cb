/**
 * @module The PostgreSQL adapter's plumbing: a pool whose bigints read back as numbers, and the two
 * ways a port operation runs, as its own transaction (BEGIN … COMMIT on one pooled client) or as a
 * savepoint inside a caller's `atomic`. Role files write their operations against `Q` (the pool or
 * one client) and never open transactions themselves.
 */
import pg from 'pg';

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
const QUERY_TIMEOUT_MS = 60_000;

/**
 * `onIdleError` hears when an idle pooled connection breaks (PostgreSQL restarted, a proxy cut it):
 * the pool drops that connection and the next operation opens a new one. Without a listener the
 * pool's 'error' event would end the process.
 */
export function createPool(url: string, max: number, onIdleError: (err: Error) => void): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url, max, types,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS, query_timeout: QUERY_TIMEOUT_MS, keepAlive: true,
  });
  pool.on('error', onIdleError);
  return pool;
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
 * Transaction control (BEGIN, SET LOCAL, SAVEPOINT, RELEASE) is held back per client and sent in
 * one simple query with the next control statement, or just before the next statement: a save's
 * BEGIN, SET LOCAL and SAVEPOINT are one round trip instead of three, its RELEASE and COMMIT one
 * instead of two. So is a write's append (`runWithNext`). The order of everything sent is unchanged.
 */
const held = new WeakMap<object, string[]>();

function hold(c: pg.PoolClient, sql: string): void {
  const h = held.get(c);
  if (h) h.push(sql);
  else held.set(c, [sql]);
}

/** Sends what is held on `c` together with `sql` (or alone), as one simple query; the last statement's result. */
async function control(c: pg.PoolClient, sql?: string): Promise<pg.QueryResult | undefined> {
  const h = held.get(c) ?? [];
  held.delete(c);
  if (sql !== undefined) h.push(sql);
  if (h.length === 0) return undefined;
  const results = (await c.query(h.join('; '))) as unknown as pg.QueryResult | pg.QueryResult[];
  return Array.isArray(results) ? results[results.length - 1] : results;
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

/**
 * A string as a SQL literal, as `pg.escapeLiteral` writes it (quotes doubled; with a backslash, an
 * E'' literal with backslashes doubled), in two native passes: pg's appends a character at a time,
 * which for a save's 4 KiB text was most of the time spent writing its append.
 */
function quoted(s: string): string {
  const q = `'${s.replace(/'/g, "''")}'`;
  return s.includes('\\') ? ` E${q.replace(/\\/g, '\\\\')}` : q;
}

/** A parameter as a SQL literal, for the few types the adapter's statements take; undefined: not one of them. */
function literal(v: unknown): string | undefined {
  if (v === null) return 'NULL';
  // A NUL cannot be in a simple query's text: bound, it fails as an encoding error as before.
  if (typeof v === 'string') return v.includes('\0') ? undefined : quoted(v);
  // Quoted, so each is an untyped literal whose type the statement decides, as a bound parameter's is.
  if (typeof v === 'number' && Number.isSafeInteger(v)) return `'${v}'`;
  if (typeof v === 'boolean') return v ? "'true'" : "'false'";
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) {
    if (v.some((x: string) => x.includes('\0'))) return undefined;
    return v.length === 0 ? "'{}'::text[]" : `ARRAY[${v.map(quoted).join(', ')}]::text[]`;
  }
  return undefined;
}

/**
 * The statement with its parameters written in as literals, to go out in one simple query with the
 * transaction control held before it (a write's BEGIN and its first statement: one round trip, not
 * two; node-postgres sends nothing while a query is in flight). Null when a parameter is of a type
 * not written here: it then goes out as its own round trip, bound.
 */
function inlined(sql: string, params: readonly unknown[]): string | null {
  const lits = params.map(literal);
  if (lits.some((l) => l === undefined)) return null;
  return sql.replace(/\$(\d+)/g, (_, n: string) => lits[Number(n) - 1]!);
}

async function exec(q: Q, sql: string, params: readonly unknown[]): Promise<pg.QueryResult> {
  if (held.has(q)) {
    const c = q as pg.PoolClient;
    const text = inlined(sql, params);
    if (text !== null) {
      const h = held.get(c)!;
      held.delete(c);
      // A simple query answers one result per statement: this statement's is the last.
      const results = (await c.query([...h, text].join('; '))) as unknown as pg.QueryResult | pg.QueryResult[];
      return Array.isArray(results) ? results[results.length - 1]! : results;
    }
    await control(c);
  }
  const name = nameOf(sql);
  if (name === undefined) return q.query(sql, params as unknown[]);
  try {
    return await q.query({ name, text: sql, values: params as unknown[] });
  } catch (err) {
    // Another server's migration changed a table under a statement this connection prepared
    // (`SELECT *`): PostgreSQL refuses that prepared statement from then on. The text runs
    // unnamed from now on: a read on the pool is answered at once, an operation inside a
    // transaction fails this once (its transaction is aborted by then).
    if (err instanceof pg.DatabaseError && err.code === '0A000' && /cached plan/.test(err.message)) {
      names.set(sql, '');
      if (q instanceof pg.Pool) return q.query(sql, params as unknown[]);
    }
    throw err;
  }
}

export async function all<T>(q: Q, sql: string, params: readonly unknown[] = []): Promise<T[]> {
  if (holdsNul(params)) return [];
  return (await exec(q, sql, params)).rows as T[];
}

export async function first<T>(q: Q, sql: string, params: readonly unknown[] = []): Promise<T | undefined> {
  if (holdsNul(params)) return undefined;
  return (await exec(q, sql, params)).rows[0] as T | undefined;
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
 * never made), and the COMMIT is answered with ROLLBACK, which `assertCommitted` turns into the
 * whole group's failure. No write is ever reported saved that did not commit; what a held write's
 * failure costs is the rest of its group, and an append fails only when the database does (every
 * rule it could break is checked by the probe before it). Outside a transaction, or with a
 * parameter that cannot be written as a literal, it runs now.
 */
export async function runWithNext(q: Q, sql: string, params: readonly unknown[]): Promise<void> {
  const text = transacting.has(q) ? inlined(sql, params) : null;
  if (text !== null) hold(q as pg.PoolClient, text);
  else await run(q, sql, params);
}

export interface TxOptions {
  /** false: `synchronous_commit = off` for this transaction only (a mount's save, DESIGN §5). */
  durable?: boolean;
}

/**
 * Runs `fn` as one transaction on one pooled client. A client whose connection broke is dropped
 * from the pool instead of being handed to the next caller.
 */
export async function inTransaction<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>, options: TxOptions = {}): Promise<T> {
  const c = await pool.connect();
  let broken: Error | undefined;
  // A checked-out client whose connection dies emits 'error' (the pool listens only while it is
  // idle): unheard, that would end the process. The statement in flight fails on its own.
  const onError = (err: Error) => (broken = err);
  c.on('error', onError);
  try {
    let result: T;
    try {
      hold(c, 'BEGIN');
      if (options.durable === false) hold(c, 'SET LOCAL synchronous_commit = off');
      transacting.add(c);
      result = await fn(c);
    } catch (err) {
      // A rule's refusal or a statement's error: roll back and keep the client; a broken connection fails here too.
      // What is still held never reached the server: the rollback covers it.
      held.delete(c);
      await c.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw err;
    }
    try {
      assertCommitted(await control(c, 'COMMIT'));
    } catch (err) {
      held.delete(c);
      if (err instanceof RolledBackError) {
        // Ended by the server, cleanly: the client goes back to the pool.
      } else if (!(err instanceof pg.DatabaseError)) {
        broken = err as Error;
      } else {
        // A held RELEASE that failed skipped the COMMIT after it: end the transaction here (a no-op when COMMIT ran).
        await c.query('ROLLBACK').catch((e: Error) => (broken = e));
      }
      throw err;
    }
    return result;
  } finally {
    transacting.delete(c);
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
  hold(c, `SAVEPOINT ${name}`);
  try {
    const result = await fn();
    hold(c, `RELEASE SAVEPOINT ${name}`);
    return result;
  } catch (err) {
    await control(c, `ROLLBACK TO SAVEPOINT ${name}; RELEASE SAVEPOINT ${name}`);
    throw err;
  }
}
