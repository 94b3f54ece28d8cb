/**
 * @module JSON request bodies: the zod schema of each (which the OpenAPI document shows) and the
 * parser that turns a body into the domain value the service takes.
 */
import { z } from 'zod';
import type { Access, Expiry, MemoryWrite, NewStore, Retention, Role, StorePatch } from '../domain/types.js';
import { checkpointSchema, CHECKPOINT_REFERENCE, restoreSchema } from './checkpoint.js';
import { fail } from './fail.js';
import { LIMITS, RETENTION_LIMITS } from './limits.js';
import { assertContent, assertMemoryPath, checked, parseExpiry, parseSha256 } from './memory.js';
import { parseObject } from './object.js';
import { assertDescription, assertLabel, assertMetadata, assertMetadataKey, assertMetadataValue, assertStoreName } from './store.js';
import { assertWellFormed, charCount } from './text.js';
import { parseTimestamp } from './timestamps.js';

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

// ---------------------------------------------------------------- stores

/** mnemo's retention extension (issue 15): which old versions the upkeep prunes; null keeps them all. */
const retentionSchema = z
  .strictObject({
    max_age_days: z.int().min(1).max(RETENTION_LIMITS.maxAgeDays).nullish(),
    keep_last: z.int().min(1).max(RETENTION_LIMITS.keepLast).nullish(),
  })
  .nullish();

export const storeCreateSchema = z.strictObject({
  name: z.string(),
  description: z.string().nullish(),
  metadata: nullishStringMap(z.string(), 'must be an object whose values are strings'),
  retention: retentionSchema,
});

export const storeUpdateSchema = z.strictObject({
  name: z.string().nullish(),
  description: z.string().nullish(),
  metadata: nullishStringMap(z.string().nullable(), 'must be an object whose values are strings or null'),
  retention: retentionSchema,
});

/** A retention body as the domain's: null when it sets no rule (so nothing is pruned). */
function toRetention(r: z.infer<typeof retentionSchema>): Retention | null {
  if (!r) return null;
  const maxAgeDays = r.max_age_days ?? null;
  const keepLast = r.keep_last ?? null;
  if (maxAgeDays === null && keepLast === null) fail('retention', 'must set max_age_days or keep_last (or be null to keep every version)');
  return { maxAgeDays, keepLast };
}

export function parseStoreCreate(body: unknown): NewStore {
  const b = parseObject(storeCreateSchema, body);
  return {
    name: assertStoreName(b.name),
    description: assertDescription(b.description ?? ''),
    metadata: assertMetadata(b.metadata ?? {}),
    ...(b.retention ? { retention: toRetention(b.retention)! } : {}),
  };
}

export function parseStoreUpdate(body: unknown): StorePatch {
  const b = parseObject(storeUpdateSchema, body);
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
  // Absent keeps the store's retention; null clears it.
  if (b.retention !== undefined) patch.retention = toRetention(b.retention);
  return patch;
}

/** mnemo's fork extension (issue 15): POST /v1/memory_stores/{id}/fork. */
export const storeForkSchema = z.strictObject({
  name: z.string(),
  description: z.string().nullish(),
  metadata: nullishStringMap(z.string(), 'must be an object whose values are strings'),
  as_of: z.string().nullish(),
});

export interface ForkRequest {
  name: string;
  description: string;
  metadata: Record<string, string>;
  /** Canonical RFC 3339, or null: now. The service refuses one in the future. */
  asOf: string | null;
}

export function parseStoreFork(body: unknown): ForkRequest {
  const b = parseObject(storeForkSchema, body);
  return {
    name: assertStoreName(b.name),
    description: assertDescription(b.description ?? ''),
    metadata: assertMetadata(b.metadata ?? {}),
    asOf: b.as_of == null ? null : parseTimestamp(b.as_of, 'as_of'),
  };
}

// ---------------------------------------------------------------- memories

// ttl_seconds / expires_at: mnemo's additive TTL extension (see parseExpiry).
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

export function parseMemoryCreate(body: unknown): { path: string; content: string; expiry?: Expiry } {
  const b = parseObject(memoryCreateSchema, body);
  const expiry = parseExpiry(b, false);
  return checked({ path: assertMemoryPath(b.path), content: assertContent(b.content ?? ''), ...(expiry === undefined ? {} : { expiry }) });
}

