/**
 * @module Every input rule in one place: raw request bodies, query strings and mount names become
 * normalised domain values or a MnemoError. Both faces (api/, fs/) call these.
 */
import { z } from 'zod';
import { assertContentSize, assertWellFormed, byteLength } from './content.js';
import { MnemoError } from './errors.js';
import { assertMemoryPath, assertPathPrefix } from './paths.js';
import { parseExpiry } from './validate-continuity.js';
import type { Access, Expiry, MemoryListQuery, Role, MemoryWrite, NewStore, Operation, StoreListQuery, StorePatch, VersionListQuery, View } from './types.js';

export const LIMITS = {
  storeName: 255,
  storeDescription: 1024,
  metadataPairs: 16,
  metadataKey: 64,
  metadataValue: 512,
  listDefault: 20,
  listMax: 100,
  listMaxFull: 20,
  sessionResources: 8,
  instructions: 4096,
  keyStores: 100,
} as const;

const SHA256 = /^[0-9a-f]{64}$/;
const CONTROL = /[\p{Cc}]/u;

/** Characters as a person counts them (code points), not UTF-16 units. */
function charCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function fail(field: string, message: string): never {
  throw new MnemoError('invalid_request', `${field}: ${message}`, { field });
}

// ---------------------------------------------------------------- bodies

/**
 * A JSON object of `value`s (or null, or absent), kept as parsed. z.record copies keys by
 * assignment, which silently drops a "__proto__" key (the assignment sets the prototype instead).
 */
function nullishStringMap<T>(value: z.ZodType<T>, message: string) {
  return z
    .custom<Record<string, T>>(
      (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((x) => value.safeParse(x).success),
      { message },
    )
    .nullish()
    // A custom check has no JSON Schema of its own: this is what the OpenAPI document shows.
    .meta({ type: ['object', 'null'], additionalProperties: jsonSchemaOf(value) });
}

function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema);
  return rest;
}

export const storeCreateSchema = z.strictObject({
  name: z.string(),
  description: z.string().nullish(),
  metadata: nullishStringMap(z.string(), 'must be an object whose values are strings'),
});

export const storeUpdateSchema = z.strictObject({
  name: z.string().nullish(),
  description: z.string().nullish(),
  metadata: nullishStringMap(z.string().nullable(), 'must be an object whose values are strings or null'),
});

// ttl_seconds / expires_at: mnemo's additive TTL extension (see validate-continuity.ts).
export const memoryCreateSchema = z.strictObject({
  path: z.string(),
  content: z.string().nullable(),
  ttl_seconds: z.number().nullish(),
  expires_at: z.string().nullish(),
});

export const memoryUpdateSchema = z.strictObject({
  path: z.string().nullish(),
  content: z.string().nullish(),
  precondition: z
    .strictObject({ type: z.literal('content_sha256'), content_sha256: z.string().optional() })
    .nullish(),
  ttl_seconds: z.number().nullish(),
  expires_at: z.string().nullish(),
});

export const sessionCreateSchema = z.strictObject({
  resources: z.array(
    z.strictObject({
      type: z.literal('memory_store'),
      memory_store_id: z.string(),
      access: z.enum(['read_write', 'read_only']).nullish(),
      instructions: z.string().nullish(),
    }),
  ),
  metadata: z.record(z.string(), z.string()).nullish(),
});

/** Parses a JSON body against a schema, turning the first problem into a readable 400. */
function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new MnemoError('invalid_request', 'request body must be a JSON object');
  }
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.join('.') || 'body';
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.join(', ');
    const where = issue.path.length ? ` in ${field}` : '';
    throw new MnemoError('invalid_request', `unknown field${issue.keys.length > 1 ? 's' : ''}${where}: ${keys}`, { field });
  }
  if (issue.code === 'invalid_type' && issue.input === undefined) fail(field, 'is required');
  fail(field, issue.message);
}

export function parseStoreCreate(body: unknown): NewStore {
  const b = parseBody(storeCreateSchema, body);
  return {
    name: assertStoreName(b.name),
    description: assertDescription(b.description ?? ''),
    metadata: assertMetadata(b.metadata ?? {}),
  };
}

