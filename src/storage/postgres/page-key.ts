/** @module The page key (postgres/schema/v25.ts), read once at open. */
import type pg from 'pg';
import type { PageKey } from '../port.js';

export async function readPageKey(c: pg.ClientBase): Promise<PageKey> {
  const r = await c.query<{ key: Buffer; legacy_until: string | null }>('SELECT key, legacy_until FROM page_key');
  const row = r.rows[0]!;
  return Object.freeze({ key: row.key, legacyUntil: row.legacy_until === null ? null : Date.parse(row.legacy_until) });
}
