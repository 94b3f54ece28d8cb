/** @module The storage port's agent-continuity part: checkpoints, reference lookups and search. */
import type { Checkpoint, MemoryMeta, SearchPage, SearchQuery } from '../types.js';

export interface InsertCheckpointInput {
  /** The checkpoint without its revision and latest flag: the adapter assigns both. */
  checkpoint: Omit<Checkpoint, 'revision' | 'isLatest'>;
  /** undefined: no guard; null: there must be no checkpoint yet; an id: it must be the latest. */
  expectedLatestId: string | null | undefined;
}

/** What a checkpoint reference points at now. */
export type ReferencedMemory =
  | { state: 'live'; memory: MemoryMeta }
  | { state: 'expired' }
  | { state: 'missing' };

export interface ContinuityStorage {
  /** Commits the bundle and moves the (agent, session) latest pointer in one transaction. */
  insertCheckpoint(input: InsertCheckpointInput): Checkpoint;
  getCheckpoint(storeId: string, id: string): Checkpoint | null;
  getLatestCheckpoint(storeId: string, agentId: string, sessionId: string): Checkpoint | null;
  /** Refuses (conflict) to delete the latest of its (agent, session). */
  deleteCheckpoint(storeId: string, id: string): void;
  /** Finds a memory by id (preferred) or path, telling expired and missing apart. */
  findReferencedMemory(storeId: string, ref: { memoryId: string | null; path: string | null }): ReferencedMemory;
  /** Full-text search first indexes every queued write (or refuses, overloaded), so it always sees every committed one. */
  searchMemories(storeId: string, q: SearchQuery): Promise<SearchPage>;
  /** Indexes up to `max` memories written since their last indexing, in one transaction; returns how many still wait. */
  indexSearchBacklog(max: number): number;
  /** Deletes memories that expired at or before `now` (as the next write would), at most `max` in one transaction; returns how many. */
  purgeExpiredMemories(now: string, max?: number): number;
}
