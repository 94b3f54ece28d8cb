/** @module Domain → wire JSON for the history routes (issue 15): change feed items and pages, version diffs. */
import type { ChangePage, VersionDiff } from '../src/index.js';
import { toWireVersion } from './wire.js';

export function toWireChange(item: ChangePage['data'][number]) {
  if ('version' in item) return { cursor: item.cursor, memory_version: toWireVersion(item.version, 'basic') };
  const p = item.pruned;
  return {
    cursor: item.cursor,
    memory_version_pruned: { type: 'memory_version_pruned' as const, memory_version_id: p.versionId, memory_id: p.memoryId, memory_store_id: p.storeId, pruned_at: p.prunedAt },
  };
}

/** The event name of an item in the event stream: what its one payload field is. */
export function changeEvent(item: ChangePage['data'][number]): 'memory_version' | 'memory_version_pruned' {
  return 'version' in item ? 'memory_version' : 'memory_version_pruned';
}

export function toWireChangePage(page: ChangePage) {
  return { data: page.data.map(toWireChange), next_after: page.nextAfter };
}

export function toWireDiff(d: VersionDiff) {
  return {
    type: 'memory_version_diff' as const,
    from: d.from ? toWireVersion(d.from, 'basic') : null,
    to: toWireVersion(d.to, 'basic'),
    unified: d.unified,
    minimal: d.minimal,
  };
}
