/**
 * @module A reader thread's entry, and the writer thread's (sqlite/readers.ts starts them): its own
 * read-only connection to the database file, the same SQL modules the serving connection uses, one
 * call at a time. WAL lets it read while the writer commits; each statement is a read transaction of
 * its own, so it sees every commit made before the call was sent. The writes (`ThreadWrites`) open
 * writable connections of their own at their first use; readers.ts sends them to the writer thread.
 */
import Database from 'better-sqlite3';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { MnemoError } from '../../domain/errors.js';
import type { MoveTreeRequest, ReadMethod, ReadReply, ReadRequest, SyncReads, ThreadWrites, WriteMethod } from './reads.js';
import { createCheckStatements } from './check.js';
import { registerClock } from './expiry.js';
import { applyPragmas, keepJournalsInMemory } from './pragmas.js';
import { createChildWalk, createNameWalk } from './tree.js';
import { createMemoryStatements } from './memories.js';
import { createSearchStatements } from './search.js';
import { createSearchIndex, type SearchIndex } from './search-index.js';
import { createStorePurge, type StorePurge } from './store-purge.js';
import { createStoreStatements } from './stores.js';
import { createVersionStatements } from './versions.js';
import { createFeedStatements } from './feed.js';
import { createHistoryStatements } from './history.js';
import { createMountViewStatements } from './mount-view.js';

const { file, nice } = workerData as { file: string; nice: number | null };
// A reader's nice value (readers.ts READER_NICE), for this thread alone (Linux: by its task id);
// the writer thread keeps the process's priority.
if (nice !== null) {
  try {
    setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), nice);
  } catch {
    // Not Linux, or not allowed: the reader runs at the process's priority.
  }
}
const db = new Database(file, { readonly: true, fileMustExist: true });
db.pragma('query_only = ON');
// A checkpoint or a migration may hold a lock for a moment: wait as the serving connection does.
db.pragma('busy_timeout = 5000');
let now = '';
registerClock(db, () => now);

// The writer indexes the search backlog before it sends a search here: the reader's part is a no-op.
const noIndex: SearchIndex = { indexQueued() {}, indexQueuedAt() {}, indexSearchBacklog: () => 0, hasBacklog: () => false, eraseDue() {}, eraseStep: () => false, mayEraseDue: () => false, recheckDue() {}, erasureDue: () => false };
const checks = createCheckStatements(db);
/**
 * FTS5's integrity check is an INSERT command, which a read-only connection refuses: the domain
 * check alone gets a writable connection of its own, opened at its first use. It writes nothing, but
 * holds the write lock while the index is checked, as it did on the serving connection.
 */
let domainCheck: (() => string[]) | null = null;
function openDomainCheck(): () => string[] {
  const rw = new Database(file, { fileMustExist: true });
  rw.pragma('busy_timeout = 5000');
  registerClock(rw, () => now);
  return createCheckStatements(rw).domainCheck;
}
/**
 * A directory move, on a writable connection of this thread's own (opened at its first use, with the
 * serving connection's durable pragmas): thousands of version rows in one transaction, which on the
 * serving thread held every mount and request for seconds (sqlite/readers.ts). The serving
 * connection's writers wait at its gate meanwhile; its reads go on, seeing the store as before. It
 * runs on the writer thread (readers.ts), at the process's priority: writers wait for it.
 */
let mover: ((input: MoveTreeRequest) => number) | null = null;
function openMover(): (input: MoveTreeRequest) => number {
  const rw = new Database(file, { fileMustExist: true });
  applyPragmas(rw, 'FULL');
  keepJournalsInMemory(rw);
  registerClock(rw, () => now);
  const moveTree = createMemoryStatements(rw, createChildWalk(rw)).moveTree;
  return ({ versionIds, ...input }) => {
    let next = 0;
    return moveTree({
      ...input,
      versionIds: () => {
        const id = versionIds[next++];
        // Counted just before on the serving connection, with its writers held: only another
        // process's write in between could add memories to the directory.
        if (id === undefined) throw new MnemoError('conflict', `the directory ${input.from} changed while it was moved; retry`, { transient: true });
        return id;
      },
    });
  };
}
/**
 * The search index's heavy turns (search-index.ts HEAVY_TURN: batches re-indexed with secure-delete,
 * an erasure's merge steps), on a writable connection of this thread's own (opened at its first use):
 * on the serving thread each held every mount and request for up to a tenth of a second. At
 * synchronous=NORMAL, as the serving connection commits them: the index is derived data, and a turn
 * lost to a power failure is still queued. The serving connection's writers wait at its gate meanwhile.
 */
