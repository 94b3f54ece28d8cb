/**
 * @module The SQLite adapter: opens the file with durable pragmas, migrates by user_version and
 * composes the statement sets role by role (the port's roles, port/). Every port method is one
 * transaction; port-view.ts turns the statements' answers into the port's promises.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { observeCommits, outerTx, settleHeld, type Db } from './tx.js';
import type { AtomicOptions, Storage } from '../port.js';
import type { AsyncWrites } from './reads.js';
import { MnemoError } from '../../domain/errors.js';
import { openDatabaseFile, refusedForSpace } from './open-file.js';
import { bindPort, type ConnectionMethods, type PortParts } from './port-view.js';
import { applyPragmas, keepJournalsInMemory, serveWithoutWaiting } from './pragmas.js';
import { MIGRATIONS, SCHEMA_VERSION } from './schema/migrations.js';
import { createAuditStatements } from './audit.js';
import { createConsoleSessionStatements } from './console-sessions.js';
import { createChangeStatements, trackWrites, type ChangeStatements } from './changes.js';
import { createCheckStatements } from './check.js';
import { createCheckpointStatements } from './checkpoints.js';
import { createExpirySweep, registerClock } from './expiry.js';
import { createKeyStatements } from './keys.js';
import { createBulkImport, type ImportedWrite } from './bulk.js';
import { createMemoryStatements, createTreeCount } from './memories.js';
import { admittedWrites } from './admission.js';
import { createMountViewStatements, listBigDirectoriesElsewhere, namesOfBigDirectoriesElsewhere } from './mount-view.js';
import { createHistoryStatements } from './history.js';
import { createReceiptStatements } from './receipts.js';
import { createSearchStatements, drainSearchBacklog } from './search.js';
import { createSearchIndex, HEAVY_TURN, type SearchIndex } from './search-index.js';
import { createSessionStatements } from './sessions.js';
import { createStoreStatements } from './stores.js';
import { createChildWalk, createNameWalk } from './tree.js';
import { createWalSync } from './sync.js';
import { createWriteBehind, replayLeftJournal } from './write-behind.js';
import { createVersionStatements } from './versions.js';
import { readPageKey } from './page-key.js';
import { createForkStatements } from './forks.js';
import { createStorePurge } from './store-purge.js';
import { createFeedStatements } from './feed.js';
import { createRetention } from './retention.js';
import { DEFAULT_READERS, openReaders } from './readers.js';
import { BACKSTOP_PAGES, startCheckpointer, truncateThrough, waitForPasses, walBehind, type Checkpointer } from './wal-checkpointer.js';


/** Pragmas that can be read back on the adapter's own connection (the per-connection ones included). */
export type InspectablePragma = 'journal_mode' | 'synchronous' | 'foreign_keys' | 'secure_delete' | 'busy_timeout' | 'user_version' | 'wal_autocheckpoint';

/** The port plus a read-only look at the connection settings, for tests and diagnostics. */
export interface SqliteStorage extends Storage {
  readPragma(name: InspectablePragma): unknown;
  /** Runs `fn` as one transaction over `tx` (bulk loads, the bench): `atomic` by another name. */
  batch<T>(fn: (tx: Storage) => Promise<T>): Promise<T>;
  /** Appends already-valid writes in one transaction (sqlite/bulk.ts): the bench's and tests' large stores. Counted by ownWriteCount as one write. */
  importWrites(storeId: string, writes: ImportedWrite[]): void;
  /** How many worker threads answer the reads that grow with the store (0: they run inline). */
  readonly readerThreads: number;
  /** True while the WAL is long and background checkpoints have not copied it all (wal-checkpointer.ts `walBehind`). False without them. */
  walCheckpointsBehind(): boolean;
}

