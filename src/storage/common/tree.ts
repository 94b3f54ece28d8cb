/**
 * @module The keyset walk of a store's path tree both adapters run (sqlite/tree.ts and
 * sqlite/history.ts, postgres/tree.ts and postgres/history.ts): what a path found below a directory
 * stands for, and where the walk goes on after it. Each adapter runs the query for the next rows.
 */
import { subtreeEnd } from '../../domain/paths.js';
import type { DirectoryNames } from '../port.js';
import type { MemoryRow } from './rows.js';

/** What a walk needs of a row: its path (a names-only walk reads nothing else). */
export type PathRow = Pick<MemoryRow, 'path'>;

/** A direct child of a directory, and the cursor that resumes a listing after it. */
export type Child<R extends PathRow = MemoryRow> =
  | { item: { type: 'memory'; row: R }; resume: { k: string; x: number } }
  | { item: { type: 'memory_prefix'; path: string }; resume: { k: string; x: number } };

/**
 * The direct child of `prefix` (ending in "/") that `path` is, or is below, and the key the walk
 * resumes from: past the file itself, or (inclusive) past everything below the subdirectory.
 */
export function stepBelow(prefix: string, path: string): { name: string; dir: boolean; key: string; inclusive: boolean } {
  const rest = path.slice(prefix.length);
  const slash = rest.indexOf('/');
  if (slash < 0) return { name: rest, dir: false, key: path, inclusive: false };
  const name = rest.slice(0, slash);
  return { name, dir: true, key: subtreeEnd(prefix + name + '/'), inclusive: true };
}

/** The child a memory row found below `prefix` stands for: itself, or the subdirectory it is in. */
function childOf<R extends PathRow>(prefix: string, row: R): Child<R> {
  const s = stepBelow(prefix, row.path);
  return s.dir
    ? { item: { type: 'memory_prefix', path: prefix + s.name + '/' }, resume: { k: s.key, x: 1 } }
    : { item: { type: 'memory', row }, resume: { k: s.key, x: 0 } };
}

/** Where a walk of direct children stands: the key its next query starts at, and how many rows it asks for. */
export interface WalkAt {
  key: string;
  inclusive: boolean;
  batch: number;
}

/** A walk's first position: `start` (a listing's cursor, or the directory itself), one row at first. */
export function walkFrom(start: { key: string; inclusive: boolean }): WalkAt {
  return { key: start.key, inclusive: start.inclusive, batch: 1 };
}

/**
 * The children a page of rows (those at `at`, in path order, at most `at.batch`) yields, and where
 * the walk goes on (null: nothing more below the directory). A subdirectory ends the page: the walk
 * jumps past it. Pages grow while they hold files (a directory of 1,000 files is a few queries, not
 * 1,000) and drop back to one row after each jump past a subdirectory.
 */
export function walkPage<R extends PathRow>(prefix: string, rows: R[], at: WalkAt): { children: Child<R>[]; next: WalkAt | null } {
  const children: Child<R>[] = [];
  let { key, inclusive } = at;
  for (const row of rows) {
    const child = childOf(prefix, row);
    children.push(child);
    [key, inclusive] = [child.resume.k, child.resume.x === 1];
    if (child.item.type === 'memory_prefix') return { children, next: { key, inclusive, batch: 1 } };
  }
  if (rows.length < at.batch) return { children, next: null };
  return { children, next: { key, inclusive, batch: Math.min(at.batch * 4, 256) } };
}

/** A child's name in its directory (`prefix`, ending in "/"), and whether it is a subdirectory. */
export function childName(prefix: string, child: Child<PathRow>): { name: string; dir: boolean } {
  return child.item.type === 'memory'
    ? { name: child.item.row.path.slice(prefix.length), dir: false }
    : { name: child.item.path.slice(prefix.length, -1), dir: true };
}

/** Where a walk goes on after `child`. */
export function resumeAfter(child: Child<PathRow>): { key: string; inclusive: boolean } {
  return { key: child.resume.k, inclusive: child.resume.x === 1 };
}

/**
 * A directory's entry names (`files` and `dirs` in walk order) as readdir lists them: each once, in
 * UTF-16 code unit order (Array.prototype.sort's, which the mount's readdir has always used), with
 * its kind. The walk's order is byte order of the paths, a subdirectory's with its "/": nearly this
 * order already ("notes" after "notes.md" is the common difference), so the sort is a few merges.
 * A name met both as a file and as a subdirectory (a paged walk that crossed a write) is both.
 */
export function sortedNames(files: readonly string[], dirs: readonly string[]): DirectoryNames {
  const all = files.concat(dirs).sort();
  const isDir = dirs.length > 0 ? new Set(dirs) : null;
  const names: string[] = [];
  const kinds = new Uint8Array(all.length);
  for (let i = 0; i < all.length; i++) {
    const name = all[i]!;
    if (i > 0 && name === all[i - 1]) {
      kinds[names.length - 1] = 3;
      continue;
    }
    kinds[names.length] = isDir?.has(name) ? 2 : 1;
    names.push(name);
  }
  return { names, kinds: kinds.subarray(0, names.length) };
}
