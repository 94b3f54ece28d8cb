/**
 * @module The parameters of the OpenAPI document: path parameters, the list queries (limit, page,
 * view, path_prefix, depth, the filters) and the headers, bounded by the limits validation uses.
 */
import { z } from 'zod';
import { CHANGES_LIMITS, CONTINUITY_LIMITS, LIMITS } from '../../src/index.js';

const PARAM_DOCS: Record<string, string> = {
  store: 'memory store id (memstore_…)',
  memory: 'memory id (mem_…)',
  version: 'memory version id (memver_…)',
  checkpoint: 'checkpoint id (ckpt_…)',
  agent: 'agent id: letters, digits and . _ : @ + = -',
  session: 'session id (an /v1/sessions id, or a checkpoint scope id under checkpoints/sessions)',
  key: 'API key id (apikey_…)',
  file: 'an asset file name of swagger-ui-dist',
};

export function pathParams(path: string): z.ZodObject | undefined {
  const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  if (names.length === 0) return undefined;
  return z.object(Object.fromEntries(names.map((n) => [n, z.string().meta({ description: PARAM_DOCS[n] ?? n })])));
}

const limit = (max: number, note = '') =>
  z
    .int()
    .min(1)
    .max(max)
    .optional()
    .meta({ description: `page size, default ${LIMITS.listDefault}${note}` });
const page = z.string().optional().meta({ description: 'the next_page cursor of the previous page' });
const view = (fallback: 'basic' | 'full') =>
  z
    .enum(['basic', 'full'])
    .optional()
    .meta({ description: `full includes content; default ${fallback}` });
const createdRange = {
  'created_at[gte]': z.string().optional().meta({ description: 'RFC 3339; created at or after' }),
  'created_at[lte]': z.string().optional().meta({ description: 'RFC 3339; created at or before' }),
};
const pathPrefix = z.string().optional().meta({ description: 'only paths under this prefix (default /)' });
const fullLimitNote = `; at most ${LIMITS.listMaxFull} with view=full`;

export const storeListQuery = z.object({
  include_archived: z.boolean().optional().meta({ description: 'include archived stores (default false)' }),
  ...createdRange,
  limit: limit(LIMITS.listMax),
  page,
});
export const memoryListQuery = z.object({
  path_prefix: pathPrefix,
  depth: z.int().min(0).max(1).optional().meta({ description: '1: only direct children, deeper paths folded into memory_prefix items; 0 (default): every memory' }),
  view: view('basic'),
  limit: limit(LIMITS.listMax, fullLimitNote),
  page,
});
export const versionListQuery = z.object({
  memory_id: z.string().optional(),
  operation: z.enum(['created', 'modified', 'deleted']).optional(),
  session_id: z.string().optional(),
  api_key_id: z.string().optional(),
  service_account_id: z.string().optional(),
  ...createdRange,
  view: view('basic'),
  limit: limit(LIMITS.listMax, fullLimitNote),
  page,
});
export const searchQuery = z.object({
  q: z.string().min(1).max(CONTINUITY_LIMITS.queryChars).meta({ description: 'the words (fts) or phrase (substring) to find' }),
  mode: z.enum(['fts', 'substring']).optional().meta({ description: 'default fts' }),
  path_prefix: pathPrefix,
  limit: limit(LIMITS.listMax),
  page,
});
export const changesQuery = z.object({
  after: z.string().optional().meta({ description: 'a cursor from this feed (an item\'s cursor or next_after); absent: from the first version' }),
  limit: z.int().min(1).max(CHANGES_LIMITS.listMax).optional().meta({ description: `page size, default ${CHANGES_LIMITS.listDefault} (JSON pages only)` }),
});
export const diffQuery = z.object({
  against: z.string().optional().meta({ description: 'a version id of the same store; default: the same memory\'s previous version (empty content for its first)' }),
});
export const pageQuery = z.object({ limit: limit(LIMITS.listMax), page });
export const viewQuery = (fallback: 'basic' | 'full') => z.object({ view: view(fallback) });

export const idempotencyHeader = z.object({
  'idempotency-key': z.string().optional().meta({ description: '1 to 256 bytes; a retry with the same key and body replays the first response (24 h)' }),
});
export const workspaceHeader = z.object({
  'anthropic-workspace-id': z.string().optional().meta({ description: 'act in this workspace (operator keys only)' }),
});
