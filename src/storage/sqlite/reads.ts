/**
 * @module The reads that grow with the store (searches, listing pages, the checks, a point-in-time
 * mount's directories, a live mount's big directories), as the SQL
 * modules implement them: synchronous, on whichever connection they were prepared on. The adapter
 * runs them on reader connections in worker threads (sqlite/readers.ts), so the port's versions of
 * them return promises; point lookups by key stay on the serving connection.
 */
import type { DirectoryListing, DirectoryNames, MetaAsOf, MoveTreeInput } from '../port.js';
import type { Change, ChangeQuery, MemoryListItem, MemoryListQuery, MemoryVersion, Page, SearchPage, SearchQuery, Store, StoreListQuery, TextHolderQuery, TextHolders, VersionListQuery } from '../../domain/types.js';

export interface SyncReads {
  /** Reads only: the full-text index is brought up to date on the writer before (sqlite/search.ts). */
  searchMemories(storeId: string, q: SearchQuery): SearchPage;
  listMemories(storeId: string, q: MemoryListQuery): Page<MemoryListItem>;
  listStores(workspaceId: string, q: StoreListQuery, only?: readonly string[] | null): Page<Store>;
  listVersions(storeId: string, q: VersionListQuery): Page<MemoryVersion>;
  /** The versions still holding a text a redaction erased: as many as hold it (storage/port/memories.ts). */
  listTextHolders(storeId: string, sha256: string, q: TextHolderQuery): TextHolders;
  listChanges(storeId: string, q: ChangeQuery): Change[];
  integrityCheck(): string[];
  domainCheck(): string[];
  searchBacklog(): number;
  /**
   * A point-in-time mount's listing and directory check: each child directory is a walk of the
   * versions ever below it until a memory that stood there then, all of them when none did.
   */
  listDirectoryAsOf(storeId: string, dir: string, asOf: string, limit: number): { files: MetaAsOf[]; dirs: string[]; truncated?: boolean };
  hasMemoriesUnderAsOf(storeId: string, dir: string, asOf: string): boolean;
  /** A live directory's listing past INLINE_LISTING_MAX entries (sqlite/mount-view.ts; smaller ones stay on the serving connection). */
  listDirectory(storeId: string, dir: string, limit: number): DirectoryListing;
  /** The same for a listing of names alone, sorted here (sqlite/mount-view.ts `namesOfBigDirectoriesElsewhere`). */
  listDirectoryNames(storeId: string, dir: string, listingUpTo: number): DirectoryNames | DirectoryListing;
}

export type ReadMethod = keyof SyncReads;

/**
 * A directory move as a reader thread runs it, on a writable connection of its own (sqlite/readers.ts
 * says why): its version ids made beforehand, since a function cannot cross to the thread.
 */
export type MoveTreeRequest = Omit<MoveTreeInput, 'versionIds'> & { versionIds: string[] };

/** The writes a reader thread makes on writable connections of its own (sqlite/reader-worker.ts). */
export interface ThreadWrites {
  moveTree(input: MoveTreeRequest): number;
  /** A search-index turn, heavy ones included (search-index.ts). */
  indexSearchBacklog(max: number): number;
  eraseStep(): boolean;
  /** A step of removing deleted stores' rows (store-purge.ts), its index turn included. */
  purgeDeletedStores(): boolean;
}

export type WriteMethod = keyof ThreadWrites;

/** The same writes as the serving thread asks for them. */
export type AsyncWrites = { [M in WriteMethod]: (...args: Parameters<ThreadWrites[M]>) => Promise<ReturnType<ThreadWrites[M]>> };

export type { Synchronous } from '../port/synchronous.js';

/** The port's face of the same reads: each a promise, answered by a reader thread. */
export type AsyncReads = { [M in ReadMethod]: (...args: Parameters<SyncReads[M]>) => Promise<ReturnType<SyncReads[M]>> };

/** One call to a reader thread; `now` is what `mnemo_now()` answers there (the adapter's clock, read at the call). */
export interface ReadRequest {
  id: number;
  method: ReadMethod | WriteMethod;
  args: unknown[];
  now: string;
}

export type ReadReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: { mnemo: boolean; code: string; message: string; details: unknown; stack?: string } };
