/** @module Domain → wire JSON for the history routes (issue 15): change feed items and pages, version diffs. */
import type { ChangePage, VersionDiff } from '../src/index.js';
import { toWireVersion } from './wire.js';

export function toWireChange(item: ChangePage['data'][number]) {
  return { cursor: item.cursor, memory_version: toWireVersion(item.version, 'basic') };
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
  };
}
