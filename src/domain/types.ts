/** @module Domain types (camelCase); the wire shapes live in api/wire.ts. */

export type Actor =
  | { type: 'api_actor'; apiKeyId: string }
  | { type: 'session_actor'; sessionId: string };

/** Who is asking, and in which workspace. Every service call carries one. */
export interface Caller {
  workspaceId: string;
  actor: Actor;
  /** What an API key may do (src/domain/access.ts). Absent for mounts, whose session was checked when it was created. */
  grant?: Grant;
  /** The face the call came through, when the actor alone does not say (MCP tools act as an API key). */
  face?: Face;
}

/** Where a call came from: the HTTP API, a FUSE mount, or an MCP tool. */
export type Face = 'api' | 'mount' | 'mcp';

export type Role = 'admin' | 'read_write' | 'read_only';

/** An API key's rights: its role, and the stores it is limited to (null: every store of its workspace). */
export interface Grant {
  role: Role;
  storeIds: readonly string[] | null;
  /** An operator key (all_workspaces): acts on any workspace, and alone sees and manages operator keys. */
  operator?: boolean;
}

export interface Workspace {
  id: string;
  name: string;
  createdAt: string;
}

export interface ApiKey {
  id: string;
  workspaceId: string;
  name: string;
  role: Role;
  /** The stores this key may touch; null means every store of its workspace. */
  storeIds: string[] | null;
  /** An operator key: may act on any workspace named by the anthropic-workspace-id header. */
  allWorkspaces: boolean;
  createdAt: string;
  revokedAt: string | null;
}

export interface Store {
  id: string;
  workspaceId: string;
  name: string;
  description: string;
  metadata: Record<string, string>;
  createdAt: string;
  updatedAt: string;
  archivedAt: string | null;
  /** Which old versions the upkeep prunes (issue 15); absent: every version is kept. */
  retention?: Retention;
  /** Set on a fork (issue 15): the store and instant it was forked from; absent on other stores. */
  forkedFrom?: { storeId: string; asOf: string };
}

/**
 * A store's retention: a version goes once every rule given lets it go (older than `maxAgeDays`,
 * and `keepLast` newer versions of its memory exist); a null rule does not hold a version back.
 */
export interface Retention {
  maxAgeDays: number | null;
  keepLast: number | null;
}

export interface Memory {
  id: string;
  storeId: string;
  path: string;
  content: string;
  contentSha256: string;
  contentSizeBytes: number;
  versionId: string;
  /** POSIX permission bits kept for the mount (chmod); not part of the wire shape. */
  mode: number;
  createdAt: string;
  updatedAt: string;
  /** When the memory stops existing for readers (RFC 3339, UTC), or null for never. */
  expiresAt: string | null;
  /**
   * POSIX attributes kept for the mount (utimens, chown); not versioned, not part of the wire shape.
   * Times are milliseconds since the epoch (microsecond precision); null means derived: mtime and
   * ctime are `updatedAt`, atime is the mtime, uid/gid are the serving process's.
   */
  atimeMs: number | null;
  mtimeMs: number | null;
  ctimeMs: number | null;
  uid: number | null;
  gid: number | null;
}

/** Attributes a mount save or a setattr carries beside the content; an absent field is left as it is. */
export interface KeptAttrs {
  mode?: number;
  atimeMs?: number;
  mtimeMs?: number;
  uid?: number;
  gid?: number;
}

/** A memory without its content: what lists and the mount's stat need. */
export type MemoryMeta = Omit<Memory, 'content'>;

export type Operation = 'created' | 'modified' | 'deleted';

export interface MemoryVersion {
  id: string;
  storeId: string;
  memoryId: string;
  operation: Operation;
  path: string | null;
  content: string | null;
  contentSha256: string | null;
  contentSizeBytes: number | null;
  createdAt: string;
  createdBy: Actor;
  redactedAt: string | null;
  redactedBy: Actor | null;
  /**
   * Only on the answer of the redaction that just erased it, in this process, never on the wire:
   * the text it erased. `sha256` is what the service's `textHolders` counts and lists the holders
   * of once the redaction has committed (the version itself no longer names it; null: the version
   * held no text); `gone`, whether the text's bytes left the database with it (no version anywhere
   * holds them now), so the mounts' caches drop their copy.
   */
  erased?: { sha256: string | null; gone: boolean };
}

