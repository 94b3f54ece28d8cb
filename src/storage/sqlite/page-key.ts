/** @module The page key (sqlite/schema/page-key.ts), read once at open. */
import type { PageKey } from '../port.js';
import type { Db } from './tx.js';

export function readPageKey(db: Db): PageKey {
  const row = db.prepare('SELECT key, legacy_until FROM page_key').get() as { key: Buffer; legacy_until: string | null };
  return Object.freeze({ key: row.key, legacyUntil: row.legacy_until === null ? null : Date.parse(row.legacy_until) });
}
