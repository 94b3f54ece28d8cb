/**
 * @module Walking a store's path tree in PostgreSQL: the direct children of a directory, deeper
 * paths rolled into subdirectory prefixes (the same keyset walk as sqlite/tree.ts). Listings at
 * depth 1 and the mount's readdir both walk it.
 */
import { subtreeEnd } from '../../domain/paths.js';
import { walkFrom, walkPage, type Child, type WalkAt } from '../common/tree.js';
import { all, type Q } from './db.js';
import { META, live, type MemoryRow } from './rows.js';

/** Direct children of `prefix` (ending in "/") from `start`, live at `now`. */
export async function* children(q: Q, storeId: string, prefix: string, start: { key: string; inclusive: boolean }, now: string): AsyncGenerator<Child> {
  const end = subtreeEnd(prefix);
  for (let at: WalkAt | null = walkFrom(start); at; ) {
    const rows = await all<MemoryRow>(
      q,
      `SELECT ${META} FROM memories WHERE store_id = $1 AND path ${at.inclusive ? '>=' : '>'} $2 AND path < $3 AND ${live(5)} ORDER BY path LIMIT $4`,
      [storeId, at.key, end, at.batch, now],
    );
    const page = walkPage(prefix, rows, at);
    yield* page.children;
    at = page.next;
  }
}
