/**
 * @module Removing deleted stores' rows in steps on PostgreSQL (postgres/schema/v14.ts): the request
 * only hid the store; each step is one statement, so one transaction of a few hundred rows, on
 * whichever server's upkeep gets there first (a store another server is purging is skipped).
 */
import { first, type Q } from './db.js';

/** One step: a slice of the oldest deleted store's rows, or its row. Returns whether a step was taken (more may remain). */
export async function purgeDeletedStore(q: Q): Promise<boolean> {
  const r = await first<{ stepped: boolean }>(q, 'SELECT mnemo_purge_deleted_store() AS stepped', []);
  return r?.stepped === true;
}
