/**
 * @module The Mounter port: the core asks for mounts, fs/ implements them, main.ts injects it.
 * A mount reaches its store only through what the service hands it with the request: the service's
 * writes and a per-store reader (src/service/mount-reader.ts), never the storage below them.
 */
import type { CommitListener } from './commit-signal.js';
import type { Durability } from './durability.js';
import type { IdGenerator } from './ids.js';
import type { Limits } from './limits.js';
import type { DirectoryListing, DirectoryNames, HistoryListing, PathVersion, WriteResult } from '../storage/port.js';
import type { Actor, Caller, Change, KeptAttrs, Memory, MemoryMeta, MemoryWrite, Store } from '../domain/types.js';

export interface MountRequest {
  storeId: string;
  /** Absolute host directory to mount at (created if missing). */
  hostPath: string;
  /** Asked for read-only; an archived store mounts read-only whatever was asked (`mountAccess`). */
  readOnly: boolean;
  /** Who the mount's writes are attributed to (a session_actor for sessions). */
  actor: Actor;
  /** The service the mount writes through and reads its store from. */
  service: MountService;
  /** A point-in-time mount: the store as it was at this instant (read-only, readOnly is true). */
  asOf?: string;
}

/**
 * A mount's save of a file at its path (the memory there, or a new one with `memoryId`).
 * `durable`: on disk before it answers whatever MNEMO_MOUNT_SYNC says, for a save fsync() asked
 * for (fs/save-points.ts).
 */
export interface SaveAtInput {
  path: string;
  content: string;
  memoryId: string;
  mode?: number;
  attrs?: KeptAttrs;
  durable?: boolean;
  /** The mount made this file and expects its path free: a save that adds a memory (port `SaveMemoryAtInput.adds`). */
  adds?: boolean;
}

/** A mount's append (MountService.appendToMemory): `content` is the text whose sha is `onto`, with `appended` after it. */
export interface AppendWrite {
  content: string;
  onto: string;
  appended: string;
}

/**
 * What a mount may call: the writes a file system makes (the service's own methods, with the same
 * rules as the API's), its clock and ids, and its store's reader. The service is one. The writes are promises: on a remote
 * database each is a round trip, and the mount orders its operations itself (fs/op-queue.ts).
 */
export interface MountService {
  saveMemoryAt(caller: Caller, storeId: string, input: SaveAtInput): Promise<WriteResult>;
  updateMemory(caller: Caller, storeId: string, memoryId: string, write: MemoryWrite, attrs?: KeptAttrs, durable?: boolean): Promise<Memory>;
  /** A save of a file only appended to: kept after the newest text if another writer's save landed first (operations.ts). */
  appendToMemory(caller: Caller, storeId: string, memoryId: string, write: AppendWrite, attrs?: KeptAttrs, durable?: boolean): Promise<Memory>;
  moveMemory(caller: Caller, storeId: string, memoryId: string, path: string): Promise<Memory>;
  moveTree(caller: Caller, storeId: string, from: string, to: string): Promise<number>;
  deleteMemory(caller: Caller, storeId: string, memoryId: string, expectedSha256?: string): Promise<void>;
  setMemoryMode(caller: Caller, storeId: string, memoryId: string, mode: number): Promise<void>;
  setMemoryTimes(caller: Caller, storeId: string, memoryId: string, times: { atimeMs?: number; mtimeMs?: number }): Promise<void>;
  setMemoryOwner(caller: Caller, storeId: string, memoryId: string, owner: { uid?: number; gid?: number }): Promise<void>;
  setMemoryAttrs(caller: Caller, storeId: string, memoryId: string, attrs: KeptAttrs): Promise<void>;
  /** The store's limits and usage, for statfs (df). */
  readonly limits: Pick<Limits, 'storeRoom'>;
  /** fsync(2) on a mount waits for `sync()`. */
  readonly durability: Pick<Durability, 'sync'>;
  clock(): string;
  readonly ids: IdGenerator;
  /** The store's reader; with `asOf`, the store as it was at that instant (it never changes). */
  mountReader(storeId: string, asOf?: string): MountReader;
  /** Calls `fn` after each commit of this process, with its store and writer where known; returns the unsubscribe. */
  onCommit(fn: CommitListener): () => void;
}

/**
 * One store's reads for a mount, by path and by id: the mount's read model. Point lookups and
 * bounded listings, cheap enough for every file operation (the mount memoises them: fs/storage-view.ts).
 * Reads are promises (a remote database answers later); the two marks are this process's own
 * counters and stay synchronous, so a memoised answer is checked without a round trip.
 */
