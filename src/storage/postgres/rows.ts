/**
 * @module Row ↔ domain mapping for PostgreSQL. The columns are SQLite's (postgres/schema/v1.ts), so
 * the SQLite adapter's pure mappings apply as they are; only the boolean flags differ.
 */
import type { ApiKey } from '../../domain/types.js';
import type { ApiKeyRow } from '../sqlite/rows.js';

export {
  actorColumns,
  toReceipt,
  type ReceiptRow,
  bundleJson,
  toCheckpoint,
  type CheckpointRow,
  toAdminAction,
  type AdminActionRow,
  msToUs,
  toActor,
  toMemory,
  toMemoryMeta,
  toSession,
  toStore,
  toVersion,
  type MemoryRow,
  type SessionRow,
  type StoreRow,
  type VersionRow,
} from '../sqlite/rows.js';

export type PgApiKeyRow = Omit<ApiKeyRow, 'all_workspaces'> & { all_workspaces: boolean };

export function toApiKey(r: PgApiKeyRow): ApiKey {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    name: r.name,
    role: r.role,
    storeIds: r.store_ids === null ? null : (JSON.parse(r.store_ids) as string[]),
    allWorkspaces: r.all_workspaces,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
  };
}

/** The columns of a memory without its content: what lists and the mount's stat read. */
export const META =
  'seq, id, store_id, path, content_sha256, content_size_bytes, version_id, mode, created_at, updated_at, expires_at, atime_us, mtime_us, ctime_us, uid, gid';

/** Every column but the tsvector (which only search reads). */
export const FULL = `${META}, content`;

/** SQL keeping only memories that have not expired at the parameter `$n` (the adapter's clock). */
export const live = (n: number, alias = ''): string => `(${alias}expires_at IS NULL OR ${alias}expires_at > $${n})`;
