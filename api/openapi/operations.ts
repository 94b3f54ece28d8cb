/**
 * @module Every operation of the API as one row: method, path, body (the validation's own zod
 * schema), query, response shape and auth. The openapi test compares these rows with the app's
 * route table, both ways, so adding a route means adding its row here.
 */
import type { ResponseConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { REQUEST_BODY_SCHEMAS } from '../../src/index.js';
import { changesQuery, diffQuery, memoryListQuery, pageQuery, searchQuery, storeListQuery, versionListQuery, viewQuery } from './params.js';
import * as wire from './wire-schemas.js';

export type Method = 'get' | 'post' | 'delete';
/** key: the x-api-key or bearer key (the default); none: unauthenticated; metrics: see /metrics. */
export type Auth = 'key' | 'none' | 'metrics';

export interface Operation {
  method: Method;
  /** OpenAPI spelling: `{store}` where the Hono route has `:store`. */
  path: string;
  tag: string;
  summary: string;
  body?: z.ZodType;
  query?: z.ZodObject;
  /** Takes an Idempotency-Key header (a create, update or delete that records a receipt). */
  idempotent?: boolean;
  /** The 200 response: a zod schema for JSON, or a raw content object. */
  ok: z.ZodType | ResponseConfig;
  auth?: Auth;
  /** Extra error statuses besides the defaults of its kind. */
  errors?: number[];
  description?: string;
}

/** Each request body schema under a component name (`.meta` makes a named copy; validation's own is untouched). */
const B = Object.fromEntries(Object.entries(REQUEST_BODY_SCHEMAS).map(([k, s]) => [k, s.meta({ id: requestSchemaName(k) })])) as {
  [K in keyof typeof REQUEST_BODY_SCHEMAS]: (typeof REQUEST_BODY_SCHEMAS)[K];
};
/** Validation checks each reference on its own; the document shows the shape it checks it against. */
const checkpointBody = REQUEST_BODY_SCHEMAS.checkpointCreate
  .extend({ references: z.array(B.checkpointReference).nullish() })
  .meta({ id: requestSchemaName('checkpointCreate') });
const S = '/v1/memory_stores';
const M = `${S}/{store}/memories`;
const V = `${S}/{store}/memory_versions`;
const C = `${S}/{store}/checkpoints`;

const healthy = z.strictObject({ status: z.literal('ok') });

export const OPERATIONS: readonly Operation[] = [
  { method: 'post', path: S, tag: 'memory stores', summary: 'Create a memory store', body: B.storeCreate, idempotent: true, ok: wire.MemoryStore },
  { method: 'get', path: S, tag: 'memory stores', summary: 'List memory stores', query: storeListQuery, ok: wire.pageOf(wire.MemoryStore, 'MemoryStorePage') },
  { method: 'get', path: `${S}/{store}`, tag: 'memory stores', summary: 'Retrieve a memory store', ok: wire.MemoryStore },
  { method: 'post', path: `${S}/{store}`, tag: 'memory stores', summary: 'Update a memory store', body: B.storeUpdate, idempotent: true, ok: wire.MemoryStore },
  { method: 'delete', path: `${S}/{store}`, tag: 'memory stores', summary: 'Delete a memory store and everything in it', idempotent: true, ok: wire.deleted('memory_store_deleted', 'MemoryStoreDeleted') },
  { method: 'post', path: `${S}/{store}/archive`, tag: 'memory stores', summary: 'Archive a memory store (read-only from then on)', idempotent: true, ok: wire.MemoryStore },
  { method: 'post', path: `${S}/{store}/fork`, tag: 'memory stores', summary: 'Fork a memory store: a new store holding its memories as of an instant (mnemo extension)', body: B.storeFork, idempotent: true, ok: wire.MemoryStore },

  { method: 'post', path: M, tag: 'memories', summary: 'Create a memory', body: B.memoryCreate, query: viewQuery('basic'), idempotent: true, ok: wire.Memory },
  { method: 'get', path: M, tag: 'memories', summary: 'List memories', query: memoryListQuery, ok: wire.pageOf(z.union([wire.Memory, wire.MemoryPrefix]), 'MemoryListPage') },
  { method: 'get', path: `${M}/{memory}`, tag: 'memories', summary: 'Retrieve a memory', query: viewQuery('full'), ok: wire.Memory },
  { method: 'post', path: `${M}/{memory}`, tag: 'memories', summary: 'Update a memory (content, path, expiry; optionally on a precondition)', body: B.memoryUpdate, query: viewQuery('basic'), idempotent: true, ok: wire.Memory },
  {
    method: 'delete',
    path: `${M}/{memory}`,
    tag: 'memories',
    summary: 'Delete a memory',
    query: z.object({ expected_content_sha256: z.string().optional().meta({ description: 'delete only if the content still has this hash' }) }),
    idempotent: true,
    ok: wire.deleted('memory_deleted', 'MemoryDeleted'),
  },

  { method: 'get', path: V, tag: 'memory versions', summary: 'List memory versions', query: versionListQuery, ok: wire.pageOf(wire.MemoryVersion, 'MemoryVersionPage') },
  { method: 'get', path: `${V}/{version}`, tag: 'memory versions', summary: 'Retrieve a memory version', query: viewQuery('full'), ok: wire.MemoryVersion },
  { method: 'post', path: `${V}/{version}/redact`, tag: 'memory versions', summary: 'Redact a memory version (erase its content and path)', idempotent: true, ok: wire.MemoryVersion },

  {
    method: 'get',
    path: `${V}/{version}/diff`,
    tag: 'memory versions',
    summary: 'A unified diff of a version against another version of the store (default: its predecessor)',
    description: 'A redacted side has no content to compare: 409 conflict_error.',
    query: diffQuery,
    ok: wire.MemoryVersionDiff,
  },
  {
    method: 'get',
    path: `${S}/{store}/changes`,
    tag: 'memory versions',
    summary: 'The change feed: every version of the store once, in commit order (JSON pages or server-sent events)',
    description:
      'With `Accept: text/event-stream` the same items stream as server-sent events (`id:` the cursor, `event: memory_version`, `data:` the item) as they commit; a reconnect resumes from Last-Event-ID; a comment line every 15 s keeps the stream alive.',
    query: changesQuery,
    ok: {
      description: 'a page of changes, or an event stream of them',
      content: { 'application/json': { schema: wire.ChangePage }, 'text/event-stream': { schema: z.string() } },
    },
  },

  { method: 'get', path: `${S}/{store}/search`, tag: 'search', summary: 'Search current memories (FTS5 or substring)', query: searchQuery, ok: wire.SearchResultPage },

  { method: 'post', path: C, tag: 'checkpoints', summary: 'Save a checkpoint', body: checkpointBody, idempotent: true, ok: wire.Checkpoint },
  { method: 'get', path: `${C}/sessions/{agent}/{session}/latest`, tag: 'checkpoints', summary: 'The latest checkpoint of an agent session', ok: wire.Checkpoint },
  { method: 'post', path: `${C}/sessions/{agent}/{session}/restore`, tag: 'checkpoints', summary: 'Restore the latest checkpoint of an agent session within a byte budget', body: B.restore, ok: wire.CheckpointRestore },
  { method: 'get', path: `${C}/{checkpoint}`, tag: 'checkpoints', summary: 'Retrieve a checkpoint', ok: wire.Checkpoint },
  { method: 'post', path: `${C}/{checkpoint}/restore`, tag: 'checkpoints', summary: 'Restore a checkpoint within a byte budget', body: B.restore, ok: wire.CheckpointRestore },
  { method: 'delete', path: `${C}/{checkpoint}`, tag: 'checkpoints', summary: 'Delete a checkpoint', idempotent: true, ok: wire.deleted('checkpoint_deleted', 'CheckpointDeleted') },

  { method: 'post', path: '/v1/sessions', tag: 'sessions', summary: 'Start a session: mount memory stores for an agent', body: B.sessionCreate, idempotent: true, ok: wire.Session },
  { method: 'get', path: '/v1/sessions', tag: 'sessions', summary: 'List sessions', query: pageQuery, ok: wire.pageOf(wire.Session, 'SessionPage') },
  { method: 'get', path: '/v1/sessions/{session}', tag: 'sessions', summary: 'Retrieve a session', ok: wire.Session },
  { method: 'delete', path: '/v1/sessions/{session}', tag: 'sessions', summary: 'End a session (unmount it)', idempotent: true, ok: wire.deleted('session_deleted', 'SessionDeleted') },

  { method: 'post', path: '/v1/api_keys', tag: 'api keys', summary: 'Create an API key (admin); the secret is shown once', body: B.keyCreate, ok: wire.ApiKeyWithSecret },
  { method: 'get', path: '/v1/api_keys', tag: 'api keys', summary: 'List API keys (admin), oldest first', query: pageQuery, ok: wire.pageOf(wire.ApiKey, 'ApiKeyPage') },
  { method: 'get', path: '/v1/api_keys/{key}', tag: 'api keys', summary: 'Retrieve an API key (admin)', ok: wire.ApiKey },
  { method: 'post', path: '/v1/api_keys/{key}/revoke', tag: 'api keys', summary: 'Revoke an API key (admin)', ok: wire.ApiKey },
  {
    method: 'get',
    path: '/v1/admin_actions',
    tag: 'admin actions',
    summary: 'The log of admin actions, newest first (admin)',
    description: 'Keys created and revoked, versions redacted, stores archived and deleted, sessions ended: through the API and the web console alike. Each entry is written in the transaction of its action.',
    query: pageQuery,
    ok: wire.pageOf(wire.AdminAction, 'AdminActionPage'),
  },
  { method: 'post', path: '/v1/workspaces', tag: 'workspaces', summary: 'Create a workspace (operator key)', body: B.workspaceCreate, ok: wire.Workspace },
  { method: 'get', path: '/v1/workspaces', tag: 'workspaces', summary: 'List workspaces (admin: its own; operator: all), the default first', query: pageQuery, ok: wire.pageOf(wire.Workspace, 'WorkspacePage') },

  {
    method: 'post',
    path: '/mcp',
    tag: 'mcp',
    summary: 'MCP over Streamable HTTP: one JSON-RPC message',
    description:
      'Stateless Streamable HTTP transport (JSON responses). See the MCP specification for message shapes. GET (a server-sent event stream) and DELETE (ending a session) are 405 with Allow: POST: a stateless server has neither.',
    body: z.looseObject({ jsonrpc: z.literal('2.0'), method: z.string().optional(), id: z.union([z.string(), z.number()]).optional() }).meta({ id: 'JsonRpcMessage' }),
    ok: {
      description: 'a JSON-RPC response',
      content: { 'application/json': { schema: z.looseObject({ jsonrpc: z.literal('2.0') }) } },
    },
  },

  { method: 'get', path: '/health', tag: 'operations', summary: 'Liveness (kept for old clients; see /healthz)', auth: 'none', ok: healthy },
  { method: 'get', path: '/healthz', tag: 'operations', summary: 'Liveness: the process answers', auth: 'none', ok: healthy },
  {
    method: 'get',
    path: '/readyz',
    tag: 'operations',
    summary: 'Readiness: the database answers and every active session that should be mounted is mounted',
    auth: 'none',
    ok: z.looseObject({ status: z.literal('ready') }).meta({ id: 'Ready' }),
    errors: [503],
  },
  {
    method: 'get',
    path: '/metrics',
    tag: 'operations',
    summary: 'Prometheus metrics (text exposition format)',
    description: 'Unauthenticated when MNEMO_METRICS_PUBLIC=1; otherwise an operator key (metrics span every workspace).',
    auth: 'metrics',
    ok: { description: 'Prometheus text format 0.0.4', content: { 'text/plain': { schema: z.string() } } },
  },
  { method: 'get', path: '/openapi.json', tag: 'operations', summary: 'This document', auth: 'none', ok: { description: 'OpenAPI 3.1', content: { 'application/json': { schema: z.looseObject({ openapi: z.string() }) } } } },
  { method: 'get', path: '/docs', tag: 'operations', summary: 'Interactive API docs (Swagger UI, served by mnemo itself)', auth: 'none', ok: { description: 'HTML', content: { 'text/html': { schema: z.string() } } } },
  {
    method: 'get',
    path: '/docs/assets/swagger-ui-dist/{file}',
    tag: 'operations',
    summary: 'A Swagger UI asset (JS, CSS, images) from swagger-ui-dist',
    auth: 'none',
    ok: { description: 'the file', content: { 'application/javascript': { schema: z.string() }, 'text/css': { schema: z.string() } } },
  },
];

/** storeCreate → StoreCreateRequest: the component name of each request body schema. */
export function requestSchemaName(key: string): string {
  return `${key[0]!.toUpperCase()}${key.slice(1)}Request`;
}
