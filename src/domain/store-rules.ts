/** @module What a store update does, decided from the store as the adapter read it in its transaction. */
import { archivedStore } from './memory-updates.js';
import type { Store, StorePatch } from './types.js';
import { assertMetadataCount } from '../validate/store.js';

/**
 * The store after `patch`: name and description replace, metadata merges key by key (null deletes
 * a key), within the pair limit. An archived store's settings can no longer change. `changed` false:
 * the patch sets what is there already, and nothing is written (updated_at stays).
 */
export function applyStorePatch(current: Store, patch: StorePatch, now: string): { store: Store; changed: boolean } {
  if (current.archivedAt) throw archivedStore(current.id);
  // A Map, not property assignment: a "__proto__" key must stay an ordinary key.
  const metadata = new Map(Object.entries(current.metadata));
  for (const [k, v] of Object.entries(patch.metadata ?? {})) {
    if (v === null) metadata.delete(k);
    else metadata.set(k, v);
  }
  assertMetadataCount(metadata.size);
  const next = { name: patch.name ?? current.name, description: patch.description ?? current.description, metadata: Object.fromEntries(metadata) };
  const retention = patch.retention === undefined ? current.retention : (patch.retention ?? undefined);
  const changed =
    next.name !== current.name || next.description !== current.description || JSON.stringify(next.metadata) !== JSON.stringify(current.metadata) ||
    JSON.stringify(retention ?? null) !== JSON.stringify(current.retention ?? null);
  if (!changed) return { store: current, changed };
  const { retention: _old, ...rest } = current;
  return { store: { ...rest, ...next, ...(retention ? { retention } : {}), updatedAt: now }, changed };
}

/** The instant before which a version is old enough for `maxAgeDays` (null: the rule is not set). */
export function retentionCutoff(maxAgeDays: number | null, now: string): string | null {
  return maxAgeDays === null ? null : new Date(Date.parse(now) - maxAgeDays * 86_400_000).toISOString();
}
