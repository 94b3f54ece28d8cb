/**
 * @module The history role: what a mount's `.history` directory and a point-in-time mount read.
 * Every answer is an indexed lookup or a walk of one directory level (by path, over the versions),
 * never a scan of the store: reading history must not slow the live tree.
 */
import type { MemoryMeta } from '../../domain/types.js';

/** One unredacted version as `.history/<path>/v<number>` shows it. */
export interface PathVersion {
  versionId: string;
  memoryId: string;
  /** Counts the path's versions from 1, oldest first; a redacted one leaves its gap. */
  number: number;
  deleted: boolean;
  sizeBytes: number;
  createdAt: string;
}

/** The child names of a directory level of history: paths that ever held a memory below it. */
export interface HistoryListing {
  /** Names of paths that held a memory directly in the directory. */
  files: string[];
  /** Names of subdirectories implied by deeper paths that held one. */
  dirs: string[];
  truncated?: boolean;
}

/** A memory as it was at an instant; `redacted`: its version then was redacted since (no bytes). */
export type MetaAsOf = MemoryMeta & { redacted: boolean };

export interface HistoryStorage {
  /** The unredacted versions whose path was `path`, oldest first, at most `limit`. */
  listPathVersions(storeId: string, path: string, limit: number): Promise<PathVersion[]>;
  /** Version `number` of `path` without its content (a stat), or null: one indexed lookup. */
  getPathVersion(storeId: string, path: string, number: number): Promise<PathVersion | null>;
  /** Version `number` of `path` with its content as UTF-8 bytes (empty for a deleted one), or null. */
  getPathVersionBytes(storeId: string, path: string, number: number): Promise<(PathVersion & { bytes: Buffer }) | null>;
  /** Child names of `dir` ("/" or "/a/b") over every path that ever held a memory, at most `limit` names. */
  listHistoryDirectory(storeId: string, dir: string, limit: number): Promise<HistoryListing>;
  /** True if some path strictly below `dir` ever held a memory. */
  hasHistoryUnder(storeId: string, dir: string): Promise<boolean>;
  /** The memory at `path` at instant `asOf` (its latest version created at or before it, not deleted), or null. */
  getMemoryMetaAsOf(storeId: string, path: string, asOf: string): Promise<MetaAsOf | null>;
  /** Its content then as UTF-8 bytes; null if there was none or its version was redacted since. */
  getMemoryBytesAsOf(storeId: string, path: string, asOf: string): Promise<(MetaAsOf & { bytes: Buffer }) | null>;
  /**
   * The direct children of `dir` at `asOf`, at most `limit` entries. A child directory is checked as
   * hasMemoriesUnderAsOf: a walk that grows with the history below it when nothing stood there then,
   * so the SQLite adapter answers both on a reader thread.
   */
  listDirectoryAsOf(storeId: string, dir: string, asOf: string, limit: number): Promise<{ files: MetaAsOf[]; dirs: string[]; truncated?: boolean }>;
  /** True if some memory lived strictly below `dir` at `asOf`: the versions below it, in path order, until one that stood there then. */
  hasMemoriesUnderAsOf(storeId: string, dir: string, asOf: string): Promise<boolean>;
}
