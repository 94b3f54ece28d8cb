/**
 * @module The checkpoints role: immutable bundles with one latest pointer per (agent, session), and
 * the lookups a restore makes for the memories a bundle references. The latest rules are pure
 * functions (src/domain/checkpoint-rules.ts) the adapter applies inside its transaction.
 */
import type { Checkpoint, MemoryMeta } from '../../domain/types.js';
import type { StoreUsage } from './stores.js';

export interface InsertCheckpointInput {
  /** The checkpoint without its revision and latest flag: the adapter assigns both. */
  checkpoint: Omit<Checkpoint, 'revision' | 'isLatest'>;
  /** undefined: no guard; null: there must be no checkpoint yet; an id: it must be the latest. */
  expectedLatestId: string | null | undefined;
  /**
   * The service's limit check (service/limits.ts), run in the insert's transaction on the store's
   * usage, which counts its checkpoints' bytes with its memories'; it throws to refuse. Undefined: none.
   */
  admit?: (usage: StoreUsage) => void;
  /**
   * Whether `admit` would look closer at this usage (a save near the byte limit), as a memory
   * write's `Admission.nearLimit`: only then does the adapter read the usage again without the
   * memories that expired (the counter still holds them until a write or the sweep deletes them)
   * and show `admit` that instead, so expired memories never refuse a checkpoint that fits.
   */
  nearLimit?: (usage: StoreUsage) => boolean;
}

/** What a checkpoint reference points at now. */
export type ReferencedMemory =
  | { state: 'live'; memory: MemoryMeta }
  | { state: 'expired' }
  | { state: 'missing' };

export interface CheckpointStorage {
  /** Commits the bundle and moves the (agent, session) latest pointer in one transaction. */
  insertCheckpoint(input: InsertCheckpointInput): Promise<Checkpoint>;
  getCheckpoint(storeId: string, id: string): Promise<Checkpoint | null>;
  getLatestCheckpoint(storeId: string, agentId: string, sessionId: string): Promise<Checkpoint | null>;
  /** Refuses (conflict) to delete the latest of its (agent, session). */
  deleteCheckpoint(storeId: string, id: string): Promise<void>;
  /** Finds a memory by id (preferred) or path, telling expired and missing apart. */
  findReferencedMemory(storeId: string, ref: { memoryId: string | null; path: string | null }): Promise<ReferencedMemory>;
}
