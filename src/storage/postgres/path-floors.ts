/**
 * @module The highest number a redaction or prune took from a path (postgres/schema/v7.ts), so the
 * next version there never takes it again. The store's row lock, held by both, orders them with appends.
 */
import { pathHash } from '../common/path-hash.js';
import { run, type Q } from './db.js';

export { pathHash };

export async function keepFloor(q: Q, storeId: string, path: string, number: number): Promise<void> {
  await run(
    q,
    `INSERT INTO path_number_floors (store_id, path_hash, last) VALUES ($1, $2, $3)
     ON CONFLICT (store_id, path_hash) DO UPDATE SET last = greatest(path_number_floors.last, excluded.last)`,
    [storeId, pathHash(path), number],
  );
}
