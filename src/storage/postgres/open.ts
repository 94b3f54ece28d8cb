/**
 * @module The PostgreSQL adapter: a `pg` pool, the schema migrated under an advisory lock, and the
 * port's roles composed from one file each (as sqlite/open.ts does). Every port method is one
 * transaction: a write runs BEGIN … COMMIT on one pooled client, a read is one statement (or a
 * short walk) on the pool. `atomic` hands its function a view of the same methods bound to its
 * transaction's client, where each write is a savepoint (a failed one rolls back alone, as a nested
 * SQLite transaction does) and `tx.atomic` nests as one too.
 */
import type pg from 'pg';
import { MnemoError } from '../../domain/errors.js';
import type { AtomicOptions, PageKey } from '../port.js';
import { createChangeMarks } from './changes.js';
import { domainCheck, integrityCheck } from './check.js';
import { auditReads, auditWrites } from './audit.js';
import { consoleSessionReads, consoleSessionWrites } from './console-sessions.js';
import { checkpointOps } from './checkpoints.js';
import { createPool, endPool, inSavepoint, inTransaction, withOwnClient, type Q, type Timeouts } from './db.js';
import { sweepExpired } from './expiry.js';
import { feedReads } from './feed.js';
import { forkReads, forkWrites } from './forks.js';
import { historyReads } from './history.js';
import { keyReads, keyWrites } from './keys.js';
import { memoryOps } from './memories.js';
import { mountViewOps } from './mount-view.js';
import { readPageKey } from './page-key.js';
import type { Storage } from '../port.js';
import { receiptReads, receiptWrites } from './receipts.js';
import { migrate, schemaPresence } from './schema/migrations.js';
import { retentionReads, retentionWrites } from './retention.js';
import { searchOps } from './search.js';
import { backlogSize, indexBacklog } from './search-index.js';
import { createTidy } from './vacuum.js';
import { sessionReads, sessionWrites } from './sessions.js';
import { liveUsageReads, storeReads, storeWrites } from './stores.js';
import { versionReads, versionWrites } from './versions.js';
import { createWalSync } from './sync.js';
import { createOutageGuard, databaseUnavailable, isUnreachable } from './unavailable.js';
import { startListener, type Listener } from './listener.js';
import { createKeyCache } from './key-cache.js';
import { purgeDeletedStore } from './store-purge.js';
import { adopt, newOrigin, publishAtCommit, publishKeyRevoked, publishSessionEnded, tracked } from './notify.js';

export interface PostgresOptions {
  /** What readers take as now when they hide expired memories (RFC 3339 UTC with milliseconds). */
  clock?: () => string;
  /** Connections in the pool (default 10). */
  poolSize?: number;
  /** Told how long each outermost write transaction took, in seconds, commit included (metrics). */
  onCommit?: (seconds: number) => void;
  /** How long a found API key is trusted without a lookup, in ms (default key-cache.ts KEY_CACHE_MS; tests lengthen it). */
  keyCacheMs?: number;
  /**
   * false: a database without mnemo's schema is refused (MnemoError not_found), not given one: the
   * one-shot commands, as on SQLite they refuse a data directory without mnemo.db. Default true.
   */
  create?: boolean;
  /** The statement limits, PostgreSQL's and the client's (default db.ts TIMEOUTS; tests shorten them). */
  timeouts?: Timeouts;
  /** Hears about an idle pooled connection that broke (the pool replaces it) and when the database stops and starts answering; default: ignored. */
  log?: (line: string) => void;
  /** Told when this open migrated the database: from which schema version to which, and how long it took (seconds). */
  onMigrated?: (from: number, to: number, seconds: number) => void;
}

/** What a server does when another one commits or ends a session (main.ts wires it to the service). */
export interface OutsideHandlers {
  /** Another server committed in `storeId` (null: some store); changeMark() has moved already. */
  change?: (storeId: string | null) => void;
  /** Another server ended this session: its node unmounts it. */
  sessionEnded?: (workspaceId: string, sessionId: string) => void;
  /** Another server redacted a version (`erasedSha256`: its text left the database; null while another version holds it). */
  versionRedacted?: (storeId: string, versionId: string, erasedSha256: string | null) => void;
  /** The listener (re)connected: notices may have been lost meanwhile, so treat everything as changed. */
  resync?: () => void;
}

/** The port on PostgreSQL, plus the cross-host wake-up (issue 14). */
export type PostgresStorage = Storage & {
  /** Always kept here: other servers' notices name their store. */
  storeChangeMark(storeId: string): number;
  /** Another server committed in `storeId` (none: any store): moves the marks (the listener calls it; tests may too). */
  outsideChange(storeId?: string | null): void;
  /**
   * Starts the one dedicated LISTEN connection (listener.ts) and hands other servers' notices to
   * `handlers`; resolves once it listens (or its first try failed: it retries). Closed by close().
   */
  listen(handlers?: OutsideHandlers): Promise<Listener>;
};

