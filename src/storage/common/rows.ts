/**
 * @module Row ↔ domain mapping for both adapters: snake_case columns to camelCase fields, JSON
 * columns parsed. PostgreSQL's columns are SQLite's (postgres/schema/v1.ts); where a flag is
 * SQLite's 0/1 and PostgreSQL's boolean, the row type says both.
 */
import type { Actor, AdminAction, AdminActionKind, ApiKey, Checkpoint, CheckpointBundle, Memory, MemoryMeta, MemoryVersion, Operation, Retention, Role, Session, Store, TextHolder, TextHolders, Workspace } from '../../domain/types.js';
import type { Receipt } from '../port.js';

export interface StoreRow {
  seq: number;
  id: string;
  workspace_id: string;
  name: string;
  description: string;
  metadata: string;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  /** JSON Retention, or NULL: keep every version (sqlite/schema/feed.ts). */
  retention?: string | null;
  /** JSON {storeId, asOf} on a fork, else NULL (sqlite/schema/forks.ts). */
  forked_from?: string | null;
}

export interface MemoryRow {
  seq: number;
  id: string;
  store_id: string;
  path: string;
  content?: string;
  content_sha256: string;
  content_size_bytes: number;
  version_id: string;
  mode: number;
  created_at: string;
  updated_at: string;
  expires_at: string | null;
  atime_us: number | null;
  mtime_us: number | null;
  ctime_us: number | null;
  uid: number | null;
  gid: number | null;
}

/** The columns of a memory without its content: what lists and the mount's stat read. */
export const META =
  'seq, id, store_id, path, content_sha256, content_size_bytes, version_id, mode, created_at, updated_at, expires_at, atime_us, mtime_us, ctime_us, uid, gid';

export interface VersionRow {
  seq: number;
  id: string;
  store_id: string;
  memory_id: string;
  operation: Operation;
  path: string | null;
  content: string | null;
  content_sha256: string | null;
  content_size_bytes: number | null;
  created_at: string;
  actor_type: string;
  actor_id: string;
  redacted_at: string | null;
  redacted_by_type: string | null;
  redacted_by_id: string | null;
  /** The version's number at its path (sqlite/schema/history.ts); absent where a query does not read it. */
  path_seq?: number | null;
}

/** An api_keys row without its hash: `all_workspaces` is SQLite's 0/1 or PostgreSQL's boolean. */
export interface ApiKeyRow {
  id: string;
  workspace_id: string;
  name: string;
  role: Role;
  store_ids: string | null;
  all_workspaces: number | boolean;
  created_at: string;
  revoked_at: string | null;
}

/** The columns of an API key a read returns (never its hash). */
export const KEY_COLUMNS = 'id, workspace_id, name, role, store_ids, all_workspaces, created_at, revoked_at';

export interface WorkspaceRow {
  id: string;
  name: string;
  created_at: string;
}

export const toWorkspace = (r: WorkspaceRow): Workspace => ({ id: r.id, name: r.name, createdAt: r.created_at });

export interface SessionRow {
  seq: number;
  id: string;
  workspace_id: string;
  status: 'active' | 'ended';
  resources: string;
  created_at: string;
  ended_at: string | null;
  local_pid: number | null;
  node_id?: string | null;
  api_key_id?: string | null;
}

export function toStore(r: StoreRow): Store {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    name: r.name,
    description: r.description,
    metadata: JSON.parse(r.metadata) as Record<string, string>,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    archivedAt: r.archived_at,
    ...(r.retention ? { retention: JSON.parse(r.retention) as Retention } : {}),
    ...(r.forked_from ? { forkedFrom: JSON.parse(r.forked_from) as { storeId: string; asOf: string } } : {}),
  };
}

export function toMemoryMeta(r: MemoryRow): MemoryMeta {
  return {
    id: r.id,
    storeId: r.store_id,
    path: r.path,
    contentSha256: r.content_sha256,
    contentSizeBytes: r.content_size_bytes,
    versionId: r.version_id,
    mode: r.mode,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    expiresAt: r.expires_at ?? null,
    atimeMs: usToMs(r.atime_us),
    mtimeMs: usToMs(r.mtime_us),
    ctimeMs: usToMs(r.ctime_us),
    uid: r.uid ?? null,
    gid: r.gid ?? null,
  };
}

/** Kept times are integer microseconds in the row (sqlite/schema/attrs.ts) and milliseconds in the domain. */
export function msToUs(ms: number): number {
  return Math.round(ms * 1000);
}

function usToMs(us: number | null | undefined): number | null {
  return us == null ? null : us / 1000;
}

export function toMemory(r: MemoryRow): Memory {
  return { ...toMemoryMeta(r), content: r.content ?? '' };
}

export function actorColumns(a: Actor): { type: string; id: string } {
  return a.type === 'api_actor' ? { type: a.type, id: a.apiKeyId } : { type: a.type, id: a.sessionId };
}

export function toActor(type: string, id: string): Actor {
  return type === 'session_actor' ? { type: 'session_actor', sessionId: id } : { type: 'api_actor', apiKeyId: id };
}

