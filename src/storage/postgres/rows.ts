/**
 * @module Row ↔ domain mapping for PostgreSQL. The columns are SQLite's (postgres/schema/v1.ts), so
 * the engine-neutral mappings (storage/common/rows.ts) apply as they are; what is PostgreSQL's own
 * is the SQL that names them.
 */
export {
  actorColumns,
  toReceipt,
  type ReceiptRow,
  RECEIPT_VERSION_FIELDS,
  bundleJson,
  toCheckpoint,
  type CheckpointRow,
  toAdminAction,
  type AdminActionRow,
  toApiKey,
  type ApiKeyRow,
  KEY_COLUMNS,
  toWorkspace,
  type WorkspaceRow,
  META,
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
} from '../common/rows.js';

import { META } from '../common/rows.js';

/** Every column but the tsvector (which only search reads), and the text by its sha (postgres/schema/v9.ts). */
export const FULL = `${META}, (SELECT c.content FROM contents c WHERE c.sha256 = memories.content_sha256) AS content`;

/** SQL keeping only memories that have not expired at the parameter `$n` (the adapter's clock). */
export const live = (n: number, alias = ''): string => `(${alias}expires_at IS NULL OR ${alias}expires_at > $${n})`;
