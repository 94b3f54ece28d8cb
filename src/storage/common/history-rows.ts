/**
 * @module The history role's rows and their mapping to the port's shapes, engine-neutral: the
 * PostgreSQL adapter's columns are SQLite's, so both adapters' history queries (sqlite/history.ts,
 * postgres/history.ts) read these.
 */
import type { MetaAsOf, PathVersion } from '../port.js';

export interface PathVersionRow {
  id: string;
  memory_id: string;
  operation: string;
  path_seq: number;
  content_size_bytes: number | null;
  created_at: string;
}

export interface AtRow {
  id: string;
  memory_id: string;
  operation: string;
  path: string | null;
  content_sha256: string | null;
  content_size_bytes: number | null;
  created_at: string;
  redacted_at: string | null;
  /** When its content was written: its own time, or for a rename that kept the text its predecessor's (invariant 20). */
  content_at: string;
  /** Its memory's first version's time. */
  memory_created_at: string;
}

export const AT_COLUMNS = 'id, memory_id, operation, path, content_sha256, content_size_bytes, created_at, redacted_at, content_at, memory_created_at';

/** Where a memory was at an instant: its version then, the path it stands at, and whether that version was redacted since. */
export interface StateAt {
  row: AtRow;
  path: string;
  redacted: boolean;
}

export function toPathVersion(r: PathVersionRow): PathVersion {
  return { versionId: r.id, memoryId: r.memory_id, number: r.path_seq, deleted: r.operation === 'deleted', sizeBytes: r.content_size_bytes ?? 0, createdAt: r.created_at };
}

export function metaOf(storeId: string, s: StateAt): MetaAsOf {
  const r = s.row;
  return {
    id: r.memory_id, storeId, path: s.path, contentSha256: r.content_sha256 ?? '', contentSizeBytes: s.redacted ? 0 : (r.content_size_bytes ?? 0),
    // A redacted version's id names no bytes: a content cache keyed by version id must miss.
    versionId: s.redacted ? `${r.id}#redacted` : r.id,
    // The times the live mount showed then (src/domain/memory-attrs.ts): mtime the content's, atime
    // the memory's creation, ctime the version's own (kept attributes set by utimens are not versioned).
    mode: 0o444, createdAt: r.memory_created_at, updatedAt: r.created_at, expiresAt: null,
    atimeMs: Date.parse(r.memory_created_at), mtimeMs: Date.parse(r.content_at), ctimeMs: null, uid: null, gid: null, redacted: s.redacted,
  };
}

export function prefixOf(dir: string): string {
  return dir === '/' ? '/' : dir + '/';
}
