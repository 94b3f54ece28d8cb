/**
 * @module PostgreSQL migration 18: the write probe finds a memory by id through the id's unique index
 * whatever the table's statistics say.
 *
 * Why: `mnemo_write_probe` (migrations 11 and 14) read a memory by id as `WHERE mm.store_id =
 * p_store AND mm.id = p_id`. Before a table's first ANALYZE (a new database's first minute), the
 * generic plan the function caches could take the (store_id, path) index for that and read every
 * memory of the store to find one, on every update, delete or move by id; the adapter's own reads by
 * id had the same plan (`byUniqueId` in postgres/rows.ts, test/bench/README.md, stop 38). The row is
 * now taken by id in a subquery the planner cannot merge (OFFSET 0), and its store checked after
 * (its alias qualifies `id`: unqualified, it is the function's own output column).
 * Nothing else in the probe changes.
 */
import { probeFindingNoDeletedStore } from './v14.js';

function probeByUniqueId(): string {
  const byId = 'INTO m FROM memories mm\n      WHERE mm.store_id = p_store AND mm.id = p_id AND';
  const probe = probeFindingNoDeletedStore();
  if (!probe.includes(byId)) throw new Error("PostgreSQL migration 18: migration 14's probe is not as expected");
  return probe.replace(byId, 'INTO m FROM (SELECT * FROM memories f WHERE f.id = p_id OFFSET 0) mm\n      WHERE mm.store_id = p_store AND');
}

export const PG_MIGRATION_18 = probeByUniqueId();
