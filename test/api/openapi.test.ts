/**
 * GET /openapi.json: an OpenAPI 3.1 document that covers exactly the app's routes, is structurally
 * sound (every $ref resolves, every path parameter declared), shows the validation's own request
 * schemas (same fields, same required set, same accept/reject on sample bodies), and describes the
 * responses the server really sends. Unauthenticated.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { openApiDocument, requestSchemaName } from '../../api/openapi/document.js';
import * as wire from '../../api/openapi/wire-schemas.js';
import { openApiPath, routeTable } from '../../api/route-table.js';
import { REQUEST_BODY_SCHEMAS } from '../../src/index.js';
import { openApp } from '../helpers/app.js';
import { rawRequest, useServer } from '../helpers/sdk.js';
import type { RunningServer } from '../helpers/server.js';
import { freshStore } from './shapes.js';

type Json = Record<string, unknown>;
interface Doc {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Json>>;
  components: { schemas: Record<string, Json>; securitySchemes: Record<string, Json> };
  security: Json[];
}

let server: RunningServer;
let client: Anthropic;
let doc: Doc;

useServer(async (s, c) => {
  server = s;
  client = c;
  const res = await rawRequest(s.url, 'GET', '/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body as Doc;
});

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

function documentedRoutes(d: Doc): string[] {
  return Object.entries(d.paths).flatMap(([path, item]) => HTTP_METHODS.filter((m) => m in item).map((m) => `${m.toUpperCase()} ${path}`));
}

/**
 * Routes the app registers only when it is given what they serve (`/metrics` needs the metrics the
 * server wires in), so an app built here may lack them. Only this direction is relaxed: a
 * registered route missing from the document always fails.
 */
const DOCUMENTED_AHEAD = new Set(['GET /metrics']);

/** A JSON pointer inside the document (`#/components/schemas/Memory`). */
function resolve(d: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let at: unknown = d;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (at === null || typeof at !== 'object' || !(key in at)) return undefined;
    at = (at as Json)[key];
  }
  return at;
}

function refsIn(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refsIn(v, out));
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refsIn(v, out);
    }
  }
  return out;
}

/**
 * Does a JSON value satisfy a JSON Schema? Only the keywords this document's request schemas use
 * (type, properties, required, additionalProperties, items, enum, const, anyOf, $ref): enough to
 * compare the document's verdict on sample bodies with the validator's.
 */
function accepts(d: Doc, schema: Json, value: unknown): boolean {
  if (typeof schema['$ref'] === 'string') return accepts(d, resolve(d, schema['$ref']) as Json, value);
  if (Array.isArray(schema['anyOf']) && !(schema['anyOf'] as Json[]).some((s) => accepts(d, s, value))) return false;
  if ('const' in schema && schema['const'] !== value) return false;
  if (Array.isArray(schema['enum']) && !(schema['enum'] as unknown[]).includes(value)) return false;
  if (schema['type'] !== undefined) {
    const types = ([] as unknown[]).concat(schema['type']);
    const t = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
    const ok = types.some((x) => x === t || (x === 'integer' && Number.isInteger(value)));
    if (!ok) return false;
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const props = (schema['properties'] ?? {}) as Record<string, Json>;
    for (const r of (schema['required'] ?? []) as string[]) if (!(r in value)) return false;
    for (const [k, v] of Object.entries(value)) {
      if (k in props) {
        if (!accepts(d, props[k]!, v)) return false;
      } else if (schema['additionalProperties'] === false) return false;
      else if (typeof schema['additionalProperties'] === 'object' && !accepts(d, schema['additionalProperties'] as Json, v)) return false;
    }
  }
  if (Array.isArray(value) && typeof schema['items'] === 'object') return value.every((v) => accepts(d, schema['items'] as Json, v));
  return true;
}