export interface SqliteOptions {
  /** What readers take as now when they hide expired memories (RFC 3339 UTC with milliseconds). */
  clock?: () => string;
  /** Told how long each outermost write transaction took, in seconds, commit included (metrics). */
  onCommit?: (seconds: number) => void;
  /** Told how long each WAL sync (the fdatasync behind `syncCommits`) took, in seconds (metrics). */
  onSync?: (seconds: number) => void;
  /**
   * Checkpoint the WAL from a worker thread instead of inside commits (sqlite/wal-checkpointer.ts): for
   * a long-running server, whose event loop serves every mount. `log` hears if the worker fails.
   */
  backgroundCheckpoints?: { log: (line: string) => void };
  /**
   * The connection's `synchronous` (default FULL: a commit is on disk when it returns). The bench
   * measures the engine at NORMAL too, the setting of mount saves (DESIGN §5).
   */
  synchronous?: 'FULL' | 'NORMAL';
  /**
   * Answer a mount's journaled writes before their commit (sqlite/write-behind.ts), with the journal
   * beside the file. Only for the one process that owns the data directory (`mnemo serve`): a journal
   * left by a crash is replayed at open. `log` hears replays and writes lost to a failed commit.
   */
  writeBehind?: { log: (line: string) => void; holdMs?: number };
  /**
   * Replay and empty a journal a crashed server left (sqlite/write-behind.ts `replayLeftJournal`),
   * without a write-behind of its own: for `mnemo mount` and `mnemo mcp`, while they hold the data
   * dir's server lock (no server runs). `log` hears the replay.
   */
  replayJournal?: { log: (line: string) => void };
  /**
   * Worker threads with read-only connections for the reads that grow with the store (searches,
   * listing pages, the checks: sqlite/readers.ts); default DEFAULT_READERS, 0 runs them inline.
   */
  readers?: number;
  /**
   * Open the file read-only (`mnemo check`, `keys list`, `workspaces list`): nothing is migrated
   * and no pragma is written, so a file this process may not write can still be read. Every write
   * then fails; a schema other than this code's is refused.
   */
  readOnly?: boolean;
  /**
   * Asked before an older file is migrated (from its schema version to this code's), or, opened
   * read-only, refused: it throws to refuse (a server of an older release holds the data dir, or
   * the command never migrates); what it returns is released once the migration is done. Without
   * it an older file is migrated (`mnemo serve`, which owns the data dir).
   */
  claimMigration?: (from: number, to: number) => { release(): void };
  /**
   * How long a write waits for another process's write lock before it fails with SQLITE_BUSY
   * (sqlite/lock-wait.ts), in milliseconds; default LOCK_WAIT_MS (5 s). It waits on a timer, never on the thread.
   */
  lockWaitMs?: number;
  /** Told +1 when a write starts waiting for another process's write lock and -1 when it stops (a gauge: metrics). */
  onLockWait?: (delta: 1 | -1) => void;
  /** Told when this open migrated the file: from which schema version to which, and how long it took (seconds). */
  onMigrated?: (from: number, to: number, seconds: number) => void;
}

