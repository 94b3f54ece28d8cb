/** @module Rules on agent continuity: a checkpoint bundle and its references, a restore's budget, agent and session ids. */
import { z } from 'zod';
import { byteLength } from '../domain/content.js';
import { MnemoError, excerpt } from '../domain/errors.js';
import type { CheckpointBundle, CheckpointReference } from '../domain/types.js';
import { fail } from './fail.js';
import { CONTINUITY_LIMITS } from './limits.js';
import { assertMemoryPath, parseSha256 } from './memory.js';
import { parseObject } from './object.js';
import { assertWellFormed } from './text.js';

/** Agent and session ids go into URL paths: letters, digits and . _ : @ + = - only. */
const SCOPE_ID = /^[A-Za-z0-9][A-Za-z0-9._:@+=-]*$/;
const ID_LIKE = /^[A-Za-z0-9_]{1,64}$/;
/** Memory and version ids as the server makes them (src/service/ids.ts): the prefix, then 24 base62 characters. */
const MEMORY_ID = /^mem_[0-9A-Za-z]{24}$/;
const VERSION_ID = /^memver_[0-9A-Za-z]{24}$/;

/** One checkpoint reference's fields (the MCP tool advertises this schema too). */
export const CHECKPOINT_REFERENCE = z.strictObject({
  memory_id: z.string().nullish(),
  path: z.string().nullish(),
  content_sha256: z.string().nullish(),
  memory_version_id: z.string().nullish(),
  note: z.string().nullish(),
});

/**
 * A checkpoint's fields, which the MCP tool also advertises. References stay `unknown` here: each
 * is checked on its own below, so an error names its index.
 */
export const CHECKPOINT_FIELDS = {
  agent_id: z.string(),
  session_id: z.string(),
  goal: z.string(),
  summary: z.string().nullish(),
  constraints: z.array(z.string()).nullish(),
  decisions: z.array(z.string()).nullish(),
  open_tasks: z.array(z.string()).nullish(),
  next_action: z.string().nullish(),
  capsule: z.string().nullish(),
  references: z.array(z.unknown()).nullish(),
  expected_latest_checkpoint_id: z.string().nullable().optional(),
};
export const checkpointSchema = z.strictObject(CHECKPOINT_FIELDS);

export interface CheckpointRequest {
  bundle: CheckpointBundle;
  /** Bytes of the bundle as stored (its JSON). */
  sizeBytes: number;
  expectedLatestId: string | null | undefined;
}

const checkpointObject = <T>(schema: z.ZodType<T>, body: unknown, at?: string): T =>
  parseObject(schema, body, { unknownFields: 'prefixed', ...(at === undefined ? {} : { at }) });

/** Validates a whole checkpoint bundle against every limit; `maxBytes` is the configured bundle cap. */
export function parseCheckpointCreate(body: unknown, maxBytes: number = CONTINUITY_LIMITS.bundleBytes): CheckpointRequest {
  const b = checkpointObject(checkpointSchema, body);
  const refs = b.references ?? [];
  if (refs.length > CONTINUITY_LIMITS.references) {
    fail('references', `at most ${CONTINUITY_LIMITS.references} references (got ${refs.length})`);
  }
  const bundle: CheckpointBundle = {
    agentId: assertScopeId(b.agent_id, 'agent_id'),
    sessionId: assertScopeId(b.session_id, 'session_id'),
    goal: text(b.goal, 'goal'),
    summary: text(b.summary ?? '', 'summary'),
    constraints: list(b.constraints, 'constraints'),
    decisions: list(b.decisions, 'decisions'),
    openTasks: list(b.open_tasks, 'open_tasks'),
    nextAction: b.next_action == null ? null : text(b.next_action, 'next_action'),
    capsule: text(b.capsule ?? '', 'capsule'),
    references: refs.map((r, i) => parseReference(r, `references.${i}`)),
  };
  if (bundle.goal.trim() === '') fail('goal', 'must not be empty');
  const capsule = byteLength(bundle.capsule);
  if (capsule > CONTINUITY_LIMITS.capsuleBytes) fail('capsule', `must be at most ${CONTINUITY_LIMITS.capsuleBytes} bytes (got ${capsule})`);
  const sizeBytes = byteLength(JSON.stringify(bundle));
  if (sizeBytes > maxBytes) {
    throw new MnemoError('content_too_large', `checkpoint bundle is ${sizeBytes} bytes; this server accepts at most ${maxBytes}`);
  }
  const expected = b.expected_latest_checkpoint_id;
  return { bundle, sizeBytes, expectedLatestId: expected === undefined ? undefined : expected === null ? null : assertIdLike(expected, 'expected_latest_checkpoint_id') };
}

function parseReference(raw: unknown, field: string): CheckpointReference {
  const r = checkpointObject(CHECKPOINT_REFERENCE, raw, field);
  const memoryId = r.memory_id == null ? null : assertServerId(r.memory_id, `${field}.memory_id`, MEMORY_ID, 'a memory id (mem_…)');
  const path = r.path == null ? null : assertMemoryPath(r.path, `${field}.path`);
  if (memoryId === null && path === null) fail(field, 'names no memory: give memory_id or path');
  const contentSha256 = r.content_sha256 == null ? null : parseSha256(r.content_sha256, `${field}.content_sha256`);
  const versionId = r.memory_version_id == null ? null : assertServerId(r.memory_version_id, `${field}.memory_version_id`, VERSION_ID, 'a memory version id (memver_…)');
  if (contentSha256 === null && versionId === null) fail(field, 'needs the content_sha256 or memory_version_id it relied on');
  return { memoryId, path, contentSha256, versionId, note: r.note == null ? null : text(r.note, `${field}.note`) };
}

export const restoreSchema = z.strictObject({ max_bytes: z.number().nullish() });

export function parseRestore(body: unknown): { maxBytes: number } {
  const b = checkpointObject(restoreSchema, body);
  const n = b.max_bytes ?? CONTINUITY_LIMITS.restoreDefault;
  if (!Number.isInteger(n) || n < CONTINUITY_LIMITS.restoreMin || n > CONTINUITY_LIMITS.restoreMax) {
    fail('max_bytes', `must be an integer from ${CONTINUITY_LIMITS.restoreMin} to ${CONTINUITY_LIMITS.restoreMax} (got ${n})`);
  }
  return { maxBytes: n };
}

export function assertScopeId(value: string, field: string): string {
  if (value.length < 1 || value.length > CONTINUITY_LIMITS.idChars || !SCOPE_ID.test(value)) {
    fail(field, `must be 1 to ${CONTINUITY_LIMITS.idChars} characters of letters, digits and . _ : @ + = - (starting with a letter or digit)`);
  }
  return value;
}

function assertIdLike(value: string, field: string): string {
  if (!ID_LIKE.test(value)) fail(field, 'is not an id');
  return value;
}

function assertServerId(value: string, field: string, form: RegExp, what: string): string {
  if (!form.test(value)) fail(field, `must be ${what}, not ${excerpt(value)}`);
  return value;
}

function text(value: string, field: string): string {
  assertWellFormed(value, field);
  return value;
}

function list(values: string[] | null | undefined, field: string): string[] {
  const v = values ?? [];
  if (v.length > CONTINUITY_LIMITS.listItems) fail(field, `at most ${CONTINUITY_LIMITS.listItems} items (got ${v.length})`);
  return v.map((s, i) => text(s, `${field}.${i}`));
}