/** Any operation (never[]: every parameter list fits); Bound<> keeps each one's own signature. */
type Op = (q: Q, ...args: never[]) => Promise<unknown>;
/** How bind() calls an operation: with the arguments its bound method was given. */
type Call = (op: (q: Q, ...args: unknown[]) => Promise<unknown>, args: unknown[]) => Promise<unknown>;
type Bound<T extends Record<string, Op>> = { [K in keyof T]: T[K] extends (q: Q, ...args: infer A) => infer R ? (...args: A) => R : never };

/**
 * Writes that change nothing a mount or a change feed shows: they owe other servers no notice
 * (notify.ts). Every other write announces its store, or any store if it appended no version.
 */
const QUIET_WRITES = new Set([
  'insertWorkspace', 'insertApiKey', 'markApiKeySeeded', 'revokeApiKey', 'insertReceipt', 'deleteReceipt', 'purgeReceipts',
  'insertCheckpoint', 'deleteCheckpoint', 'insertAdminAction', 'insertSession', 'moveSession', 'endSession',
  'insertConsoleSession', 'touchConsoleSession', 'deleteConsoleSession', 'purgeConsoleSessions',
]);

function trackAll<T extends Record<string, Op>>(ops: T): T {
  const out: Record<string, unknown> = {};
  for (const [name, op] of Object.entries(ops)) out[name] = tracked(op as (q: Q, ...args: unknown[]) => Promise<unknown>, QUIET_WRITES.has(name));
  return out as T;
}

function bind<T extends Record<string, Op>>(ops: T, call: Call): Bound<T> {
  const out: Record<string, unknown> = {};
  for (const [name, op] of Object.entries(ops)) out[name] = (...args: unknown[]) => call(op as (q: Q, ...args: unknown[]) => Promise<unknown>, args);
  return out as Bound<T>;
}

/**
 * Opens the pool and migrates (or refuses: schema/migrations.ts SchemaTooNewError); the pool is
 * closed again on failure. A database that cannot be reached fails as `unavailable` (the caller
 * decides whether to wait: `mnemo serve` does, src/cli/wait-for-database.ts).
 */
export async function openPostgresStorage(url: string, options: PostgresOptions = {}): Promise<PostgresStorage> {
  let pageKey: PageKey;
  try {
    pageKey = await withOwnClient(url, async (c) => {
      if (options.create === false) await assertMnemoDatabase(c);
      const started = performance.now();
      const migrated = await migrate(c);
      if (migrated) options.onMigrated?.(migrated.from, migrated.to, (performance.now() - started) / 1000);
      return readPageKey(c);
    });
  } catch (err) {
    throw isUnreachable(err) ? databaseUnavailable(err) : err;
  }
  const pool = createPool(url, options.poolSize ?? 10, (err) => options.log?.(`mnemo: a PostgreSQL connection broke while idle: ${err.message}`), options.timeouts);
  return composeStorage(url, pool, pageKey, options);
}

async function assertMnemoDatabase(c: pg.ClientBase): Promise<void> {
  const { database, found } = await schemaPresence(c);
  if (!found) {
    throw new MnemoError(
      'not_found',
      `no mnemo database in PostgreSQL database ${JSON.stringify(database)} (it has no schema_version table; mnemo serve creates one; check --database-url or MNEMO_DATABASE_URL)`,
    );
  }
}

