/**
 * @module The version rows both adapters append (sqlite/commit-order.ts, postgres/commit-order.ts
 * take each its store's next commit number): what a row holds, and the rows memory writes and
 * the expiry purge append, built the same on either engine.
 */
import type { Memory } from '../../domain/types.js';
import { newId } from '../../service/ids.js';
import type { WriteStamp } from '../port.js';
import { actorColumns, toActor, type MemoryRow } from './rows.js';

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

/**
 * Expired memories a write purges before it at most, besides those in its way (at, above or below
 * the path it takes, which it must purge to take it): a mass expiry otherwise made the first write
 * after it delete them all in its transaction (5,000 took 0.46 s of SQLite's serving thread and
 * 8.8 s on PostgreSQL, under the store's lock). The rest stay hidden until the minute sweep or the
 * next writes purge them.
 */
export const WRITE_PURGE_MAX = 100;

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

/** The version a memory write appends: the memory as the write leaves it, by the write's actor. */
export function writeVersionRow(
  stamp: WriteStamp,
  op: 'created' | 'modified',
  m: Pick<Memory, 'id' | 'storeId' | 'path' | 'content' | 'contentSha256' | 'contentSizeBytes'>,
): VersionRowInput {
  const a = actorColumns(stamp.actor);
  return {
    id: stamp.versionId, storeId: m.storeId, memoryId: m.id, operation: op, path: m.path,
    content: m.content, sha: m.contentSha256, size: m.contentSizeBytes, createdAt: stamp.now, actorType: a.type, actorId: a.id,
  };
}

/** The version a deletion appends: the path the memory stood at, no content. */
export function deletionVersionRow(stamp: WriteStamp, row: Pick<MemoryRow, 'id' | 'store_id' | 'path'>): VersionRowInput {
  const a = actorColumns(stamp.actor);
  return {
    id: stamp.versionId, storeId: row.store_id, memoryId: row.id, operation: 'deleted', path: row.path,
    content: null, sha: null, size: null, createdAt: stamp.now, actorType: a.type, actorId: a.id,
  };
}
