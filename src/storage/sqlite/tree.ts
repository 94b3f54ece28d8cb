/**
 * @module Walking a store's path tree in SQLite: the direct children of a directory, with deeper
 * paths rolled into subdirectory prefixes. Listings at depth 1 (memories role) and the mount's
 * readdir (its read model) both walk it.
 */
import { subtreeEnd } from '../../domain/paths.js';
import { META, type MemoryRow } from '../common/rows.js';
import type { Child } from '../common/tree.js';
import { LIVE } from './expiry.js';
import type { Db } from './tx.js';

export type ChildWalk = (storeId: string, prefix: string, start: { key: string; inclusive: boolean }) => Generator<Child>;

export function createChildWalk(db: Db): ChildWalk {
  const q = {
    nextGt: db.prepare(`SELECT ${META} FROM memories WHERE store_id = ? AND path > ? AND path < ? AND ${LIVE} ORDER BY path LIMIT ?`),
    nextGte: db.prepare(`SELECT ${META} FROM memories WHERE store_id = ? AND path >= ? AND path < ? AND ${LIVE} ORDER BY path LIMIT ?`),
  };
  /**
   * Direct children of `prefix` (ending in "/") from `start`, rolling deeper paths into prefixes.
   * Rows come in keyset pages that grow while they hold files (a directory of 1,000 files is a few
   * queries, not 1,000) and drop back to one row after each jump past a subdirectory.
   */
  return function* children(storeId, prefix, start): Generator<Child> {
    const end = subtreeEnd(prefix);
    let key = start.key;
    let inclusive = start.inclusive;
    let batch = 1;
    for (;;) {
      const rows = (inclusive ? q.nextGte : q.nextGt).all(storeId, key, end, batch) as MemoryRow[];
      if (rows.length === 0) return;
      let jumped = false;
      for (const row of rows) {
        const rest = row.path.slice(prefix.length);
        const slash = rest.indexOf('/');
        if (slash < 0) {
          key = row.path;
          inclusive = false;
          yield { item: { type: 'memory', row } as const, resume: { k: key, x: 0 } };
        } else {
          const dir = prefix + rest.slice(0, slash + 1);
          key = subtreeEnd(dir);
          inclusive = true;
          jumped = true;
          yield { item: { type: 'memory_prefix', path: dir } as const, resume: { k: key, x: 1 } };
          break;
        }
      }
      if (!jumped && rows.length < batch) return;
      batch = jumped ? 1 : Math.min(batch * 4, 256);
    }
  };
}