export function openSqliteStorage(file: string, _options: SqliteOptions = {}): SqliteStorage {
  const readOnly = _options.readOnly === true && file !== ':memory:';
  if (file !== ':memory:' && !readOnly) mkdirSync(dirname(file), { recursive: true });
  const db = file === ':memory:' ? new Database(file) : openDatabaseFile(file, { readOnly, create: true });
  try {
    if (readOnly) {
      db.pragma('busy_timeout = 5000');
      requireCurrentSchema(db, file, _options.claimMigration);
    } else {
      applyPragmas(db, _options.synchronous ?? 'FULL');
      migrate(db, _options.claimMigration, _options.onMigrated);
    }
  } catch (err) {
    db.close();
    throw refusedForSpace(file, err);
  }
  keepJournalsInMemory(db);
  const pageKey = readPageKey(db);
  const clock = _options.clock ?? (() => new Date().toISOString());
  registerClock(db, clock);
  if (_options.onCommit) observeCommits(db, _options.onCommit);
  let checkpointer: Checkpointer | null = null;
  if (_options.backgroundCheckpoints && file !== ':memory:') {
    db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
    checkpointer = startCheckpointer(file, _options.backgroundCheckpoints.log);
    truncateThrough(db, checkpointer);
  }
  // Prepared before the write counter: index upkeep changes no memory, so it must not move the mark.
  // Its batches commit without an fsync of their own (walSync, made below: derived data).
  const searchIndex = createSearchIndex(db, (fn) => walSync.derived(fn));
  // The same for removing deleted stores' rows: no reader sees them, so no cache should drop. With
  // reader threads the steps run on the writer thread instead (threadWrites), which moves the mark.
  const storePurge = createStorePurge(db, searchIndex, (fn) => walSync.derived(fn), waitForPasses(checkpointer));
  const { purgeDue, ...purgeHere } = storePurge;
  const writes = trackWrites(db);
  const changes = createChangeStatements(db, writes);
  const children = createChildWalk(db);
  const walSync = createWalSync(db, file, _options.onSync);
  const search = createSearchStatements(db, searchIndex);
  const checks = createCheckStatements(db);
  const stores = createStoreStatements(db);
  const memoryRows = createMemoryStatements(db, children);
  const treeCount = createTreeCount(db);
  const mountView = createMountViewStatements(db, children, createNameWalk(db));
  const versions = createVersionStatements(db, searchIndex);
  const feed = createFeedStatements(db);
  const retention = createRetention(db, searchIndex);
  const { listDirectoryAsOf, hasMemoriesUnderAsOf, ...history } = createHistoryStatements(db);
  // The reads that grow with the store run on reader threads (sqlite/readers.ts); the SQL is the same.
  const readers = openReaders(file, _options.readers ?? DEFAULT_READERS, clock, {
    searchMemories: search.searchMemories,
    listMemories: memoryRows.listMemories,
    listStores: stores.listStores,
    listVersions: versions.listVersions,
    listTextHolders: versions.listTextHolders,
    listChanges: feed.listChanges,
    integrityCheck: checks.integrityCheck,
    domainCheck: checks.domainCheck,
    searchBacklog: search.searchBacklog,
    listDirectoryAsOf,
    hasMemoriesUnderAsOf,
    listDirectory: mountView.listDirectory,
    listDirectoryNames: mountView.listDirectoryNames,
  });

  const { revokes, ...keys } = createKeyStatements(db);
  const connection: ConnectionMethods = {
    ...stores,
    ...keys,
    ...memoryRows,
    ...admittedWrites({ ...memoryRows, ...stores, ...mountView }),
    ...versions,
    ...mountView,
    // A big directory's listing grows with it: a reader thread reads it.
    listDirectory: listBigDirectoriesElsewhere(mountView.listDirectory, readers.threads > 0 ? readers.reads.listDirectory : null, () => settleHeld(db)),
    listDirectoryNames: namesOfBigDirectoriesElsewhere(mountView, readers.threads > 0 ? readers.reads.listDirectoryNames : null, () => settleHeld(db)),
    ...history,
    nextExpiry: changes.nextExpiry,
    ...createSessionStatements(db),
    ...createReceiptStatements(db),
    ...createCheckpointStatements(db, stores.liveStoreUsage),
    ...createAuditStatements(db),
    ...createConsoleSessionStatements(db),
    ...createForkStatements(db),
    // The history role's point lookup and its writes (each a bounded batch: sqlite/retention.ts).
    previousVersion: feed.previousVersion,
    lastCommitSeq: feed.lastCommitSeq,
    storesWithRetention: retention.storesWithRetention,
    pruneVersions: retention.pruneVersions,
    purgeExpiredMemories: createExpirySweep(db),
    indexSearchBacklog: search.indexSearchBacklog,
    eraseSearchRemnants: searchIndex.eraseStep,
    ...purgeHere,
  };
  const writeBehind = _options.writeBehind && file !== ':memory:' ? createWriteBehind(db, file, walSync, memoryRows, _options.writeBehind) : null;
  if (_options.replayJournal && !writeBehind && !readOnly && file !== ':memory:') replayLeftJournal(db, file, memoryRows, _options.replayJournal.log);
  const { port, gate, counted } = bindPort(db, walSync, {
    connection,
    ...(readers.writes ? { asideWrites: threadWrites(readers.writes, searchIndex, purgeDue, treeCount, changes.ownCommitAside) } : {}),
    reads: {
      async searchMemories(storeId, q) {
        // The writer indexes the queue first (a write, so here, through the gate), in batches that
        // let others in between: the reader then sees the index as of every answered write.
        if (q.mode === 'fts') await drainSearchBacklog((max) => port.indexSearchBacklog(max));
        return readers.reads.searchMemories(storeId, q);
      },
      listMemories: readers.reads.listMemories,
      listStores: readers.reads.listStores,
      listVersions: readers.reads.listVersions,
      listTextHolders: readers.reads.listTextHolders,
      listChanges: readers.reads.listChanges,
      integrityCheck: readers.reads.integrityCheck,
      domainCheck: readers.reads.domainCheck,
      searchBacklog: readers.reads.searchBacklog,
      listDirectoryAsOf: readers.reads.listDirectoryAsOf,
      hasMemoriesUnderAsOf: readers.reads.hasMemoriesUnderAsOf,
      syncCommits: walSync.sync,
    },
    txReads: {
      async searchMemories(storeId, q) {
        if (q.mode === 'fts') await drainSearchBacklog(search.indexSearchBacklog);
        return readers.reads.searchMemories(storeId, q);
      },
    },
    local: {
      changeMark: changes.changeMark,
      ownWriteMark: changes.ownWriteMark,
      onMarkMoved: changes.onMarkMoved,
      // Another process's commit may be a revoke (`mnemo keys revoke` beside the server): any counts,
      // looked for at once, so an event stream's next look after a revoke reads its key.
      keyMark: () => revokes() + changes.outsideMarkNow(),
      // A held batch counts: the background sync must come back for it.
      unsyncedCommits: () => walSync.unsynced() + (writeBehind?.open ? 1 : 0),
      keepsSearchBacklog: () => true,
      pageKey: () => pageKey,
    },
    close() {
      writeBehind?.close();
      readers.close();
      checkpointer?.stop();
      if (db.open && readOnly) db.close();
      if (db.open) {
        // At FULL (the connection's setting between operations), so relaxed commits reach the disk.
        truncateWal(db);
        db.close();
      }
      walSync.close();
    },
  }, writeBehind, {
    ...(_options.lockWaitMs === undefined ? {} : { budgetMs: _options.lockWaitMs }),
    ...(_options.onLockWait ? { onWait: _options.onLockWait } : {}),
  });
  // Last: opening (the migration, a journal's replay) may wait for the lock as a CLI always did.
  if (!readOnly) serveWithoutWaiting(db);
  return {
    ...port,
    // Asked after every API write (service/idempotency.ts): with nothing due it answers at once,
    // not after the writer gate, which a following group's transaction may hold.
    eraseSearchRemnants: () => (searchIndex.mayEraseDue() ? port.eraseSearchRemnants!() : Promise.resolve(false)),
    readPragma(name) {
      return db.pragma(name, { simple: true });
    },
    batch: (fn) => port.atomic(fn),
    // Beside the port, but one write of this process like any other: a mount's save must not take it for part of its own (fs/storage-view.ts `saved`).
    importWrites: counted(createBulkImport(db, searchIndex)),
    readerThreads: readers.threads,
    walCheckpointsBehind: () => (checkpointer ? walBehind(checkpointer.wal()) : false),
  };
}

