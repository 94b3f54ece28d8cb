/**
 * @module PostgreSQL operations for the history role: a store's versions and prune tombstones in
 * commit order (two range reads on (store_id, commit_seq), merged), and a version's predecessor.
 */
import type { Change, MemoryVersion } from '../../domain/types.js';
import { versionContent } from './contents.js';
import { all, first, type Q } from './db.js';
import { byUniqueId, toVersion, type VersionRow } from './rows.js';

const BASIC = `commit_seq, seq, id, store_id, memory_id, operation, path, NULL AS content, content_sha256, content_size_bytes,
  created_at, actor_type, actor_id, redacted_at, redacted_by_type, redacted_by_id`;

type ChangeRow = VersionRow & { kind: 'version' | 'pruned'; commit_seq: number; pruned_at: string | null };

export const feedReads = {
  async listChanges(q: Q, storeId: string, cq: { after: number; limit: number }): Promise<Change[]> {
    const rows = await all<ChangeRow>(
      q,
      `SELECT * FROM (
         (SELECT 'version' AS kind, ${BASIC}, NULL AS pruned_at FROM versions
          WHERE store_id = $1 AND commit_seq > $2 ORDER BY commit_seq LIMIT $3)
         UNION ALL
         (SELECT 'pruned', commit_seq, NULL, version_id, store_id, memory_id, NULL, NULL, NULL, NULL, NULL,
                 NULL, NULL, NULL, NULL, NULL, NULL, pruned_at FROM version_prunes
          WHERE store_id = $1 AND commit_seq > $2 ORDER BY commit_seq LIMIT $3)
       ) AS c ORDER BY commit_seq LIMIT $3`,
      [storeId, cq.after, cq.limit],
    );
    return rows.map((r): Change =>
      r.kind === 'version'
        ? { seq: r.commit_seq, version: toVersion(r) }
        : { seq: r.commit_seq, pruned: { versionId: r.id, memoryId: r.memory_id, storeId: r.store_id, prunedAt: r.pruned_at! } },
    );
  },

  async lastCommitSeq(q: Q, storeId: string): Promise<number> {
    const r = await first<{ commit_seq: string | number }>(q, 'SELECT commit_seq FROM stores WHERE id = $1', [storeId]);
    return r ? Number(r.commit_seq) : 0;
  },

  async previousVersion(q: Q, storeId: string, versionId: string): Promise<MemoryVersion | null> {
    const r = await first<VersionRow>(
      q,
      // The version by its id first, then the one before it among its memory's versions, one step
      // back in versions_by_memory (store_id, memory_id, seq): in a store, seq follows the commit order
      // (its writers take turns on its row: postgres/schema/v2.ts). As a join ordered by commit_seq,
      // a generic plan walked the whole store's versions by commit number instead.
      `SELECT p.*, ${versionContent('p')} AS content FROM ${byUniqueId('versions', 2, 'v')}
       CROSS JOIN LATERAL (SELECT * FROM versions b WHERE b.store_id = v.store_id AND b.memory_id = v.memory_id AND b.seq < v.seq
                           ORDER BY b.seq DESC LIMIT 1) p
       WHERE v.store_id = $1`,
      [storeId, versionId],
    );
    return r ? toVersion(r) : null;
  },
};