export function parseStoreUpdate(body: unknown): StorePatch {
  const b = parseBody(storeUpdateSchema, body);
  const patch: StorePatch = {};
  if (b.name != null) patch.name = assertStoreName(b.name);
  if (b.description != null) patch.description = assertDescription(b.description);
  if (b.metadata != null) {
    for (const [k, v] of Object.entries(b.metadata)) {
      assertMetadataKey(k);
      if (v !== null) assertMetadataValue(k, v);
    }
    patch.metadata = b.metadata;
  }
  return patch;
}

export function parseMemoryCreate(body: unknown): { path: string; content: string; expiry?: Expiry } {
  const b = parseBody(memoryCreateSchema, body);
  const expiry = parseExpiry(b, false);
  return { path: assertMemoryPath(b.path), content: assertContent(b.content ?? ''), ...(expiry === undefined ? {} : { expiry }) };
}

export function parseMemoryUpdate(body: unknown): MemoryWrite {
  const b = parseBody(memoryUpdateSchema, body);
  const write: MemoryWrite = {};
  if (b.path != null) write.path = assertMemoryPath(b.path);
  if (b.content != null) write.content = assertContent(b.content);
  if (b.precondition) {
    write.expectedSha256 = parseSha256(b.precondition.content_sha256, 'precondition.content_sha256');
  }
  const expiry = parseExpiry(b, true);
  if (expiry !== undefined) write.expiry = expiry;
  if (write.path === undefined && write.content === undefined && expiry === undefined) {
    throw new MnemoError('invalid_request', 'an update needs at least one of content, path, ttl_seconds or expires_at');
  }
  return write;
}

export interface SessionRequest {
  resources: { storeId: string; access: Access; instructions: string | null }[];
}

export function parseSessionCreate(body: unknown): SessionRequest {
  const b = parseBody(sessionCreateSchema, body);
  if (b.resources.length === 0) fail('resources', 'at least one memory_store resource is required');
  if (b.resources.length > LIMITS.sessionResources) {
    fail('resources', `at most ${LIMITS.sessionResources} memory stores per session (got ${b.resources.length})`);
  }
  const seen = new Set<string>();
  const resources = b.resources.map((r, i) => {
    if (seen.has(r.memory_store_id)) fail(`resources.${i}.memory_store_id`, 'the same store is attached twice');
    seen.add(r.memory_store_id);
    const instructions = r.instructions ?? null;
    if (instructions !== null) {
      assertWellFormed(instructions, `resources.${i}.instructions`);
      if (charCount(instructions) > LIMITS.instructions) {
        fail(`resources.${i}.instructions`, `must be at most ${LIMITS.instructions} characters`);
      }
    }
    return { storeId: r.memory_store_id, access: r.access ?? 'read_write', instructions };
  });
  return { resources };
}

// ---------------------------------------------------------------- fields

export function assertStoreName(name: string): string {
  assertWellFormed(name, 'name');
  const n = charCount(name);
  if (n < 1 || n > LIMITS.storeName) fail('name', `must be 1 to ${LIMITS.storeName} characters (got ${n})`);
  if (CONTROL.test(name)) fail('name', 'must not contain control characters');
  return name;
}

export function assertDescription(description: string): string {
  assertWellFormed(description, 'description');
  const n = charCount(description);
  if (n > LIMITS.storeDescription) fail('description', `must be at most ${LIMITS.storeDescription} characters (got ${n})`);
  return description;
}

function assertMetadataKey(key: string): void {
  assertWellFormed(key, 'metadata');
  const n = charCount(key);
  if (n < 1 || n > LIMITS.metadataKey) fail('metadata', `keys must be 1 to ${LIMITS.metadataKey} characters (got ${n})`);
}

function assertMetadataValue(key: string, value: string): void {
  assertWellFormed(value, `metadata.${key}`);
  const n = charCount(value);
  if (n > LIMITS.metadataValue) fail(`metadata.${key}`, `values must be at most ${LIMITS.metadataValue} characters (got ${n})`);
}

export function assertMetadata(metadata: Record<string, string>): Record<string, string> {
  const entries = Object.entries(metadata);
  for (const [k, v] of entries) {
    assertMetadataKey(k);
    assertMetadataValue(k, v);
  }
  assertMetadataCount(entries.length);
  return metadata;
}