let indexer: { rw: Database.Database; index: SearchIndex } | null = null;
/**
 * The indexer reads the database file through a memory map: every commit made on the serving
 * connection between two turns drops this connection's page cache (WAL), and secure-delete reads an
 * index page per distinct word it takes out. Read by `pread` into a cold cache, a turn beside a
 * mount's saves took about a sixth longer than on the serving connection, whose cache stays warm
 * across its own commits; mapped, the pages come from the OS page cache without a copy.
 */
const INDEXER_MMAP_BYTES = 256 * 1024 * 1024;
function openIndexer(): { rw: Database.Database; index: SearchIndex } {
  const rw = new Database(file, { fileMustExist: true });
  applyPragmas(rw, 'NORMAL');
  rw.pragma(`mmap_size = ${INDEXER_MMAP_BYTES}`);
  keepJournalsInMemory(rw);
  registerClock(rw, () => now);
  return { rw, index: createSearchIndex(rw, (fn) => fn(), false) };
}
/**
 * A deleted store's removal (store-purge.ts), on the indexer's connection: its index turn comes
 * first in each step, as on the serving connection. Each step writes about five WAL pages a memory,
 * and on the serving thread a step's commit waited 15–40 ms now and then on the file's writeback
 * (test/bench/README.md, stop 51). The serving connection decides when a step may run (its wait).
 */
let purger: StorePurge | null = null;
function openPurger(): StorePurge {
  const { rw, index } = (indexer ??= openIndexer());
  return createStorePurge(rw, index, (fn) => fn());
}
const search = createSearchStatements(db, noIndex);
const history = createHistoryStatements(db);
const versions = createVersionStatements(db, noIndex);
const children = createChildWalk(db);
const mountView = createMountViewStatements(db, children, createNameWalk(db));
const reads: SyncReads = {
  searchMemories: search.searchMemories,
  searchBacklog: search.searchBacklog,
  listMemories: createMemoryStatements(db, children).listMemories,
  listStores: createStoreStatements(db).listStores,
  listVersions: versions.listVersions,
  listTextHolders: versions.listTextHolders,
  listChanges: createFeedStatements(db).listChanges,
  integrityCheck: checks.integrityCheck,
  domainCheck: () => (domainCheck ??= openDomainCheck())(),
  listDirectoryAsOf: history.listDirectoryAsOf,
  hasMemoriesUnderAsOf: history.hasMemoriesUnderAsOf,
  listDirectory: mountView.listDirectory,
  listDirectoryNames: mountView.listDirectoryNames,
};
const writes: ThreadWrites = {
  moveTree: (input: MoveTreeRequest) => (mover ??= openMover())(input),
  indexSearchBacklog: (max: number) => (indexer ??= openIndexer()).index.indexSearchBacklog(max),
  eraseStep: () => (indexer ??= openIndexer()).index.eraseStep(),
  purgeDeletedStores: () => (purger ??= openPurger()).purgeDeletedStores(),
};

parentPort!.on('message', (m: ReadRequest) => {
  now = m.now;
  let reply: ReadReply;
  try {
    const fn = m.method in writes ? writes[m.method as WriteMethod] : reads[m.method as ReadMethod];
    reply = { id: m.id, ok: true, value: (fn as (...a: unknown[]) => unknown)(...m.args) };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    const mnemo = err instanceof MnemoError;
    // SQLite's own code (SQLITE_BUSY: another process's write lock) goes back with the message, so the faces still name it.
    const own = (e as Error & { code?: unknown }).code;
    const code = mnemo ? err.code : typeof own === 'string' ? own : 'internal';
    reply = { id: m.id, ok: false, error: { mnemo, code, message: e.message, details: mnemo ? err.details : {}, ...(e.stack ? { stack: e.stack } : {}) } };
  }
  parentPort!.postMessage(reply);
});