export function toVersion(r: VersionRow): MemoryVersion {
  return {
    id: r.id,
    storeId: r.store_id,
    memoryId: r.memory_id,
    operation: r.operation,
    path: r.path,
    content: r.content,
    contentSha256: r.content_sha256,
    contentSizeBytes: r.content_size_bytes,
    createdAt: r.created_at,
    createdBy: toActor(r.actor_type, r.actor_id),
    redactedAt: r.redacted_at,
    redactedBy: r.redacted_by_type && r.redacted_by_id ? toActor(r.redacted_by_type, r.redacted_by_id) : null,
  };
}

/** A row of HOLDERS_IN_WORKSPACE (sqlite/contents.ts, postgres/contents.ts): `current` is 0/1 or a boolean. */
export interface TextHolderRow {
  id: string;
  store_id: string;
  memory_id: string;
  path: string | null;
  created_at: string;
  current: number | boolean;
}

/** Holders read with a limit one past `limit` (the extra row only says there are more), and how many hold the text in all. */
export function toTextHolders(rows: readonly TextHolderRow[], limit: number, count: number): TextHolders {
  const data: TextHolder[] = rows.slice(0, limit).map((r) => ({
    id: r.id, storeId: r.store_id, memoryId: r.memory_id, path: r.path, createdAt: r.created_at, current: Boolean(r.current),
  }));
  return { data, hasMore: rows.length > limit, count };
}

export function toApiKey(r: ApiKeyRow): ApiKey {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    name: r.name,
    role: r.role,
    storeIds: r.store_ids === null ? null : (JSON.parse(r.store_ids) as string[]),
    allWorkspaces: r.all_workspaces === true || r.all_workspaces === 1,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
  };
}

/** The api_key_id column of a session: the key that created it, or null (only keys create sessions through the service). */
export function creatorKey(s: Session): string | null {
  return s.createdBy?.type === 'api_actor' ? s.createdBy.apiKeyId : null;
}

export function toSession(r: SessionRow): Session {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    status: r.status,
    resources: JSON.parse(r.resources) as Session['resources'],
    createdAt: r.created_at,
    endedAt: r.ended_at,
    // Only local sessions carry it, so a server session reads back exactly as it was inserted.
    ...(r.local_pid === null ? {} : { localPid: r.local_pid }),
    ...(r.node_id == null ? {} : { nodeId: r.node_id }),
    ...(r.api_key_id == null ? {} : { createdBy: { type: 'api_actor' as const, apiKeyId: r.api_key_id } }),
  };
}

/** A row of admin_actions (both engines' columns). */
export interface AdminActionRow {
  seq: number;
  id: string;
  workspace_id: string;
  action: AdminActionKind;
  actor_type: string;
  actor_id: string;
  target_id: string;
  store_id: string | null;
  summary: string;
  created_at: string;
}

export const toAdminAction = (r: AdminActionRow): AdminAction => ({
  id: r.id,
  workspaceId: r.workspace_id,
  action: r.action,
  actor: toActor(r.actor_type, r.actor_id),
  targetId: r.target_id,
  storeId: r.store_id,
  summary: r.summary,
  createdAt: r.created_at,
});

/** A checkpoints row: `is_latest` is SQLite's 0/1 or PostgreSQL's boolean. */
export interface CheckpointRow {
  id: string;
  store_id: string;
  agent_id: string;
  session_id: string;
  revision: number;
  bundle: string;
  size_bytes: number;
  created_at: string;
  actor_type: string;
  actor_id: string;
  is_latest: number | boolean;
}

/** The stored bundle: exactly the bundle's fields, in one order, whatever else the input carries. */
export function bundleJson(c: CheckpointBundle): string {
  const bundle: CheckpointBundle = {
    agentId: c.agentId, sessionId: c.sessionId, goal: c.goal, summary: c.summary, constraints: c.constraints,
    decisions: c.decisions, openTasks: c.openTasks, nextAction: c.nextAction, capsule: c.capsule, references: c.references,
  };
  return JSON.stringify(bundle);
}

export function toCheckpoint(r: CheckpointRow): Checkpoint {
  const b = JSON.parse(r.bundle) as CheckpointBundle;
  return {
    ...b,
    id: r.id,
    storeId: r.store_id,
    revision: r.revision,
    sizeBytes: r.size_bytes,
    createdAt: r.created_at,
    createdBy: toActor(r.actor_type, r.actor_id),
    isLatest: r.is_latest === true || r.is_latest === 1,
  };
}

/** An idempotency_receipts row (both engines' columns). */
export interface ReceiptRow {
  workspace_id: string;
  api_key_id: string;
  route: string;
  idem_key: string;
  fingerprint: string;
  status: number;
  body: string;
  store_id: string | null;
  version_id: string | null;
  created_at: string;
  expires_at: string;
}

/**
 * The top-level fields of a receipt body that carry the text of the version the receipt names
 * (`version_id`): a memory create or update answers with that version's memory, so these are
 * exactly the columns redaction nulls on the version. A receipt body holds no other version text.
 */
export const RECEIPT_VERSION_FIELDS = ['path', 'content', 'content_sha256', 'content_size_bytes'] as const;

export function toReceipt(r: ReceiptRow): Receipt {
  return {
    workspaceId: r.workspace_id,
    apiKeyId: r.api_key_id,
    route: r.route,
    key: r.idem_key,
    fingerprint: r.fingerprint,
    status: r.status,
    body: r.body,
    storeId: r.store_id,
    versionId: r.version_id,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
  };
}
