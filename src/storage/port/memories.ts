/**
 * @module The memories role: memories and their append-only versions. Every write appends one
 * version per change and first purges the store's expired memories; the rules it applies (overlap,
 * archived, preconditions, kept attributes, redaction) are pure functions in src/domain/.
 */
import type {
  Actor,
  KeptAttrs,
  Memory,
  MemoryListItem,
  MemoryListQuery,
  MemoryVersion,
  Page,
  Store,
  TextHolderQuery,
  TextHolders,
  VersionListQuery,
} from '../../domain/types.js';
import type { StoreUsage } from './stores.js';

export interface WriteStamp {
  actor: Actor;
  now: string;
  /** Id of the version row this write appends (pre-generated so the adapter stays id-agnostic). */
  versionId: string;
}

/** What a write found before it changed anything: what the service's rules for it decide on. */
export interface WriteFound {
  /** Whether the store is one of `workspaceId`'s (and neither a fork being built nor deleted). */
  storeFound: boolean;
  /** Its memories and their bytes before the write. */
  usage: StoreUsage;
  /**
   * The live memory an update or a delete names (its size, for the limits), or null. Read it only
   * inside `admit`, and only when a rule needs it: an adapter may find it when first read.
   */
  readonly target: { contentSizeBytes: number } | null;
}

/**
 * The service's admission of a write (its visibility, role and limit rules): the adapter calls
 * `admit` once with what it found, before the write changes anything, and a throw refuses the write
 * whole. The adapter decides nothing from it; it only finds what `admit` is shown. On PostgreSQL
 * the store, its usage and the target come under the store's row lock, in the write's first round
 * trip (the probe); on SQLite they are read on the one connection just before the write, in the
 * same turn of the event loop.
 */
export interface Admission {
  workspaceId: string;
  admit(found: WriteFound): void;
  /**
   * For a write that adds a memory (a create, or a save that finds nothing at its path): the usage
   * at or below which `admit` says yes to it in a store the caller's workspace holds; null when it
   * would say no in any store (the key may not write) or the write adds none. An adapter may admit
   * on these figures alone where it has made sure the write adds a memory (PostgreSQL's guarded
   * create, postgres/schema/v17.ts) and call `admit` whenever they do not hold.
   */
  clearBelow?(): { memories: number; bytes: number } | null;
  /**
   * Whether `admit` would look closer at this usage (a write near a limit). Only then does the
   * adapter read the usage again without the memories that expired and wait for their purge (the
   * usage counter still holds them), and show `admit` that instead: so expired memories never
   * refuse a write, and a write far from the limits costs no more.
   */
  nearLimit?(usage: { memories: number; bytes: number }): boolean;
}

export interface CreateMemoryInput extends WriteStamp {
  storeId: string;
  memoryId: string;
  path: string;
  content: string;
  mode?: number;
  /** Absolute expiry (RFC 3339 UTC); absent or null: never. */
  expiresAt?: string | null;
  admission?: Admission;
}

export interface UpdateMemoryInput extends WriteStamp {
  storeId: string;
  memoryId: string;
  content?: string;
  path?: string;
  expectedSha256?: string;
  /**
   * The update only appends this text to the one `expectedSha256` names (a mount's append): if the
   * memory holds other text when the write reads it (under the store's lock), the update is that
   * text with this after it instead of a precondition failure (src/domain/memory-updates.ts planUpdate).
   */
  appended?: string;
  /** New absolute expiry; null clears it; undefined keeps the current one. */
  expiresAt?: string | null;
  /** Attributes a mount save carries (its mode, times, owner; sqlite/schema/attrs.ts); not versioned. */
  attrs?: KeptAttrs;
  admission?: Admission;
}

export interface DeleteMemoryInput extends WriteStamp {
  storeId: string;
  memoryId: string;
  expectedSha256?: string;
  admission?: Admission;
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
  /** Times and owner to keep (sqlite/schema/attrs.ts); not versioned. */
  attrs?: KeptAttrs;
  /** Its target: the live memory at `path`, if there is one. */
  admission?: Admission;
  /**
   * The caller expects nothing at `path` (a mount's new file): an adapter may add the memory in a
   * way that refuses when something is there (PostgreSQL's guarded create), and then saves as
   * without it. A hint only: the save is the same whatever it says.
   */
  adds?: boolean;
}

