/**
 * @module The storage port, split by role. Each method is one domain operation, atomic inside the
 * adapter; the business rules it applies are pure functions in src/domain/ (or live in the service),
 * so an adapter only stores, finds and enforces what its schema can state. The SQLite adapter
 * implements it now; a shared PostgreSQL adapter can implement it later without touching the faces,
 * and runs the same conformance suites (test/src/storage/). The reads whose cost grows with the
 * store (searches, listing pages, the checks) return promises: the SQLite adapter runs them off the
 * event loop (sqlite/readers.ts), and they see every write answered before the call. Point lookups
 * and writes are still synchronous (see the README's Layout).
 */
import type { AuditStorage } from './audit.js';
import type { CheckpointStorage } from './checkpoints.js';
import type { KeyStorage } from './keys.js';
import type { MaintenanceStorage } from './maintenance.js';
import type { MemoryStorage } from './memories.js';
import type { MountViewStorage } from './mount-view.js';
import type { ReceiptStorage } from './receipts.js';
import type { SearchStorage } from './search.js';
import type { SessionStorage } from './sessions.js';
import type { StoreStorage } from './stores.js';
import type { TransactionStorage } from './transactions.js';

export type { AuditStorage } from './audit.js';
export type { CheckpointStorage, InsertCheckpointInput, ReferencedMemory } from './checkpoints.js';
export type { KeyStorage } from './keys.js';
export type { MaintenanceStorage } from './maintenance.js';
export type {
  CreateMemoryInput,
  DeleteMemoryInput,
  MemoryStorage,
  MoveMemoryInput,
  MoveTreeInput,
  SaveMemoryAtInput,
  UpdateMemoryInput,
  WriteResult,
  WriteStamp,
} from './memories.js';
export type { DirectoryListing, MountViewStorage } from './mount-view.js';
export type { Receipt, ReceiptScope, ReceiptStorage } from './receipts.js';
export type { SearchStorage } from './search.js';
export type { SessionStorage } from './sessions.js';
export type { StoreStorage, StoreUsage } from './stores.js';
export type { AtomicOptions, TransactionStorage } from './transactions.js';

/** The whole port: every role one adapter implements. */
export interface Storage
  extends StoreStorage,
    KeyStorage,
    MemoryStorage,
    MountViewStorage,
    SessionStorage,
    ReceiptStorage,
    CheckpointStorage,
    SearchStorage,
    TransactionStorage,
    MaintenanceStorage,
    AuditStorage {}
