/**
 * @module The highest number a redaction or prune took from a path (sqlite/schema/path-numbers.ts),
 * so the next version there never takes it again.
 */
import { pathHash } from '../common/path-hash.js';
import type { Db } from './tx.js';

export { pathHash };

/** Returns `keep(storeId, path, number)`: call it in the transaction that redacts or prunes a version at `path`. */
export function createFloorKeep(db: Db): (storeId: string, path: string, number: number) => void {
  const upsert = db.prepare(
    `INSERT INTO path_number_floors (store_id, path_hash, last) VALUES (?, ?, ?)
     ON CONFLICT (store_id, path_hash) DO UPDATE SET last = max(last, excluded.last)`,
  );
  return (storeId, path, number) => {
    upsert.run(storeId, pathHash(path), number);
  };
}
