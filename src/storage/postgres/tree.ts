/**
 * @module Walking a store's path tree in PostgreSQL: the direct children of a directory, deeper
 * paths rolled into subdirectory prefixes (the same keyset walk as sqlite/tree.ts). Listings at
 * depth 1 and the mount's readdir both walk it.
 */
import { subtreeEnd } from '../../domain/paths.js';
import type { Child } from '../common/tree.js';
import { all, type Q } from './db.js';
import { META, live, type MemoryRow } from './rows.js';

export type { Child };

/** Direct children of `prefix` (ending in "/") from `start`, live at `now`. */
export async function* children(q: Q, storeId: string, prefix: string, start: { key: string; inclusive: boolean }, now: string): AsyncGenerator<Child> {
  const end = subtreeEnd(prefix);
  let key = start.key;
  let inclusive = start.inclusive;
  // Pages grow while they hold files and drop back to one row after each jump past a subdirectory.
  let batch = 1;
  for (;;) {
    const rows = await all<MemoryRow>(
      q,
      `SELECT ${META} FROM memories WHERE store_id = $1 AND path ${inclusive ? '>=' : '>'} $2 AND path < $3 AND ${live(5)} ORDER BY path LIMIT $4`,
      [storeId, key, end, batch, now],
    );
    if (rows.length === 0) return;
    let jumped = false;
    for (const row of rows) {
      const rest = row.path.slice(prefix.length);
      const slash = rest.indexOf('/');
      if (slash < 0) {
        key = row.path;
        inclusive = false;
        yield { item: { type: 'memory', row }, resume: { k: key, x: 0 } };
      } else {
        const dir = prefix + rest.slice(0, slash + 1);
        key = subtreeEnd(dir);
        inclusive = true;
        jumped = true;
        yield { item: { type: 'memory_prefix', path: dir }, resume: { k: key, x: 1 } };
        break;
      }
    }
    if (!jumped && rows.length < batch) return;
    batch = jumped ? 1 : Math.min(batch * 4, 256);
  }
}
