/**
 * @module The storage port, split by role. Each method is one domain operation, atomic inside the
 * adapter; the business rules it applies are pure functions in src/domain/ (or live in the service),
 * so an adapter only stores, finds and enforces what its schema can state. The SQLite adapter
 * implements it now; a shared PostgreSQL adapter can implement it later without touching the faces,
 * and runs the same conformance suites (test/src/storage/). Every method returns a promise, so an
 * adapter may answer from a pool of connections (PostgreSQL) or a worker thread; the SQLite adapter
 * answers point lookups and writes on its one connection at once (settled promises) and runs the
 * reads whose cost grows with the store (searches, listing pages, the checks) off the event loop
 * (sqlite/readers.ts), where they see every write answered before the call. Five methods stay
 * synchronous because they only read what the adapter keeps in memory and never touch the
 * database (and `keepsSearchBacklog`, a constant of the engine): `changeMark`, `ownWriteMark` and `ownWriteCount` (and the optional `storeChangeMark` and `onMarkMoved`; asked on every mount file operation, which must not
 * wait a turn to learn that nothing changed), `pageKey` (read at open), `keyMark` (asked by every event stream's poll and every stdio `mnemo mcp` tool call; SQLite's asks `PRAGMA data_version` each time) and `unsyncedCommits` (a gauge). A transaction's calls
 * go through the `tx` it is handed (transactions.ts).
 */
import type { AuditStorage } from './audit.js';
import type { CheckpointStorage } from './checkpoints.js';
import type { ConsoleSessionStorage } from './console-sessions.js';
import type { FeedStorage } from './feed.js';
import type { ForkStorage } from './forks.js';
import type { HistoryStorage } from './history.js';
import type { KeyStorage } from './keys.js';
import type { MaintenanceStorage } from './maintenance.js';
import type { MemoryStorage } from './memories.js';
import type { MountViewStorage } from './mount-view.js';
import type { PageKeyStorage } from './page-key.js';
import type { ReceiptStorage } from './receipts.js';
import type { SearchStorage } from './search.js';
import type { SessionStorage } from './sessions.js';
import type { StoreStorage } from './stores.js';
import type { TransactionStorage } from './transactions.js';

export type { AuditStorage } from './audit.js';
export type { CheckpointStorage, InsertCheckpointInput, ReferencedMemory } from './checkpoints.js';
export type { ConsoleSessionStorage, StoredConsoleSession } from './console-sessions.js';
export type { FeedStorage, PruneWindow } from './feed.js';
export type { ForkBatchInput, ForkStorage } from './forks.js';
export type { HistoryListing, HistoryStorage, MetaAsOf, PathVersion } from './history.js';
export type { KeyStorage } from './keys.js';
export type { MaintenanceStorage } from './maintenance.js';
export type {
  Admission,
  CreateMemoryInput,
  DeleteMemoryInput,
  JournaledWrite,
  MemoryStorage,
  MoveMemoryInput,
  MoveTreeInput,
  SaveMemoryAtInput,
  UpdateMemoryInput,
  WriteFound,
  WriteResult,
  WriteStamp,
} from './memories.js';
export type { DirectoryListing, DirectoryNames, MountViewStorage } from './mount-view.js';
export type { PageKey, PageKeyStorage } from './page-key.js';
export type { Receipt, ReceiptScope, ReceiptStorage } from './receipts.js';
export type { SearchStorage } from './search.js';
export type { SessionStorage } from './sessions.js';
export type { LiveStoreUsage, StoreStorage, StoreUsage } from './stores.js';
export type { AtomicOptions, TransactionStorage } from './transactions.js';
export type { Synchronous } from './synchronous.js';

/** The whole port: every role one adapter implements. */
export interface Storage
  extends StoreStorage,
    KeyStorage,
    MemoryStorage,
    FeedStorage,
    ForkStorage,
    MountViewStorage,
    HistoryStorage,
    SessionStorage,
    ReceiptStorage,
    CheckpointStorage,
    SearchStorage,
    TransactionStorage<Storage>,
    MaintenanceStorage,
    AuditStorage,
    ConsoleSessionStorage,
    PageKeyStorage {}
