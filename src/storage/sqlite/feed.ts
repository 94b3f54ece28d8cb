/** @module SQLite statements for the history role: versions in commit order, a version's predecessor. */
import type { Change, ChangeQuery, MemoryVersion } from '../../domain/types.js';
import { toVersion, type VersionRow } from '../common/rows.js';
import { versionContent } from './contents.js';
import type { Db } from './tx.js';

const BASIC = `seq, commit_seq, id, store_id, memory_id, operation, path, NULL AS content, content_sha256, content_size_bytes,
  created_at, actor_type, actor_id, redacted_at, redacted_by_type, redacted_by_id`;

export interface FeedStatements {
  listChanges(storeId: string, q: ChangeQuery): Change[];
  lastCommitSeq(storeId: string): number;
  previousVersion(storeId: string, versionId: string): MemoryVersion | null;
}

export function createFeedStatements(db: Db): FeedStatements {
  const q = {
    // versions_by_commit (store_id, commit_seq) and the tombstones' primary key: two range reads,
    // whatever the store's size, merged in commit order.
    after: db.prepare(
      `SELECT * FROM (SELECT 'version' AS kind, ${BASIC}, NULL AS pruned_at FROM versions
                      WHERE store_id = @store AND commit_seq > @after ORDER BY commit_seq LIMIT +@limit)
       UNION ALL
       SELECT * FROM (SELECT 'pruned' AS kind, NULL, commit_seq, version_id, store_id, memory_id, NULL, NULL, NULL, NULL, NULL,
                             NULL, NULL, NULL, NULL, NULL, NULL, pruned_at FROM version_prunes
                      WHERE store_id = @store AND commit_seq > @after ORDER BY commit_seq LIMIT +@limit)
       ORDER BY commit_seq LIMIT +@limit`,
    ),
    last: db.prepare('SELECT commit_seq FROM stores WHERE id = ?').pluck(),
    // Within a store, rowid order is commit order on SQLite, and versions_by_memory is (store_id, memory_id, seq).
    previous: db.prepare(
      `SELECT p.*, ${versionContent('p')} AS content FROM versions v JOIN versions p ON p.store_id = v.store_id AND p.memory_id = v.memory_id AND p.seq < v.seq
       WHERE v.store_id = ? AND v.id = ? ORDER BY p.seq DESC LIMIT 1`,
    ),
  };
  return {
    listChanges(storeId, cq) {
      const rows = q.after.all({ store: storeId, after: cq.after, limit: cq.limit }) as (VersionRow & { kind: string; commit_seq: number; pruned_at: string | null })[];
      return rows.map((r): Change =>
        r.kind === 'version'
          ? { seq: r.commit_seq, version: toVersion(r) }
          : { seq: r.commit_seq, pruned: { versionId: r.id, memoryId: r.memory_id, storeId: r.store_id, prunedAt: r.pruned_at! } },
      );
    },
    lastCommitSeq(storeId) {
      return (q.last.get(storeId) as number | undefined) ?? 0;
    },
    previousVersion(storeId, versionId) {
      const r = q.previous.get(storeId, versionId) as VersionRow | undefined;
      return r ? toVersion(r) : null;
    },
  };
}