/**
 * The last checkpoint, at close: it copies the WAL into the database and empties it. A checkpoint
 * the worker was still running when it was told to stop holds the checkpoint lock (the worker's
 * connection closes only as its thread ends), and SQLite answers busy at once: wait a moment and try
 * again, for at most about 2 s, rather than leave a full WAL behind.
 */
function truncateWal(db: Db): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let attempt = 0; attempt < 200; attempt++) {
    const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    if (!result || result.busy === 0) return;
    Atomics.wait(pause, 0, 0, 10);
  }
}

/**
 * The writes the writer thread makes on writable connections of its own (sqlite/readers.ts), each
 * counted as this connection's own (the change mark moves, even when one fails, as the write counter
 * does for a write that rolled back; their commits are not taken for another process's):
 * - a directory move, its version ids made here (the service's id source, which may be injected),
 *   one per memory it moves, counted with the writers held (port-view.ts);
 * - the search index's heavy turns: the serving connection tries each turn first and runs it itself
 *   unless it is heavy (search-index.ts HEAVY_TURN). The index changes no memory, but a commit
 *   from another connection cannot be told apart from another process's, so the mark moves;
 * - a step of a deleted store's removal (store-purge.ts), once the serving connection's `purgeDue`
 *   says one may run: about five WAL pages a memory, whose commits on the serving thread now and then
 *   waited 15–40 ms on the file's writeback. No reader sees those rows, but the mark moves, as above.
 */
