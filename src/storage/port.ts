/**
 * @module The storage port: domain operations, each atomic inside the adapter. The SQLite adapter
 * implements it now; a shared PostgreSQL adapter can implement it later without touching the faces.
 * The reads whose cost grows with the store (searches, listing pages, the checks) return promises:
 * the adapter runs them off the event loop (sqlite-readers.ts) and they see every write answered
 * before the call. Point lookups and writes stay synchronous.
 */
import type {
  Actor,
  ApiKey,
  KeptAttrs,
  Memory,
  MemoryListItem,
  MemoryListQuery,
  MemoryMeta,
  MemoryVersion,
  NewStore,
  Page,
  Session,
  Store,
  StoreListQuery,
  StorePatch,
  VersionListQuery,
  Workspace,
} from '../types.js';
import type { ContinuityStorage } from './port-continuity.js';

export interface WriteStamp {
  actor: Actor;
  now: string;
  /** Id of the version row this write appends (pre-generated so the adapter stays id-agnostic). */
  versionId: string;
}

export interface CreateMemoryInput extends WriteStamp {
  storeId: string;
  memoryId: string;
  path: string;
  content: string;
  mode?: number;
  /** Absolute expiry (RFC 3339 UTC); absent or null: never. */
  expiresAt?: string | null;
}

export interface UpdateMemoryInput extends WriteStamp {
  storeId: string;
  memoryId: string;
  content?: string;
  path?: string;
  expectedSha256?: string;
  /** New absolute expiry; null clears it; undefined keeps the current one. */
  expiresAt?: string | null;
  /** Attributes a mount save carries (its mode, times, owner; schema-attrs.ts); not versioned. */
  attrs?: KeptAttrs;
}

export interface DeleteMemoryInput extends WriteStamp {
  storeId: string;
  memoryId: string;
  expectedSha256?: string;
}

/** Create-or-update by path (the mount's save): updates the memory at `path`, or creates `memoryId` there. */
export interface SaveMemoryAtInput extends WriteStamp {
  storeId: string;
  path: string;
  content: string;
  /** Id for the memory if the path is free (pre-generated so the mount's inode stays stable). */
  memoryId: string;
  /** Permission bits to keep; not versioned. */
  mode?: number;
  /** Times and owner to keep (schema-attrs.ts); not versioned. */
  attrs?: KeptAttrs;
}

/** Rename by id that replaces a memory already at `path` (POSIX rename over a file). */
export interface MoveMemoryInput extends WriteStamp {
  storeId: string;
  memoryId: string;
  path: string;
  /** Id of the `deleted` version appended for a replaced memory, if there is one. */
  replacedVersionId: string;
}

/** Moves every memory below directory `from` to the same place below `to` (directory rename). */
export interface MoveTreeInput {
  storeId: string;
  from: string;
  to: string;
  actor: Actor;
  now: string;
  /** One fresh version id per moved memory. */
  versionIds: () => string;
}

/** Result of a write: the memory as it now stands and whether a version was appended. */
export interface WriteResult {
  memory: Memory;
  changed: boolean;
}

export interface AtomicOptions {
  /**
   * false: the commit need not be on disk when the call returns, only safe from a crash of this
   * process (in the OS page cache); `syncCommits` makes it durable. A mount's saves (DESIGN §5).
   * Inside another transaction the outermost one decides. Default true: on disk at commit.
   */
  durable?: boolean;
}

/** Whose receipt: one per workspace, API key, route and Idempotency-Key. */
export interface ReceiptScope {
  workspaceId: string;
  apiKeyId: string;
  /** Method and route template, e.g. "POST /v1/memory_stores/{id}/memories". */
  route: string;
  key: string;
}

/** The first successful answer to an idempotent request, replayed to retries. */
export interface Receipt extends ReceiptScope {
  /** sha256 of the normalised request; a retry must match it. */
  fingerprint: string;
  status: number;
  /** The response body as JSON text. */
  body: string;
  /** What the answer points at, for `mnemo check`. */
  storeId: string | null;
  versionId: string | null;
  createdAt: string;
  expiresAt: string;
}

/** What a store's limits are checked against. */
export interface StoreUsage {
  memories: number;
  bytes: number;
}

export interface DirectoryListing {
  files: MemoryMeta[];
  /** Names of subdirectories implied by deeper memory paths. */
  dirs: string[];
  /** Set when a `limit` cut the listing short: it does not name everything in the directory. */
  truncated?: boolean;
}

export interface Storage extends ContinuityStorage {
  // workspaces and keys
  defaultWorkspace(): Workspace | null;
  insertWorkspace(ws: Workspace, isDefault: boolean): void;
  /** `seeded`: the key MNEMO_ADMIN_KEY or the first start seeded (at most one unrevoked). */
  insertApiKey(key: ApiKey, hash: string, seeded?: boolean): void;
  findApiKeyByHash(hash: string): ApiKey | null;
  /** The unrevoked seeded admin key and its hash, or null. */
  seededApiKey(): { key: ApiKey; hash: string } | null;
  /** Makes an existing unrevoked key the seeded one (the caller revoked the previous one first). */
  markApiKeySeeded(id: string): void;
  countApiKeys(): number;
  getWorkspace(id: string): Workspace | null;
  listWorkspaces(): Workspace[];
  listApiKeys(workspaceId: string): ApiKey[];
  getApiKey(workspaceId: string, id: string): ApiKey | null;
  /** Sets revoked_at once; revoking a revoked key returns it unchanged. */
  revokeApiKey(workspaceId: string, id: string, now: string): ApiKey;

