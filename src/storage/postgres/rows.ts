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
  creatorKey,
  toSession,
  toStore,
  toVersion,
  toTextHolders,
  type TextHolderRow,
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

/**
 * `table`'s one row whose unique `id` is the parameter `$n`, as a subquery the planner cannot merge
 * into the statement around it (OFFSET 0), named `alias`: the row is found through the id's unique
 * index whatever the table's statistics say. A read by id that also names its store or workspace
 * got, as a generic plan made before the table's first ANALYZE (a new database's first minute, the
 * bench's), the other column's index instead, and read every memory of the store to find one
 * (test/bench/README.md, stop 38).
 */
export const byUniqueId = (table: string, n: number, alias = table): string => `(SELECT * FROM ${table} WHERE id = $${n} OFFSET 0) ${alias}`;