/**
 * An unredacted version that still holds a text a redaction just erased from another (README,
 * "Redaction"): where to find it, and whether it may be redacted now.
 */
export interface TextHolder {
  id: string;
  storeId: string;
  memoryId: string;
  /** The version's path (unredacted versions have one). */
  path: string | null;
  createdAt: string;
  /** The current version of a live memory: it cannot be redacted until the memory changes or goes. */
  current: boolean;
}

/** The first holders of a text, newest first; `hasMore` when more hold it than were listed. */
export interface TextHolders {
  data: TextHolder[];
  hasMore: boolean;
  /**
   * How many hold it in the stores of the workspace anyone can see, listed or not (those outside
   * the query's `only` too): a redaction's `content_still_held_by` (content is stored once: its
   * bytes stay while any version holds them).
   */
  count: number;
}

export interface TextHolderQuery {
  /** At most this many (TEXT_HOLDERS_MAX for the faces). */
  limit: number;
  /** The stores to look in (a key's grant); null: every store of the workspace. */
  only: readonly string[] | null;
  /** A memory whose expiry is at or before this instant is none: its head is no current version. */
  now: string;
}

export type Access = 'read_write' | 'read_only';

export interface SessionResource {
  type: 'memory_store';
  storeId: string;
  access: Access;
  instructions: string | null;
  name: string;
  description: string;
  slug: string;
  mountPath: string;
  hostPath: string;
  /** A point-in-time mount: the store as it was at this instant (RFC 3339), read-only. Absent: the live store. */
  asOf?: string | null;
}

export interface Session {
  id: string;
  workspaceId: string;
  status: 'active' | 'ended';
  resources: SessionResource[];
  createdAt: string;
  endedAt: string | null;
  /** The pid of the `mnemo mount` process that serves this session; absent or null: the server mounts it. */
  localPid?: number | null;
  /**
   * The node (MNEMO_NODE_ID, default the hostname) whose server or `mnemo mount` serves it; only
   * that node remounts it. Absent or null: a session from before node ids, served by any node.
   */
  nodeId?: string | null;
  /** Who created it: the API key (its revoke ends the session). Absent or null: `mnemo mount`, or from before keys were recorded. */
  createdBy?: Actor | null;
}

export interface Page<T> {
  data: T[];
  /** Opaque cursor for the next page, or null at the end. */
  nextPage: string | null;
}

export type View = 'basic' | 'full';

/** A plain list's page: `limit` items after the cursor `page` (null: the first page). */
export interface PageQuery {
  limit: number;
  page: string | null;
}

export interface StoreListQuery {
  includeArchived: boolean;
  createdGte: string | null;
  createdLte: string | null;
  limit: number;
  page: string | null;
}

export interface MemoryListQuery {
  pathPrefix: string;
  depth: 0 | 1;
  limit: number;
  page: string | null;
  view: View;
}

export type MemoryListItem = { type: 'memory'; memory: MemoryMeta & { content?: string } } | { type: 'memory_prefix'; path: string };

export interface VersionListQuery {
  memoryId: string | null;
  operation: Operation | null;
  sessionId: string | null;
  apiKeyId: string | null;
  serviceAccountId: string | null;
  createdGte: string | null;
  createdLte: string | null;
  limit: number;
  page: string | null;
  view: View;
}

export interface NewStore {
  name: string;
  description: string;
  metadata: Record<string, string>;
  retention?: Retention;
}

export interface StorePatch {
  name?: string;
  description?: string;
  /** string upserts, null removes. */
  metadata?: Record<string, string | null>;
  /** A new retention; null: keep every version again. */
  retention?: Retention | null;
}

export interface MemoryWrite {
  content?: string;
  path?: string;
  /** Expected current content_sha256, if the caller asked for a precondition. */
  expectedSha256?: string;
  /** A new expiry (null: never expires); undefined keeps the current one. */
  expiry?: Expiry;
}

/** A TTL as the caller gave it: seconds from now, or an absolute time; null clears it. */
export type Expiry = { ttlSeconds: number } | { expiresAt: string } | null;