export function parseMemoryUpdate(body: unknown): MemoryWrite {
  const b = parseObject(memoryUpdateSchema, body);
  const write: MemoryWrite = {};
  if (b.path != null) write.path = assertMemoryPath(b.path);
  if (b.content != null) write.content = assertContent(b.content);
  if (b.precondition) {
    write.expectedSha256 = parseSha256(b.precondition.content_sha256, 'precondition.content_sha256');
  }
  const expiry = parseExpiry(b, true);
  if (expiry !== undefined) write.expiry = expiry;
  if (write.path === undefined && write.content === undefined && expiry === undefined) {
    fail(undefined, 'an update needs at least one of content, path, ttl_seconds or expires_at');
  }
  return checked(write);
}

// ---------------------------------------------------------------- sessions

export const sessionCreateSchema = z.strictObject({
  resources: z.array(
    z.strictObject({
      type: z.literal('memory_store'),
      memory_store_id: z.string(),
      access: z.enum(['read_write', 'read_only']).nullish(),
      instructions: z.string().nullish(),
      as_of: z.string().nullish(),
    }),
  ),
  metadata: z.record(z.string(), z.string()).nullish(),
});

export interface SessionRequest {
  /** asOf: a point-in-time mount of the store as it was then (canonical RFC 3339), always read-only. */
  resources: { storeId: string; access: Access; instructions: string | null; asOf: string | null }[];
}

export function parseSessionCreate(body: unknown): SessionRequest {
  const b = parseObject(sessionCreateSchema, body);
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
    const asOf = r.as_of == null ? null : parseTimestamp(r.as_of, `resources.${i}.as_of`);
    // A snapshot cannot be written: leaving access out means read_only, asking read_write is a mistake.
    if (asOf !== null && r.access === 'read_write') fail(`resources.${i}.access`, 'a point-in-time mount (as_of) is read_only');
    return { storeId: r.memory_store_id, access: r.access ?? (asOf === null ? 'read_write' : 'read_only'), instructions, asOf };
  });
  return { resources };
}

// ---------------------------------------------------------------- keys and workspaces

export const keyCreateSchema = z.strictObject({
  name: z.string(),
  role: z.enum(['admin', 'read_write', 'read_only']),
  memory_store_ids: z.array(z.string()).max(LIMITS.keyStores).nullish(),
});

export function parseKeyCreate(body: unknown): { name: string; role: Role; storeIds: string[] | null } {
  const b = parseObject(keyCreateSchema, body);
  const ids = b.memory_store_ids ?? null;
  if (ids && ids.length === 0) fail('memory_store_ids', 'must name at least one store, or be left out for all stores');
  return { name: assertLabel(b.name, 'name'), role: b.role, storeIds: ids ? [...new Set(ids)] : null };
}

export const workspaceCreateSchema = z.strictObject({ name: z.string() });

export function parseWorkspaceCreate(body: unknown): { name: string } {
  return { name: assertLabel(parseObject(workspaceCreateSchema, body).name, 'name') };
}

// ---------------------------------------------------------------- actions that take no body

/**
 * Archive, redact, revoke and the deletes take no body: none, an empty one or `{}` (what a client
 * that always sends JSON sends). Anything else is refused like any other body's mistakes, never
 * ignored: a misspelled option must not look as if it were applied.
 */
export function parseEmptyBody(body: unknown): void {
  parseObject(z.strictObject({}), body);
}

// ---------------------------------------------------------------- the table the OpenAPI document reads

/** The zod schema of every JSON request body, by operation: the very objects the parsers above use. */
export const REQUEST_BODY_SCHEMAS = {
  storeCreate: storeCreateSchema,
  storeUpdate: storeUpdateSchema,
  storeFork: storeForkSchema,
  memoryCreate: memoryCreateSchema,
  memoryUpdate: memoryUpdateSchema,
  sessionCreate: sessionCreateSchema,
  keyCreate: keyCreateSchema,
  workspaceCreate: workspaceCreateSchema,
  // Validation checks each reference on its own (so an error names its index); the shape is this.
  checkpointCreate: checkpointSchema,
  checkpointReference: CHECKPOINT_REFERENCE,
  restore: restoreSchema,
} as const;
