/**
 * @module The version rows both adapters append (sqlite/commit-order.ts, postgres/commit-order.ts
 * take each its store's next commit number): what a row holds, and the rows the expiry purge
 * writes, built the same on either engine.
 */
import { newId } from '../../service/ids.js';
import { actorColumns, toActor } from './rows.js';

export interface VersionRowInput {
  id: string;
  storeId: string;
  memoryId: string;
  operation: 'created' | 'modified' | 'deleted';
  path: string;
  content: string | null;
  sha: string | null;
  size: number | null;
  createdAt: string;
  actorType: string;
  actorId: string;
}

/** An expired memory, with the actor of its head version (null if that version is gone). */
export interface ExpiredRow {
  id: string;
  path: string;
  expires_at: string;
  actor_type: string | null;
  actor_id: string | null;
}

/**
 * The `deleted` version of an expired memory: dated at its expiry and attributed to whoever last
 * wrote it (and set its TTL). Its id is made here, not by the service: no caller knows how many expired.
 */
export function expiryVersionRow(storeId: string, r: ExpiredRow): VersionRowInput {
  const actor = actorColumns(toActor(r.actor_type ?? 'api_actor', r.actor_id ?? 'unknown'));
  return {
    id: newId('version'), storeId, memoryId: r.id, operation: 'deleted', path: r.path,
    content: null, sha: null, size: null, createdAt: r.expires_at, actorType: actor.type, actorId: actor.id,
  };
}