describe('GET /openapi.json', () => {
  it('is served without an API key', async () => {
    const res = await rawRequest(server.url, 'GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('documents every route the app registers, and no route it does not', async () => {
    const { app } = await openApp();
    // The web console's HTML pages (/admin, issue 16) are a face for people, not API operations.
    const registered = routeTable(app).filter((r) => !r.path.startsWith('/admin')).map((r) => `${r.method} ${openApiPath(r.path)}`);
    // The app and the document built here, from the same sources; the server serves that document.
    const documented = documentedRoutes(openApiDocument('0.0.0') as unknown as Doc);
    expect(documentedRoutes(doc)).toEqual(documented);
    expect(registered.length).toBeGreaterThan(30);
    expect(registered.filter((r) => !documented.includes(r))).toEqual([]);
    expect(documented.filter((r) => !registered.includes(r) && !DOCUMENTED_AHEAD.has(r))).toEqual([]);
  });

  it('is an OpenAPI 3.1 document whose every $ref resolves', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.title).toBe('mnemo');
    expect(doc.info.version).toMatch(/^\d+\.\d+\.\d+/);
    const refs = refsIn(doc);
    expect(refs.length).toBeGreaterThan(50);
    expect(refs.filter((r) => resolve(doc, r) === undefined)).toEqual([]);
  });

  it('declares every path parameter, gives every operation a unique id and a 200, and documents the errors', () => {
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const m of HTTP_METHODS.filter((x) => x in item)) {
        const op = item[m]! as { operationId: string; parameters?: { in: string; name: string; required?: boolean }[]; responses: Record<string, Json> };
        const declared = (op.parameters ?? []).filter((p) => p.in === 'path');
        expect(declared.map((p) => p.name).sort(), `${m} ${path}`).toEqual([...names].sort());
        expect(declared.every((p) => p.required === true)).toBe(true);
        expect(ids.has(op.operationId), op.operationId).toBe(false);
        ids.add(op.operationId);
        expect(op.responses['200'], `${m} ${path}`).toBeDefined();
        expect(op.responses['405'], `${m} ${path}`).toMatchObject({
          headers: { allow: expect.any(Object) },
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        });
      }
    }
    expect(resolve(doc, '#/components/schemas/Error')).toMatchObject({ required: ['type', 'error', 'request_id'] });
  });

  it('describes both ways to send a key, and marks the unauthenticated routes', () => {
    expect(doc.components.securitySchemes).toEqual({
      ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'x-api-key' },
      BearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    expect(doc.security).toEqual([{ ApiKeyAuth: [] }, { BearerAuth: [] }]);
    for (const path of ['/openapi.json', '/docs', '/healthz', '/readyz']) expect(doc.paths[path]!['get']!['security'], path).toEqual([]);
    expect(doc.paths['/v1/memory_stores']!['get']!['security']).toEqual([{ ApiKeyAuth: [] }, { BearerAuth: [] }]);
    expect(doc.paths['/metrics']!['get']!['security']).toContainEqual({});
  });

  it('documents the list queries: limit, page, view, path_prefix, depth and the filters', () => {
    const names = (method: string, path: string) =>
      ((doc.paths[path]![method]!['parameters'] ?? []) as { in: string; name: string }[]).filter((p) => p.in === 'query').map((p) => p.name);
    expect(names('get', '/v1/memory_stores')).toEqual(expect.arrayContaining(['limit', 'page', 'include_archived', 'created_at[gte]', 'created_at[lte]']));
    expect(names('get', '/v1/memory_stores/{store}/memories')).toEqual(expect.arrayContaining(['limit', 'page', 'view', 'path_prefix', 'depth']));
    expect(names('get', '/v1/memory_stores/{store}/memory_versions')).toEqual(
      expect.arrayContaining(['limit', 'page', 'view', 'memory_id', 'operation', 'session_id', 'api_key_id', 'created_at[gte]']),
    );
    expect(names('get', '/v1/memory_stores/{store}/search')).toEqual(expect.arrayContaining(['q', 'mode', 'path_prefix', 'limit', 'page']));
    expect(names('get', '/v1/sessions')).toEqual(['limit', 'page']);
  });
});

