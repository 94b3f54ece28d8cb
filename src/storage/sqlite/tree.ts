/**
 * @module Walking a store's path tree in SQLite: the direct children of a directory, with deeper
 * paths rolled into subdirectory prefixes. Listings at depth 1 (memories role) and the mount's
 * readdir (its read model) both walk it.
 */
import { subtreeEnd } from '../../domain/paths.js';
import { META, type MemoryRow } from '../common/rows.js';
import { walkFrom, walkPage, type Child, type PathRow, type WalkAt } from '../common/tree.js';
import { LIVE } from './expiry.js';
import type { Db } from './tx.js';

export type ChildWalk<R extends PathRow = MemoryRow> = (storeId: string, prefix: string, start: { key: string; inclusive: boolean }) => Generator<Child<R>>;

export function createChildWalk(db: Db): ChildWalk {
  return walkOf<MemoryRow>(db, META);
}

/** The same walk reading each row's path alone: a names-only listing (sqlite/mount-view.ts). */
export function createNameWalk(db: Db): ChildWalk<PathRow> {
  return walkOf<PathRow>(db, 'path');
}

function walkOf<R extends PathRow>(db: Db, columns: string): ChildWalk<R> {
  const q = {
    nextGt: db.prepare(`SELECT ${columns} FROM memories WHERE store_id = ? AND path > ? AND path < ? AND ${LIVE} ORDER BY path LIMIT +?`),
    nextGte: db.prepare(`SELECT ${columns} FROM memories WHERE store_id = ? AND path >= ? AND path < ? AND ${LIVE} ORDER BY path LIMIT +?`),
  };
  /** Direct children of `prefix` (ending in "/") from `start`, rolling deeper paths into prefixes (common/tree.ts pages them). */
  return function* children(storeId, prefix, start): Generator<Child<R>> {
    const end = subtreeEnd(prefix);
    for (let at: WalkAt | null = walkFrom(start); at; ) {
      const rows = (at.inclusive ? q.nextGte : q.nextGt).all(storeId, at.key, end, at.batch) as R[];
      const page: { children: Child<R>[]; next: WalkAt | null } = walkPage(prefix, rows, at);
      yield* page.children;
      at = page.next;
    }
  };
}