/** Rename by id that replaces a memory already at `path` (POSIX rename over a file). */
export interface MoveMemoryInput extends WriteStamp {
  storeId: string;
  memoryId: string;
  path: string;
  /** Id of the `deleted` version appended for a replaced memory, if there is one. */
  replacedVersionId: string;
  /** Its target: the memory moved. */
  admission?: Admission;
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

/**
 * A mount's memory write as data (method and input), so that it can be kept in a journal and applied
 * again exactly: a write held back from its commit (AtomicOptions.journal) is replayed from it if the
 * process dies first. Inputs carry their ids and times, so a replay writes the same rows. They carry no
 * admission (a function, which data cannot hold): a replay is of a write already admitted.
 */
export type JournaledWrite =
  | { method: 'saveMemoryAt'; input: Journaled<SaveMemoryAtInput> }
  | { method: 'updateMemory'; input: Journaled<UpdateMemoryInput> }
  | { method: 'moveMemory'; input: Journaled<MoveMemoryInput> }
  | { method: 'deleteMemory'; input: Journaled<DeleteMemoryInput> };

/** A write's input as a journal keeps it: without its admission. */
type Journaled<T extends { admission?: Admission }> = Omit<T, 'admission'> & { admission?: never };

/** Result of a write: the memory as it now stands and whether a version was appended. */
export interface WriteResult {
  memory: Memory;
  changed: boolean;
}

export interface MemoryStorage {
  createMemory(input: CreateMemoryInput): Promise<Memory>;
  updateMemory(input: UpdateMemoryInput): Promise<WriteResult>;
  deleteMemory(input: DeleteMemoryInput): Promise<void>;
  getMemory(storeId: string, id: string): Promise<Memory | null>;
  /**
   * A retrieve's two lookups as one: whether the store is one of `workspaceId`'s (as getStore finds
   * it), and then its live memory `id` (null when either is missing). Only the store's existence:
   * a retrieve reads nothing else of it, and its nine columns were a tenth of a PostgreSQL
   * retrieve's CPU in the server (decoded per row).
   */
  getMemoryInStore(workspaceId: string, storeId: string, id: string): Promise<{ storeFound: boolean; memory: Memory | null }>;
  getMemoryByPath(storeId: string, path: string): Promise<Memory | null>;
  /**
   * Sets the given attributes (chmod, chown, utimens) without a version, and moves the ctime to
   * `now` (RFC 3339). Throws not_found if the memory is gone, archived if the store is. `admission`:
   * shown the store and its usage first, as a memory write's is (no target: attributes take no room).
   */
  setMemoryAttrs(storeId: string, id: string, attrs: KeptAttrs, now: string, admission?: Admission): Promise<void>;
  saveMemoryAt(input: SaveMemoryAtInput): Promise<WriteResult>;
  moveMemory(input: MoveMemoryInput): Promise<Memory>;
  /** Returns how many memories moved (each gets one `modified` version). */
  moveTree(input: MoveTreeInput): Promise<number>;
  listMemories(storeId: string, q: MemoryListQuery): Promise<Page<MemoryListItem>>;

  getVersion(storeId: string, id: string): Promise<MemoryVersion | null>;
  listVersions(storeId: string, q: VersionListQuery): Promise<Page<MemoryVersion>>;
  /**
   * Erases a version's path and content (and the receipts' copies); refuses the head of a live
   * memory. A memory expired by `now` is none: when the version is its head, the memory is deleted
   * first, in the same transaction, as the expiry sweep would (a `deleted` version dated at its expiry).
   * The redaction that erases it answers with `erased` (the text's sha, and whether its bytes went
   * with it); it does not count who else holds the text (listTextHolders does, once it has committed).
   */
  redactVersion(storeId: string, id: string, actor: Actor, now: string): Promise<MemoryVersion>;
  /**
   * The unredacted versions in `storeId`'s workspace whose text has sha `sha256`, in the stores anyone
   * can see (no fork being built): how many in all (`count`: a redaction's `content_still_held_by`),
   * and those in the stores `q.only` names, newest first, at most `q.limit`, read together. It grows
   * with how many versions hold the text: SQLite reads it on a reader thread, so it sees committed
   * writes only.
   */
  listTextHolders(storeId: string, sha256: string, q: TextHolderQuery): Promise<TextHolders>;
}
