/** @module Query strings: list and search parameters, page sizes, views, booleans and timestamps, as domain queries. */
import type { MemoryListQuery, Operation, PageQuery, SearchQuery, StoreListQuery, VersionListQuery, View } from '../domain/types.js';
import { fail } from './fail.js';
import { CONTINUITY_LIMITS, LIMITS } from './limits.js';
import { assertPathPrefix } from './memory.js';
import { assertWellFormed } from './text.js';
import { parseTimestamp } from './timestamps.js';

export type Query = Record<string, string | undefined>;

export function parseView(raw: string | undefined, fallback: View): View {
  if (raw === undefined) return fallback;
  if (raw === 'basic' || raw === 'full') return raw;
  fail('view', 'must be "basic" or "full"');
}

/**
 * A page size. `view=full` caps it at LIMITS.listMaxFull rather than refusing more (the SDK's
 * documented contract: "view=full caps limit at 20"); the overall range 1–listMax still applies.
 */
export function parseLimit(raw: string | undefined, view: View = 'basic'): number {
  const max = LIMITS.listMax;
  if (raw === undefined) return LIMITS.listDefault;
  if (!/^\d{1,6}$/.test(raw)) fail('limit', `must be an integer from 1 to ${max}`);
  const n = Number(raw);
  if (n < 1 || n > max) fail('limit', `must be from 1 to ${max} (got ${n})`);
  return view === 'full' ? Math.min(n, LIMITS.listMaxFull) : n;
}

export function parseBool(raw: string | undefined, field: string): boolean {
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  fail(field, 'must be "true" or "false"');
}

/** An empty page parameter means the first page. */
function parsePageParam(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  return raw;
}

/** A list that takes only `limit` and `page` (API keys, workspaces). */
export function parsePageQuery(q: Query): PageQuery {
  return { limit: parseLimit(q['limit']), page: parsePageParam(q['page']) };
}

export function parseStoreListQuery(q: Query): StoreListQuery {
  return {
    includeArchived: parseBool(q['include_archived'], 'include_archived'),
    createdGte: parseTimestamp(q['created_at[gte]'], 'created_at[gte]'),
    createdLte: parseTimestamp(q['created_at[lte]'], 'created_at[lte]'),
    limit: parseLimit(q['limit']),
    page: parsePageParam(q['page']),
  };
}

export function parseMemoryListQuery(q: Query): MemoryListQuery {
  const view = parseView(q['view'], 'basic');
  const depthRaw = q['depth'];
  if (depthRaw !== undefined && depthRaw !== '0' && depthRaw !== '1') fail('depth', 'must be 0 or 1');
  return {
    pathPrefix: q['path_prefix'] === undefined ? '/' : assertPathPrefix(q['path_prefix']),
    depth: depthRaw === '1' ? 1 : 0,
    limit: parseLimit(q['limit'], view),
    page: parsePageParam(q['page']),
    view,
  };
}

const OPERATIONS: readonly Operation[] = ['created', 'modified', 'deleted'];

export function parseVersionListQuery(q: Query): VersionListQuery {
  const view = parseView(q['view'], 'basic');
  const op = q['operation'];
  if (op !== undefined && !OPERATIONS.includes(op as Operation)) fail('operation', 'must be created, modified or deleted');
  return {
    memoryId: q['memory_id'] ?? null,
    operation: (op as Operation | undefined) ?? null,
    sessionId: q['session_id'] ?? null,
    apiKeyId: q['api_key_id'] ?? null,
    serviceAccountId: q['service_account_id'] ?? null,
    createdGte: parseTimestamp(q['created_at[gte]'], 'created_at[gte]'),
    createdLte: parseTimestamp(q['created_at[lte]'], 'created_at[lte]'),
    limit: parseLimit(q['limit'], view),
    page: parsePageParam(q['page']),
    view,
  };
}

export function parseSearchQuery(q: Query): SearchQuery {
  const text = q['q'];
  if (text === undefined || text.trim() === '') fail('q', 'is required and must not be blank');
  if (text.length > CONTINUITY_LIMITS.queryChars) fail('q', `must be at most ${CONTINUITY_LIMITS.queryChars} characters`);
  assertWellFormed(text, 'q');
  const mode = q['mode'] ?? 'fts';
  if (mode !== 'fts' && mode !== 'substring') fail('mode', 'must be "fts" or "substring"');
  return {
    q: text,
    mode,
    pathPrefix: q['path_prefix'] === undefined ? '/' : assertPathPrefix(q['path_prefix']),
    limit: parseLimit(q['limit']),
    page: parsePageParam(q['page']),
  };
}