function composeStorage(url: string, pool: pg.Pool, pageKey: PageKey, options: PostgresOptions): PostgresStorage {
  const ctx = { clock: options.clock ?? (() => new Date().toISOString()) };
  // Every operation from outside goes through it; inside `atomic` the outermost transaction's does.
  const guard = createOutageGuard(options.log);
  const marks = createChangeMarks();
  // This storage's notices carry it (notify.ts): each transaction's connection is tagged with it.
  const origin = newOrigin();
  let listener: Listener | null = null;
  // Keys found lately, kept while the listener hears revokes (key-cache.ts).
  const keys = createKeyCache({
    hearing: () => listener?.listening() === true,
    ...(options.keyCacheMs === undefined ? {} : { maxAgeMs: options.keyCacheMs }),
  });
  // The keys each transaction (by its client) revoked: forgotten again once it commits.
  const revokedIn = new WeakMap<object, string[]>();
  const wal = createWalSync(pool);
  const memories = memoryOps(ctx);
  const checkpoints = checkpointOps(ctx);
  const writes = trackAll({
    ...storeWrites,
    ...keyWrites,
    ...memories.writes,
    ...versionWrites,
    ...sessionWrites,
    ...receiptWrites,
    ...checkpoints.writes,
    ...retentionWrites,
    ...auditWrites,
    ...consoleSessionWrites,
    ...forkWrites,
    purgeExpiredMemories: sweepExpired,
    // The session's node hears it ended (main.ts unmounts it there), even when another server ended it.
    async endSession(q: Q, workspaceId: string, id: string, now: string) {
      const ended = await sessionWrites.endSession(q, workspaceId, id, now);
      await publishSessionEnded(q, workspaceId, id);
      return ended;
    },
    // Every server forgets the key when it hears this; this one as its transaction commits.
    async revokeApiKey(q: Q, workspaceId: string, id: string, now: string) {
      const key = await keyWrites.revokeApiKey(q, workspaceId, id, now);
      keys.forget(id);
      revokedIn.get(q)?.push(id);
      await publishKeyRevoked(q, workspaceId, id);
      return key;
    },
  });
  const reads = {
    ...storeReads,
    ...liveUsageReads(ctx),
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
    ...consoleSessionReads,
    ...forkReads,
    integrityCheck,
    domainCheck,
  };
  // A request's key is found through the cache from outside a transaction; inside one it is read.
  const findApiKeyByHash = (hash: string) => keys.find(hash, () => guard(() => keyReads.findApiKeyByHash(pool, hash)));

  async function outermost<T>(fn: (c: pg.PoolClient) => Promise<T>, durable: boolean): Promise<T> {
    const started = performance.now();
    // Every write tells the other servers, inside the transaction: they hear it only if it commits.
    const revoked: string[] = [];
    const result = await guard(() => inTransaction(pool, async (c) => {
      adopt(c, origin);
      revokedIn.set(c, revoked);
      const r = await fn(c);
      await publishAtCommit(c, origin);
      return r;
    }, { durable }));
    for (const id of revoked) keys.forget(id);
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
    let view = views.get(c);
    if (view) return view;
    view = {
      ...bind(writes, (op, args) => inSavepoint(c, () => op(c, ...args))),
      ...bind(reads, (op, args) => op(c, ...args)),
      ...shared,
      // The outermost transaction decides durability; a nested one is a savepoint of it.
      atomic: <T>(fn: (tx: Storage) => Promise<T>) => inSavepoint(c, () => fn(view!)),
    };
    views.set(c, view);
    return view;
  }
  // A view holds nothing but its client, so each pooled client's is built once (binding every
  // method for each transaction was a tenth of a millisecond of a mount save's serving thread).
  const views = new WeakMap<pg.PoolClient, Storage>();

  let closed = false;
  const tidy = createTidy(pool);
  const shared = {
    changeMark: marks.changeMark,
    storeChangeMark: marks.storeChangeMark,
    ownWriteMark: marks.ownWriteMark,
    ownWriteCount: marks.ownWriteCount,
    onMarkMoved: marks.onMarkMoved,
    keyMark: keys.mark,
    unsyncedCommits: wal.unsynced,
    syncCommits: () => guard(wal.sync),
    // Off the write path (search-index.ts), on the pool: indexing moves no change mark.
    indexSearchBacklog: (max: number) => guard(() => indexBacklog(pool, max)),
    searchBacklog: () => guard(() => backlogSize(pool)),
    // A deleted store is hidden at once; its rows go here, a slice per step (postgres/schema/v14.ts).
    purgeDeletedStores: () => guard(() => purgeDeletedStore(pool)),
    tidy: () => guard(tidy),
    keepsSearchBacklog: () => true,
    pageKey: () => pageKey,
    // Closing twice is harmless (pg refuses a second end()).
    close: async () => {
      if (closed) return;
      closed = true;
      await listener?.stop();
      await endPool(pool);
    },
  };

  return {
    ...bind(writes, (op, args) => outermost((c) => op(c, ...args), true)),
    ...bind(reads, (op, args) => guard(() => op(pool, ...args))),
    findApiKeyByHash,
    ...shared,
    atomic: <T>(fn: (tx: Storage) => Promise<T>, opts?: AtomicOptions) => outermost((c) => fn(txView(c)), opts?.durable !== false),
    outsideChange: marks.outsideChange,
    async listen(handlers: OutsideHandlers = {}) {
      if (listener) throw new Error('this storage listens already');
      listener = startListener({
        url,
        origin,
        log: options.log ?? (() => {}),
        onNotice: (n) => {
          if (n.kind === 'change') {
            marks.outsideChange(n.storeId);
            handlers.change?.(n.storeId);
          } else if (n.kind === 'key_revoked') keys.forget(n.keyId);
          else if (n.kind === 'version_redacted') handlers.versionRedacted?.(n.storeId, n.versionId, n.erasedSha256);
          else handlers.sessionEnded?.(n.workspaceId, n.sessionId);
        },
        onResync: () => {
          keys.clear();
          marks.outsideChange();
          handlers.resync?.();
        },
      });
      await listener.ready;
      return listener;
    },
  };
}
