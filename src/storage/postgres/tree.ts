/**
 * @module Walking a store's path tree in PostgreSQL: the direct children of a directory, deeper
 * paths rolled into subdirectory prefixes (the same keyset walk as sqlite/tree.ts). Listings at
 * depth 1 and the mount's readdir both walk it.
 */
import { subtreeEnd } from '../../domain/paths.js';
import { walkFrom, walkPage, type Child, type PathRow, type WalkAt } from '../common/tree.js';
import { all, type Q } from './db.js';
import { META, live, type MemoryRow } from './rows.js';

/** Direct children of `prefix` (ending in "/") from `start`, live at `now`. */
export function children(q: Q, storeId: string, prefix: string, start: { key: string; inclusive: boolean }, now: string): AsyncGenerator<Child> {
  return walk<MemoryRow>(META, q, storeId, prefix, start, now);
}

/** The same walk reading each row's path alone: a names-only listing (postgres/mount-view.ts). */
export function childNames(q: Q, storeId: string, prefix: string, start: { key: string; inclusive: boolean }, now: string): AsyncGenerator<Child<PathRow>> {
  return walk<PathRow>('path', q, storeId, prefix, start, now);
}

async function* walk<R extends PathRow>(columns: string, q: Q, storeId: string, prefix: string, start: { key: string; inclusive: boolean }, now: string): AsyncGenerator<Child<R>> {
  const end = subtreeEnd(prefix);
  for (let at: WalkAt | null = walkFrom(start); at; ) {
    const rows: R[] = await all<R>(
      q,
      `SELECT ${columns} FROM memories WHERE store_id = $1 AND path ${at.inclusive ? '>=' : '>'} $2 AND path < $3 AND ${live(5)} ORDER BY path LIMIT $4`,
      [storeId, at.key, end, at.batch, now],
    );
    const page: { children: Child<R>[]; next: WalkAt | null } = walkPage(prefix, rows, at);
    yield* page.children;
    at = page.next;
  }
}
