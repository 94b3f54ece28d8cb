/** @module `mnemo check` for invariant 13 (sqlite/schema/limits.ts): each store's usage row matches its memories and checkpoints (and its checkpoints alone). */
import { reportUsageMismatch, type UsageMismatchRow } from '../common/check-rules.js';
import type { Db } from './tx.js';

export function createUsageCheck(db: Db): (report: (line: string) => void) => void {
  // One pass over the memories' covering index, grouped by store, against the kept counters.
  const mismatches = db.prepare(
    `SELECT s.id AS store_id,
            coalesce(u.memories, 0) AS kept_memories, coalesce(u.bytes, 0) AS kept_bytes, coalesce(u.checkpoint_bytes, 0) AS kept_checkpoint_bytes,
            coalesce(m.n, 0) AS memories, coalesce(m.bytes, 0) + coalesce(c.bytes, 0) AS bytes, coalesce(c.bytes, 0) AS checkpoint_bytes
     FROM stores s
     LEFT JOIN store_usage u ON u.store_id = s.id
     LEFT JOIN (SELECT store_id, count(*) AS n, sum(content_size_bytes) AS bytes FROM memories GROUP BY store_id) m
       ON m.store_id = s.id
     LEFT JOIN (SELECT store_id, sum(size_bytes) AS bytes FROM checkpoints GROUP BY store_id) c ON c.store_id = s.id
     WHERE coalesce(u.memories, 0) <> coalesce(m.n, 0) OR coalesce(u.bytes, 0) <> coalesce(m.bytes, 0) + coalesce(c.bytes, 0)
        OR coalesce(u.checkpoint_bytes, 0) <> coalesce(c.bytes, 0)`,
  );
  return (report) => {
    for (const r of mismatches.iterate() as Iterable<UsageMismatchRow>) reportUsageMismatch(r, report);
  };
}