export function assertMetadataCount(count: number): void {
  if (count > LIMITS.metadataPairs) fail('metadata', `at most ${LIMITS.metadataPairs} pairs (got ${count})`);
}

export function assertContent(content: string): string {
  assertWellFormed(content, 'content');
  assertContentSize(byteLength(content));
  return content;
}

export function parseSha256(value: unknown, field: string): string {
  if (typeof value !== 'string' || !SHA256.test(value)) fail(field, 'must be 64 lowercase hexadecimal characters');
  return value;
}

// ---------------------------------------------------------------- query strings

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

/** An RFC 3339 timestamp, returned in the canonical form the store keeps (UTC, milliseconds). */
export function parseTimestamp(raw: string | undefined, field: string): string | null {
  if (raw === undefined) return null;
  const m = RFC3339.exec(raw);
  const ms = m && fieldsInRange(m) ? Date.parse(raw.replace(' ', 'T')) : NaN;
  if (Number.isNaN(ms)) fail(field, 'must be an RFC 3339 timestamp such as 2026-01-31T12:00:00Z');
  return new Date(ms).toISOString();
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/** Date.parse rolls impossible dates over (2026-02-30 becomes March 2), so each field is checked. */
function fieldsInRange(m: RegExpExecArray): boolean {
  const [y, mo, d, h, mi, s, oh, om] = m.slice(1).map((x) => Number(x ?? 0)) as [number, number, number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  return mo >= 1 && mo <= 12 && d >= 1 && d <= daysInMonth && h <= 23 && mi <= 59 && s <= 59 && oh <= 23 && om <= 59;
}

function parsePageParam(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  return raw;
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

// ---------------------------------------------------------------- mount names

export const NAME_MAX = 255;

/** One directory entry name from the mount: the kernel lets FUSE see up to 1,024 bytes, POSIX says 255. */
export function assertEntryName(name: string): string {
  if (byteLength(name) > NAME_MAX) throw new MnemoError('name_too_long', `name is longer than ${NAME_MAX} bytes`);
  return name;
}

// ---------------------------------------------------------------- keys and workspaces

export const keyCreateSchema = z.strictObject({
  name: z.string(),
  role: z.enum(['admin', 'read_write', 'read_only']),
  memory_store_ids: z.array(z.string()).max(LIMITS.keyStores).nullish(),
});

export function parseKeyCreate(body: unknown): { name: string; role: Role; storeIds: string[] | null } {
  const b = parseBody(keyCreateSchema, body);
  const ids = b.memory_store_ids ?? null;
  if (ids && ids.length === 0) fail('memory_store_ids', 'must name at least one store, or be left out for all stores');
  return { name: assertLabel(b.name, 'name'), role: b.role, storeIds: ids ? [...new Set(ids)] : null };
}

export const workspaceCreateSchema = z.strictObject({ name: z.string() });

export function parseWorkspaceCreate(body: unknown): { name: string } {
  return { name: assertLabel(parseBody(workspaceCreateSchema, body).name, 'name') };
}

/** A key or workspace name: like a store name. */
function assertLabel(value: string, field: string): string {
  assertWellFormed(value, field);
  const n = charCount(value);
  if (n < 1 || n > LIMITS.storeName) fail(field, `must be 1 to ${LIMITS.storeName} characters (got ${n})`);
  if (CONTROL.test(value)) fail(field, 'must not contain control characters');
  return value;
}

// ---------------------------------------------------------------- headers

export const IDEMPOTENCY_KEY_MAX_BYTES = 256;

/** An Idempotency-Key header: 1–256 bytes, no control characters. */
export function parseIdempotencyKey(raw: string): string {
  const n = byteLength(raw);
  if (n < 1 || n > IDEMPOTENCY_KEY_MAX_BYTES) fail('Idempotency-Key', `must be 1 to ${IDEMPOTENCY_KEY_MAX_BYTES} bytes (got ${n})`);
  if (CONTROL.test(raw)) fail('Idempotency-Key', 'must not contain control characters');
  return raw;
}