export interface MountReader {
  readonly storeId: string;
  /** The store's row; null once it is deleted. */
  store(): Promise<Store | null>;
  meta(path: string): Promise<MemoryMeta | null>;
  /** The memory at `path` with its content as UTF-8 bytes (what a file read serves), or null. */
  bytes(path: string): Promise<(MemoryMeta & { bytes: Buffer }) | null>;
  memory(id: string): Promise<Memory | null>;
  /** The live memory `id` without its content (storage.getMemoryMetaById), or null. */
  memoryMeta(id: string): Promise<MemoryMeta | null>;
  /** A version's text as UTF-8 bytes (a deleted memory's too), or null: no such version, or redacted. */
  versionBytes(versionId: string): Promise<Buffer | null>;
  /** True if some memory lives strictly below `dir`: the directory is implied. */
  hasMemoriesUnder(dir: string): Promise<boolean>;
  /** Direct children of `dir`, at most `limit` entries if given. */
  listDirectory(dir: string, limit?: number): Promise<DirectoryListing>;
  /**
   * The names in `dir`, sorted as readdir lists them, or its listing if it holds at most
   * `listingUpTo` entries (storage.listDirectoryNames). Absent (a point-in-time reader): list it.
   */
  listDirectoryNames?(dir: string, listingUpTo?: number): Promise<DirectoryNames | DirectoryListing>;
  /** Moves after any committed write (storage.changeMark). */
  changeMark(): number;
  /** The part of changeMark() that counts this process's own writes (storage.ownWriteMark). */
  ownWriteMark(): number;
  /** How many writes this process has made, each call of storage once (storage.ownWriteCount). */
  ownWriteCount(): number;
  /** Calls `listener` whenever changeMark() may have moved (storage.onMarkMoved); absent: it never moves by itself. */
  onMarkMoved?(listener: () => void): () => void;
  /** The store's last commit number: a follower of its changes starts there (0: a point-in-time reader). */
  lastChange(): Promise<number>;
  /** The store's versions and prunes committed after commit number `seq`, oldest first, at most `limit` (none: a point-in-time reader). */
  changesAfter(seq: number, limit: number): Promise<Change[]>;
  /** The store's earliest expiry after `after`, or null. */
  nextExpiry(after: string): Promise<string | null>;
  /**
   * Redactions in the store logged after `after`, and the log's last number (storage.redactionsAfter):
   * present where no notice tells a mount of another process's redaction (SQLite).
   */
  redactionsAfter?(after: number | null): Promise<{ last: number; versionIds: string[] }>;
  /** Set for a point-in-time reader: reading a memory whose version then was redacted since throws forbidden. */
  readonly asOf: string | null;
  /** History (`.history` in the mount): a path's unredacted versions, oldest first, at most `limit`. */
  pathVersions(path: string, limit: number): Promise<PathVersion[]>;
  /** Version `number` of `path` (no bytes), or null. */
  pathVersion(path: string, number: number): Promise<PathVersion | null>;
  /** Version `number` of `path` with its bytes, or null. */
  pathVersionBytes(path: string, number: number): Promise<(PathVersion & { bytes: Buffer }) | null>;
  /** Child names below `dir` over every path that ever held a memory, at most `limit`. */
  historyDirectory(dir: string, limit: number): Promise<HistoryListing>;
  /** True if some path strictly below `dir` ever held a memory. */
  hasHistoryUnder(dir: string): Promise<boolean>;
}

/** What a mount may do now: the one rule for archived and deleted stores, for sessions and the FUSE face. */
export type MountAccess = 'writable' | 'read_only' | 'archived' | 'gone';

export function mountAccess(store: Pick<Store, 'archivedAt'> | null, readOnly: boolean): MountAccess {
  if (!store) return 'gone';
  if (store.archivedAt !== null) return 'archived';
  return readOnly ? 'read_only' : 'writable';
}

export interface Mounter {
  mount(req: MountRequest): Promise<void>;
  /** Unmounts one mount point; unmounting a path that is not mounted is not an error. */
  unmount(hostPath: string): Promise<void>;
  /** Turns every mount of a store read-only (the store was archived) or tells them it is gone. */
  storeChanged(storeId: string, change: 'archived' | 'deleted'): void;
  /**
   * A version was redacted: what the mounts keep of it goes too (the kernel's pages of a file that
   * still shows it). `erasedSha256`: its text left the database (no other version holds it), so the
   * bytes kept by that sha go as well; null while another version still holds the text.
   */
  versionRedacted?(storeId: string, versionId: string, erasedSha256: string | null): void;
  /**
   * Another server's redactions may have gone unheard (PostgreSQL's listener was away): every text
   * the mounts keep by its sha goes, since which ones were erased is not known.
   */
  redactionsMissed?(): void;
  /** Clears mounts left behind by a crash under a root directory (dead ones: a live one is another process's). */
  clearStale(root: string): Promise<void>;
  /**
   * Clears a dead mount at exactly `hostPath` (its process is gone: ENOTCONN), as a `mnemo mount`
   * killed -9 can leave when auto_unmount loses a race; a live mount there is left alone.
   */
  clearDead?(hostPath: string): Promise<void>;
  unmountAll(): Promise<void>;
  /** The host paths this mounter serves that the kernel shows as mounted now (readiness, metrics). */
  mounted?(): Promise<readonly string[]>;
}

/** The mounter of a service that mounts nothing (tools, tests): sessions cannot be created with it. */
export const NO_MOUNTS: Mounter = {
  mount: () => Promise.reject(new Error('this process mounts nothing')),
  unmount: () => Promise.resolve(),
  storeChanged: () => {},
  clearStale: () => Promise.resolve(),
  unmountAll: () => Promise.resolve(),
};
