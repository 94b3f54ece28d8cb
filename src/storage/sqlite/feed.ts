/** @module SQLite statements for the history role: versions in commit order, a version's predecessor. */
import type { Change, ChangeQuery, MemoryVersion } from '../../domain/types.js';
import { toVersion, type VersionRow } from './rows.js';
import type { Db } from './tx.js';

const BASIC = `seq, commit_seq, id, store_id, memory_id, operation, path, NULL AS content, content_sha256, content_size_bytes,
  created_at, actor_type, actor_id, redacted_at, redacted_by_type, redacted_by_id`;

export interface FeedStatements {
  listChanges(storeId: string, q: ChangeQuery): Change[];
  previousVersion(storeId: string, versionId: string): MemoryVersion | null;
}

export function createFeedStatements(db: Db): FeedStatements {
  const q = {
    // versions_by_commit (store_id, commit_seq): a range read, whatever the store's size.
    after: db.prepare(`SELECT ${BASIC} FROM versions WHERE store_id = ? AND commit_seq > ? ORDER BY commit_seq LIMIT ?`),
    // Within a store, rowid order is commit order on SQLite, and versions_by_memory is (store_id, memory_id, seq).
    previous: db.prepare(
      `SELECT p.* FROM versions v JOIN versions p ON p.store_id = v.store_id AND p.memory_id = v.memory_id AND p.seq < v.seq
       WHERE v.store_id = ? AND v.id = ? ORDER BY p.seq DESC LIMIT 1`,
    ),
  };
  return {
    listChanges(storeId, cq) {
      const rows = q.after.all(storeId, cq.after, cq.limit) as (VersionRow & { commit_seq: number })[];
      return rows.map((r) => ({ seq: r.commit_seq, version: toVersion(r) }));
    },
    previousVersion(storeId, versionId) {
      const r = q.previous.get(storeId, versionId) as VersionRow | undefined;
      return r ? toVersion(r) : null;
    },
  };
}