describe('the request bodies in the document', () => {
  const S = '/v1/memory_stores';
  const BODY_OF: [string, string, keyof typeof REQUEST_BODY_SCHEMAS][] = [
    ['post', S, 'storeCreate'],
    ['post', `${S}/{store}`, 'storeUpdate'],
    ['post', `${S}/{store}/memories`, 'memoryCreate'],
    ['post', `${S}/{store}/memories/{memory}`, 'memoryUpdate'],
    ['post', `${S}/{store}/checkpoints`, 'checkpointCreate'],
    ['post', `${S}/{store}/checkpoints/{checkpoint}/restore`, 'restore'],
    ['post', `${S}/{store}/checkpoints/sessions/{agent}/{session}/restore`, 'restore'],
    ['post', '/v1/sessions', 'sessionCreate'],
    ['post', '/v1/api_keys', 'keyCreate'],
    ['post', '/v1/workspaces', 'workspaceCreate'],
  ];

  it('says that archive, redact, revoke and every DELETE take no body but an empty one or {}, which the server holds to', async () => {
    const noBody = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).filter(([method, op]) => method !== 'get' && path.startsWith('/v1/') && !(op['requestBody'] as Json | undefined)?.['required']).map(([method]) => `${method.toUpperCase()} ${path}`));
    expect(noBody.sort()).toEqual([
      `DELETE ${S}/{store}`,
      `DELETE ${S}/{store}/checkpoints/{checkpoint}`,
      `DELETE ${S}/{store}/memories/{memory}`,
      'DELETE /v1/sessions/{session}',
      `POST ${S}/{store}/archive`,
      `POST ${S}/{store}/memory_versions/{version}/redact`,
      'POST /v1/api_keys/{key}/revoke',
    ].sort());
    const archive = doc.paths[`${S}/{store}/archive`]!['post']!;
    expect(archive['requestBody']).toMatchObject({ required: false, content: { 'application/json': { schema: { type: 'object', additionalProperties: false } } } });
    expect(Object.keys(archive['responses'] as Json)).toContain('400');
    const store = await client.beta.memoryStores.create({ name: 'no body' });
    const refused = await rawRequest(server.url, 'POST', `${S}/${store.id}/archive`, { apiKey: server.adminKey, body: '{"x":1}' });
    expect(refused.status).toBe(400);
  });

  it('names x-should-retry: false on every 409', () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const conflict = (op['responses'] as Record<string, Json>)['409'];
        if (conflict) expect(conflict['headers'], `${method} ${path}`).toMatchObject({ 'x-should-retry': { schema: { type: 'string', enum: ['false'] } } });
      }
    }
  });

  it.each(BODY_OF)('%s %s takes the %s schema', (method, path, key) => {
    const body = doc.paths[path]![method]!['requestBody'] as { content: Record<string, { schema: Json }> };
    expect(body.content['application/json']!.schema).toEqual({ $ref: `#/components/schemas/${requestSchemaName(key)}` });
  });

  it.each(Object.keys(REQUEST_BODY_SCHEMAS) as (keyof typeof REQUEST_BODY_SCHEMAS)[])(
    '%s has the validation schema\'s fields, required set and nullability, and refuses unknown fields',
    (key) => {
      const zod = REQUEST_BODY_SCHEMAS[key] as z.ZodObject;
      const shown = doc.components.schemas[requestSchemaName(key)] as { properties: Record<string, Json>; required?: string[]; additionalProperties: unknown };
      const fields = Object.keys(zod.shape);
      expect(Object.keys(shown.properties).sort()).toEqual([...fields].sort());
      const required = fields.filter((f) => !(zod.shape[f] as z.ZodType).safeParse(undefined).success);
      expect([...(shown.required ?? [])].sort()).toEqual(required.sort());
      for (const f of fields) {
        const zodNullable = (zod.shape[f] as z.ZodType).safeParse(null).success;
        expect(accepts(doc, shown.properties[f]!, null), `${key}.${f} accepts null`).toBe(zodNullable);
      }
      expect(shown.additionalProperties).toBe(false);
    },
  );

  const SAMPLES: [keyof typeof REQUEST_BODY_SCHEMAS, unknown][] = [
    ['storeCreate', {}],
    ['storeCreate', { name: 'a' }],
    ['storeCreate', { name: 1 }],
    ['storeCreate', { name: 'a', extra: true }],
    ['storeCreate', { name: 'a', description: null, metadata: { k: 'v' } }],
    ['storeCreate', { name: 'a', metadata: { k: 1 } }],
    ['storeCreate', { name: 'a', metadata: null }],
    ['storeUpdate', {}],
    ['storeUpdate', { metadata: { k: null } }],
    ['storeUpdate', { metadata: [] }],
    ['memoryCreate', { path: '/a.md', content: 'x' }],
    ['memoryCreate', { path: '/a.md', content: null, ttl_seconds: 60 }],
    ['memoryCreate', { path: '/a.md' }],
    ['memoryCreate', { path: '/a.md', content: 'x', ttl_seconds: '60' }],
    ['memoryUpdate', { precondition: { type: 'content_sha256', content_sha256: 'ab' } }],
    ['memoryUpdate', { precondition: { type: 'etag' } }],
    ['memoryUpdate', { precondition: { type: 'content_sha256', extra: 1 } }],
    ['sessionCreate', { resources: [{ type: 'memory_store', memory_store_id: 'memstore_x', access: 'read_only' }] }],
    ['sessionCreate', { resources: [{ type: 'memory_store', memory_store_id: 'memstore_x', access: 'admin' }] }],
    ['sessionCreate', { resources: [{ type: 'other', memory_store_id: 'memstore_x' }] }],
    ['sessionCreate', {}],
    ['keyCreate', { name: 'k', role: 'read_only', memory_store_ids: ['memstore_x'] }],
    ['keyCreate', { name: 'k', role: 'owner' }],
    ['keyCreate', { name: 'k' }],
    ['workspaceCreate', { name: 'w' }],
    ['workspaceCreate', { name: 'w', id: 'x' }],
    ['checkpointCreate', { agent_id: 'a', session_id: 's', goal: 'g', constraints: ['c'], expected_latest_checkpoint_id: null }],
    ['checkpointCreate', { agent_id: 'a', session_id: 's' }],
    ['checkpointCreate', { agent_id: 'a', session_id: 's', goal: 'g', decisions: 'd' }],
    ['checkpointReference', { memory_id: 'mem_x', content_sha256: 'ab' }],
    ['checkpointReference', { memory_id: 'mem_x', version: 1 }],
    ['restore', { max_bytes: 4096 }],
    ['restore', { max_bytes: 'big' }],
    ['restore', {}],
  ];

  it.each(SAMPLES)('the document and the validator agree on a %s body %j', (key, sample) => {
    const shown = doc.components.schemas[requestSchemaName(key)]!;
    expect(accepts(doc, shown, sample)).toBe(REQUEST_BODY_SCHEMAS[key].safeParse(sample).success);
  });
});

