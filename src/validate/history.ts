/** @module Query strings of the history routes (issue 15): the change feed's cursor and page size, a diff's `against`. */
import { decodeChangeCursor } from '../domain/change-cursor.js';
import { fail } from './fail.js';
import type { Query } from './queries.js';

export const CHANGES_LIMITS = { listDefault: 100, listMax: 1000 } as const;

export interface ChangesQuery {
  after: string | null;
  /** Where `after` came from (`after` or `Last-Event-ID`), named if the feed refuses it for another store's. */
  afterField: 'after' | 'Last-Event-ID';
  limit: number;
}

/**
 * `after` (or, for an event stream that reconnects, its Last-Event-ID, which wins: it is the last
 * event the client got) and `limit` 1–1000, default 100. A cursor this server did not issue is a 400.
 */
export function parseChangesQuery(q: Query, lastEventId?: string): ChangesQuery {
  const raw = lastEventId !== undefined && lastEventId !== '' ? { value: lastEventId, field: 'Last-Event-ID' as const } : q['after'] ? { value: q['after'], field: 'after' as const } : null;
  if (raw) decodeChangeCursor(raw.value, raw.field);
  const limitRaw = q['limit'];
  let limit: number = CHANGES_LIMITS.listDefault;
  if (limitRaw !== undefined) {
    if (!/^\d{1,6}$/.test(limitRaw)) fail('limit', `must be an integer from 1 to ${CHANGES_LIMITS.listMax}`);
    limit = Number(limitRaw);
    if (limit < 1 || limit > CHANGES_LIMITS.listMax) fail('limit', `must be from 1 to ${CHANGES_LIMITS.listMax} (got ${limit})`);
  }
  return { after: raw?.value ?? null, afterField: raw?.field ?? 'after', limit };
}

/** `against`: a version id of the same store, or absent (the memory's previous version). */
export function parseDiffQuery(q: Query): { against: string | null } {
  const against = q['against'];
  if (against === '') fail('against', 'must be a memory version id (memver_…) when given');
  return { against: against ?? null };
}