// ------------------------------------------------------------ agent continuity (checkpoints, search)

/** A memory a checkpoint relied on: by id or path, with the content or version it saw. */
export interface CheckpointReference {
  memoryId: string | null;
  path: string | null;
  contentSha256: string | null;
  versionId: string | null;
  note: string | null;
}

/** What an agent saves before compaction; immutable once written. */
export interface CheckpointBundle {
  agentId: string;
  sessionId: string;
  goal: string;
  summary: string;
  constraints: string[];
  decisions: string[];
  openTasks: string[];
  nextAction: string | null;
  capsule: string;
  references: CheckpointReference[];
}

export interface Checkpoint extends CheckpointBundle {
  id: string;
  storeId: string;
  /** 1, 2, 3… per (store, agent, session); never reused. */
  revision: number;
  /** Bytes of the stored bundle (JSON). */
  sizeBytes: number;
  createdAt: string;
  createdBy: Actor;
  /** True while this is the (agent, session) latest. */
  isLatest: boolean;
}

export type ReferenceStatus = 'ok' | 'changed' | 'missing' | 'expired';

export interface SearchQuery {
  q: string;
  mode: 'fts' | 'substring';
  pathPrefix: string;
  limit: number;
  page: string | null;
}

/** A page of search hits, saying whether it came from a bounded window (see the README's "Search"). */
export interface SearchPage extends Page<SearchHit> {
  /**
   * fts: the query matches more index entries than one ranking window, so hits are ranked window by
   * window, not across all matches. substring: this request stopped scanning at its budget, so a
   * short (even empty) page does not mean the end. Either way, follow nextPage.
   */
  candidatesCapped: boolean;
}

export interface SearchHit {
  memory: MemoryMeta;
  /** A short excerpt around the match; matched terms are wrapped in ** (fts) or the phrase is (substring). */
  snippet: string;
  /**
   * Where the marked text sits in `snippet` (UTF-16 offsets, inside its ** markers), so a face can
   * tell the markers from ** the content holds itself; null when nothing is marked (a path match).
   */
  match: { start: number; end: number } | null;
  /** bm25 (lower is better) in fts mode; 0 in substring mode. */
  score: number;
}

/** A page of the change feed (issue 15): the store's versions after a place in its commit order. */
export interface ChangeQuery {
  /** The commit number after which the page starts (0: from the first version). */
  after: number;
  limit: number;
}

/** A version retention removed, recorded at its own place in the store's commit order. */
export interface PrunedVersion {
  versionId: string;
  memoryId: string;
  storeId: string;
  prunedAt: string;
}

/** One entry at its place in its store's commit order: a version, or the prune of one. */
export type Change = { seq: number; version: MemoryVersion } | { seq: number; pruned: PrunedVersion };

export type ChangeItem = { cursor: string; version: MemoryVersion } | { cursor: string; pruned: PrunedVersion };

export interface ChangePage {
  data: ChangeItem[];
  /** The cursor to resume from: the last item's, or the one given when the page is empty. */
  nextAfter: string;
}

/** A unified diff between two versions (or empty content and a version). */
export interface VersionDiff {
  /** null: empty content (the `against` of a memory's first version). */
  from: MemoryVersion | null;
  to: MemoryVersion;
  unified: string;
  /** false: the versions differ in too many places to find the smallest diff within the budget (line-diff.ts). */
  minimal: boolean;
}

/** What an admin did that the audit log of admin actions keeps (issue 16). */
export type AdminActionKind =
  | 'api_key.created'
  | 'api_key.revoked'
  | 'memory_version.redacted'
  | 'memory_store.archived'
  | 'memory_store.deleted'
  | 'session.ended';

/** One entry of the admin-actions log: who did what to which object, and when. Never changed once written. */
export interface AdminAction {
  id: string;
  workspaceId: string;
  action: AdminActionKind;
  actor: Actor;
  /** The object acted on: a key, version, store or session id. */
  targetId: string;
  /** The store the object belongs to, when it belongs to one. */
  storeId: string | null;
  /** A short human description (a key's name and role, a version's memory id); never content. */
  summary: string;
  createdAt: string;
}