describe('the response shapes in the document', () => {
  it('match what the server sends for stores, memories, versions, checkpoints, search and errors', async () => {
    const store = await freshStore(client, 'openapi');
    wire.MemoryStore.parse(store);
    const memory = await client.beta.memoryStores.memories.create(store.id, { path: '/notes/a.md', content: 'openapi words' });
    wire.Memory.parse(memory);
    wire.Memory.parse(await client.beta.memoryStores.memories.retrieve(memory.id, { memory_store_id: store.id }));
    const list = await rawRequest(server.url, 'GET', `/v1/memory_stores/${store.id}/memories?depth=1`, { apiKey: server.adminKey });
    wire.pageOf(wire.Memory.or(wire.MemoryPrefix), 'T').parse(list.body);
    expect((list.body as { data: { type: string }[] }).data.map((d) => d.type)).toEqual(['memory_prefix']);
    const versions = await rawRequest(server.url, 'GET', `/v1/memory_stores/${store.id}/memory_versions?view=full`, { apiKey: server.adminKey });
    wire.pageOf(wire.MemoryVersion, 'T').parse(versions.body);
    const search = await rawRequest(server.url, 'GET', `/v1/memory_stores/${store.id}/search?q=words`, { apiKey: server.adminKey });
    wire.SearchResultPage.parse(search.body);
    const body = JSON.stringify({ agent_id: 'agent', session_id: 's1', goal: 'g', references: [{ memory_id: memory.id, content_sha256: memory.content_sha256, note: 'n' }] });
    const ckpt = await rawRequest(server.url, 'POST', `/v1/memory_stores/${store.id}/checkpoints`, { apiKey: server.adminKey, body });
    wire.Checkpoint.parse(ckpt.body);
    const restore = await rawRequest(server.url, 'POST', `/v1/memory_stores/${store.id}/checkpoints/sessions/agent/s1/restore`, { apiKey: server.adminKey });
    wire.CheckpointRestore.parse(restore.body);
    const keys = await rawRequest(server.url, 'GET', '/v1/api_keys', { apiKey: server.adminKey });
    wire.pageOf(wire.ApiKey, 'T').parse(keys.body);
    const missing = await rawRequest(server.url, 'GET', '/v1/memory_stores/memstore_nope', { apiKey: server.adminKey });
    wire.ErrorEnvelope.parse(missing.body);
  });
});
