/**
 * @module What a memory write may do, decided from rows the adapter read inside its transaction:
 * the adapter reads, these decide (or throw the MnemoError the faces map), the adapter writes.
 * Nothing here touches storage. The update plan and preconditions live beside, in src/domain/memory-updates.ts.
 */
import { notFound } from './errors.js';
import { archivedStore, pathConflict } from './memory-updates.js';
import { ancestors } from './paths.js';
import { assertMemoryPath } from '../validate/memory.js';

/** The store a write goes to, as the adapter found it: null when there is none. */
export interface StoreState {
  archivedAt: string | null;
}

/**
 * A change an archived store still allows (a redaction, a checkpoint's delete) needs only the store
 * to be there, read in the change's own transaction: one deleted meanwhile is not_found.
 */
export function assertStoreFound(storeId: string, store: StoreState | null): asserts store is StoreState {
  if (!store) throw notFound('memory store', storeId);
}

/** "Archived means read-only": a write to a missing store is not_found, to an archived one refused. */
export function assertStoreWritable(storeId: string, store: StoreState | null): void {
  assertStoreFound(storeId, store);
  if (store.archivedAt) throw archivedStore(storeId);
}

/**
 * Where a live memory would overlap `path` (invariant 2: a path must not equal, contain, or sit below
 * another live memory's path): at the path or any of its ancestors (a file where a directory is
 * implied), or anywhere below `path + "/"` (a directory implied where a file is).
 */
export function overlapProbe(path: string): { atOrAbove: string[]; below: string } {
  return { atOrAbove: [path, ...ancestors(path)], below: path + '/' };
}

/** Refuses the write when the adapter's probe found another live memory (path_conflict, naming it). */
export function assertNoOverlap(path: string, found: { id: string; path: string } | null): void {
  if (found) throw pathConflict(path, found);
}

/**
 * The new path of a memory at `path` when its directory `from` is renamed to `to`. A deeper
 * destination can push a moved path past the limits; the whole move then fails.
 */
export function movedPath(from: string, to: string, path: string): string {
  return assertMemoryPath(to + path.slice(from.length));
}