  // idempotency receipts
  /** Runs several port writes as one transaction (the writes inside join it), e.g. a mutation and its receipt. */
  atomic<T>(fn: () => T, options?: AtomicOptions): T;
  /** Commits made with `durable: false` that may not be on disk yet (0 once `syncCommits` has run). */
  unsyncedCommits(): number;
  /**
   * Resolves once every commit made before the call is on disk (a no-op when none is pending);
   * rejects with the disk's error. Asynchronous: the event loop keeps serving meanwhile.
   */
  syncCommits(): Promise<void>;
  findReceipt(scope: ReceiptScope): Receipt | null;
  insertReceipt(receipt: Receipt): void;
  deleteReceipt(scope: ReceiptScope): void;
  /** Deletes receipts that expired at or before `now`; returns how many. */
  purgeReceipts(now: string): number;

  // stores
  insertStore(store: Store): void;
  getStore(workspaceId: string, id: string): Store | null;
  /** A store by id alone: for the mount, which is bound to a store, not a caller. */
  getStoreById(id: string): Store | null;
  /** `only`: the stores a scoped key may see (null: all of the workspace's). */
  listStores(workspaceId: string, q: StoreListQuery, only?: readonly string[] | null): Promise<Page<Store>>;
  updateStore(workspaceId: string, id: string, patch: StorePatch, now: string): Store;
  archiveStore(workspaceId: string, id: string, now: string): Store;
  deleteStore(workspaceId: string, id: string): void;
  /** How many memories the store holds and the sum of their sizes: one indexed row (schema-limits.ts). */
  storeUsage(storeId: string): StoreUsage;

  // memories
  createMemory(input: CreateMemoryInput): Memory;
  updateMemory(input: UpdateMemoryInput): WriteResult;
  deleteMemory(input: DeleteMemoryInput): void;
  getMemory(storeId: string, id: string): Memory | null;
  getMemoryByPath(storeId: string, path: string): Memory | null;
  getMemoryMetaByPath(storeId: string, path: string): MemoryMeta | null;
  /** The memory at `path` with its content as UTF-8 bytes (what a file read serves), or null. */
  getMemoryBytesByPath(storeId: string, path: string): (MemoryMeta & { bytes: Buffer }) | null;
  /**
   * Sets the given attributes (chmod, chown, utimens) without a version, and moves the ctime to
   * `now` (RFC 3339). Throws not_found if the memory is gone, archived if the store is.
   */
  setMemoryAttrs(storeId: string, id: string, attrs: KeptAttrs, now: string): void;
  saveMemoryAt(input: SaveMemoryAtInput): WriteResult;
  moveMemory(input: MoveMemoryInput): Memory;
  /** Returns how many memories moved (each gets one `modified` version). */
  moveTree(input: MoveTreeInput): number;
  listMemories(storeId: string, q: MemoryListQuery): Promise<Page<MemoryListItem>>;
  /** Direct children of a directory ("/" or "/a/b"), for the mount's readdir; at most `limit` entries if given. */
  listDirectory(storeId: string, dir: string, limit?: number): DirectoryListing;
  /** True if some memory lives strictly below `dir`: the directory is implied. */
  hasMemoriesUnder(storeId: string, dir: string): boolean;
  /**
   * A number that changes after any committed write (at once for this process's writes, within
   * 100 ms for another process's): readers that keep answers (the mount) drop them when it moves.
   * Cheap enough to ask on every file operation.
   */
  changeMark(): number;
  /**
   * The part of changeMark() that counts this process's own writes, with no look at other
   * processes: when both moved by the same amount around a write of one's own, that write is all
   * that changed (the mount keeps its answers across its own saves this way: fs/storage-view.ts).
   */
  ownWriteMark(): number;
  /** The earliest `expires_at` in the store after `after`, or null: live rows can vanish then without a write. */
  nextExpiry(storeId: string, after: string): string | null;

  // versions
  getVersion(storeId: string, id: string): MemoryVersion | null;
  listVersions(storeId: string, q: VersionListQuery): Promise<Page<MemoryVersion>>;
  redactVersion(storeId: string, id: string, actor: Actor, now: string): MemoryVersion;

  // sessions
  insertSession(session: Session): void;
  getSession(workspaceId: string, id: string): Session | null;
  listSessions(workspaceId: string, limit: number, page: string | null): Page<Session>;
  /** Active sessions the server mounts: not those of a `mnemo mount` process (localPid). */
  listActiveSessions(): Session[];
  /** Active sessions of `mnemo mount` processes, to end those whose process is gone. */
  listActiveLocalSessions(): Session[];
  endSession(workspaceId: string, id: string, now: string): Session;
  /** Active sessions of a workspace, counted from an index of active sessions only. */
  countActiveSessions(workspaceId: string): number;

  /** SQLite's own integrity check; an empty list means clean. */
  integrityCheck(): Promise<string[]>;
  /** The domain's invariants (schema.ts 2, 3, 9 and valid stored paths); an empty list means clean. */
  domainCheck(): Promise<string[]>;
  close(): void;
}
