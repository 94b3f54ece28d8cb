/**
 * @module The PostgreSQL adapter: a `pg` pool, the schema migrated under an advisory lock, and the
 * port's roles composed from one file each (as sqlite/open.ts does). Every port method is one
 * transaction: a write runs BEGIN … COMMIT on one pooled client, a read is one statement (or a
 * short walk) on the pool. `atomic` hands its function a view of the same methods bound to its
 * transaction's client, where each write is a savepoint (a failed one rolls back alone, as a nested
 * SQLite transaction does) and `tx.atomic` nests as one too.
 */
import type pg from 'pg';
import type { AtomicOptions } from '../port.js';
import { createChangeMarks } from './changes.js';
import { domainCheck, integrityCheck } from './check.js';
import { auditReads, auditWrites } from './audit.js';
import { checkpointOps } from './checkpoints.js';
import { createPool, inSavepoint, inTransaction, type Q } from './db.js';
import { sweepExpired } from './expiry.js';
import { feedReads } from './feed.js';
import { forkReads, forkWrites } from './forks.js';
import { historyReads } from './history.js';
import { keyReads, keyWrites } from './keys.js';
import { memoryOps } from './memories.js';
import { mountViewOps } from './mount-view.js';
import type { Storage } from '../port.js';
import { receiptReads, receiptWrites } from './receipts.js';
import { migrate } from './schema/migrations.js';
import { retentionReads, retentionWrites } from './retention.js';
import { searchOps } from './search.js';
import { sessionReads, sessionWrites } from './sessions.js';
import { storeReads, storeWrites } from './stores.js';
import { versionReads, versionWrites } from './versions.js';
import { createWalSync } from './sync.js';

export interface PostgresOptions {
  /** What readers take as now when they hide expired memories (RFC 3339 UTC with milliseconds). */
  clock?: () => string;
  /** Connections in the pool (default 10). */
  poolSize?: number;
  /** Told how long each outermost write transaction took, in seconds, commit included (metrics). */
  onCommit?: (seconds: number) => void;
  /** Hears about an idle pooled connection that broke (the pool replaces it); default: ignored. */
  log?: (line: string) => void;
}

/** The port on PostgreSQL, plus what tests and the coming NOTIFY listener need. */
export type PostgresStorage = Storage & {
  /** HOOK for the cross-host wake-up (issue 14 item 3): another server committed; moves changeMark(). */
  outsideChange(): void;
};

/** Any operation (never[]: every parameter list fits); Bound<> keeps each one's own signature. */
type Op = (q: Q, ...args: never[]) => Promise<unknown>;
/** How bind() calls an operation: with the arguments its bound method was given. */
type Call = (op: (q: Q, ...args: unknown[]) => Promise<unknown>, args: unknown[]) => Promise<unknown>;
type Bound<T extends Record<string, Op>> = { [K in keyof T]: T[K] extends (q: Q, ...args: infer A) => infer R ? (...args: A) => R : never };

function bind<T extends Record<string, Op>>(ops: T, call: Call): Bound<T> {
  const out: Record<string, unknown> = {};
  for (const [name, op] of Object.entries(ops)) out[name] = (...args: unknown[]) => call(op as (q: Q, ...args: unknown[]) => Promise<unknown>, args);
  return out as Bound<T>;
}

/** Opens the pool and migrates (or refuses: schema/migrations.ts SchemaTooNewError); the pool is closed again on failure. */
export async function openPostgresStorage(url: string, options: PostgresOptions = {}): Promise<PostgresStorage> {
  const pool = createPool(url, options.poolSize ?? 10, (err) => options.log?.(`mnemo: a PostgreSQL connection broke while idle: ${err.message}`));
  try {
    const c = await pool.connect();
    try {
      await migrate(c);
    } finally {
      c.release();
    }
  } catch (err) {
    await pool.end();
    throw err;
  }
  return composeStorage(pool, options);
}

function composeStorage(pool: pg.Pool, options: PostgresOptions): PostgresStorage {
  const ctx = { clock: options.clock ?? (() => new Date().toISOString()) };
  const marks = createChangeMarks();
  const wal = createWalSync(pool);
  const memories = memoryOps(ctx);
  const checkpoints = checkpointOps(ctx);
  const writes = {
    ...storeWrites,
    ...keyWrites,
    ...memories.writes,
    ...versionWrites,
    ...sessionWrites,
    ...receiptWrites,
    ...checkpoints.writes,
    ...retentionWrites,
    ...auditWrites,
    ...forkWrites,
    purgeExpiredMemories: sweepExpired,
  };
  const reads = {
    ...storeReads,
    ...keyReads,
    ...memories.reads,
    ...versionReads,
    ...mountViewOps(ctx),
    ...sessionReads,
    ...receiptReads,
    ...checkpoints.reads,
    ...searchOps(ctx),
    ...feedReads,
    ...historyReads,
    ...retentionReads,
    ...auditReads,
    ...forkReads,
    integrityCheck,
    domainCheck,
  };

  async function outermost<T>(fn: (c: pg.PoolClient) => Promise<T>, durable: boolean): Promise<T> {
    const started = performance.now();
    const result = await inTransaction(pool, fn, { durable });
    marks.ownCommit();
    if (!durable) wal.relaxedCommit();
    options.onCommit?.((performance.now() - started) / 1000);
    return result;
  }

  /**
   * The methods bound to one transaction's client: what `atomic` hands its function. One
   * connection runs one statement at a time, so calls through it are awaited one after another
   * (never Promise.all over one transaction).
   */
  function txView(c: pg.PoolClient): Storage {
    const view: Storage = {
      ...bind(writes, (op, args) => inSavepoint(c, () => op(c, ...args))),
      ...bind(reads, (op, args) => op(c, ...args)),
      ...shared,
      // The outermost transaction decides durability; a nested one is a savepoint of it.
      atomic: <T>(fn: (tx: Storage) => Promise<T>) => inSavepoint(c, () => fn(view)),
    };
    return view;
  }

  let closed = false;
  const shared = {
    changeMark: marks.changeMark,
    ownWriteMark: marks.ownWriteMark,
    unsyncedCommits: wal.unsynced,
    syncCommits: wal.sync,
    // The index follows every write in its own transaction (a generated tsvector): nothing waits.
    indexSearchBacklog: async (_max: number) => 0,
    keepsSearchBacklog: () => false,
    // Closing twice is harmless (pg refuses a second end()).
    close: async () => {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };

  return {
    ...bind(writes, (op, args) => outermost((c) => op(c, ...args), true)),
    ...bind(reads, (op, args) => op(pool, ...args)),
    ...shared,
    atomic: <T>(fn: (tx: Storage) => Promise<T>, opts?: AtomicOptions) => outermost((c) => fn(txView(c)), opts?.durable !== false),
    outsideChange: marks.outsideChange,
  };
}