function threadWrites(
  writes: AsyncWrites,
  index: SearchIndex,
  purgeDue: () => boolean,
  count: (storeId: string, from: string) => number,
  ownCommitAside: ChangeStatements['ownCommitAside'],
): NonNullable<PortParts['asideWrites']> {
  let purged = false;
  return {
    moveTree(elsewhere, { versionIds, ...input }) {
      const ids = Array.from({ length: count(input.storeId, input.from) }, () => versionIds());
      return elsewhere(() => ownCommitAside(() => writes.moveTree({ ...input, versionIds: ids })));
    },
    async indexSearchBacklog(elsewhere, max) {
      const left = index.indexSearchBacklog(max, 'elsewhere');
      return left === HEAVY_TURN ? elsewhere(() => ownCommitAside(() => writes.indexSearchBacklog(max))) : left;
    },
    async eraseSearchRemnants(elsewhere) {
      return index.erasureDue() ? elsewhere(() => ownCommitAside(() => writes.eraseStep())) : false;
    },
    async purgeDeletedStores(elsewhere) {
      if (!purgeDue()) {
        // The writer thread's last step of a store marks its erasure (store-purge.ts), which this connection's flag does not see.
        if (purged) index.recheckDue();
        purged = false;
        return false;
      }
      purged = true;
      return elsewhere(() => ownCommitAside(() => writes.purgeDeletedStores()));
    },
  };
}

/** A read-only open cannot migrate: an older file is read by a server first, a newer one by a newer mnemo. */
function requireCurrentSchema(db: Db, file: string, claim: SqliteOptions['claimMigration']): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > SCHEMA_VERSION) throw new Error(`database schema version ${current} is newer than this mnemo understands (${SCHEMA_VERSION})`);
  if (current < SCHEMA_VERSION) {
    // The claim may say why better (a server of an older release holds the file).
    claim?.(current, SCHEMA_VERSION).release();
    throw olderSchemaRefusal(file, current);
  }
}

/** The refusal of a command that does not migrate: `mnemo serve` does, owning the data dir. */
export function olderSchemaRefusal(file: string, current: number): MnemoError {
  return new MnemoError('invalid_request', `${file} has schema version ${current}, older than this mnemo's (${SCHEMA_VERSION}); start mnemo serve on it once to migrate it, then run this again`);
}

function migrate(db: Db, claim: SqliteOptions['claimMigration'], onMigrated: SqliteOptions['onMigrated']): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > SCHEMA_VERSION) {
    // A newer mnemo wrote this file; running old code on it could break its invariants.
    throw new Error(`database schema version ${current} is newer than this mnemo understands (${SCHEMA_VERSION})`);
  }
  const pending = MIGRATIONS.filter((m) => m.version > current);
  if (pending.length === 0) return;
  const held = claim?.(current, SCHEMA_VERSION);
  const started = performance.now();
  try {
    db.transaction(() => {
      for (const m of pending) {
        db.exec(m.sql);
        db.pragma(`user_version = ${m.version}`);
      }
    }).immediate();
  } finally {
    held?.release();
  }
  onMigrated?.(current, SCHEMA_VERSION, (performance.now() - started) / 1000);
}
