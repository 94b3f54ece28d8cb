/** @module A JSON object parsed against a zod schema: its first problem becomes one readable refusal. */
import type { z } from 'zod';
import { fail } from './fail.js';

export interface ObjectOptions {
  /** Where the object sits in the body ("references.0"); absent for the body itself. */
  at?: string;
  /**
   * How a refusal of unknown fields reads. The store, memory, session and key bodies say
   * "unknown field in resources.0: path"; checkpoint bodies lead with the field like every other
   * message ("references.0: unknown field: path"). Both are on the wire today, so both stay.
   */
  unknownFields?: 'inline' | 'prefixed';
}

export function parseObject<T>(schema: z.ZodType<T>, body: unknown, { at = '', unknownFields = 'inline' }: ObjectOptions = {}): T {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    fail(at || undefined, `${at || 'request body'} must be a JSON object`, { prefix: false });
  }
  // With each issue's input: an absent field (input undefined) is required, a present one has the wrong type.
  const result = schema.safeParse(body, { reportInput: true });
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = [at, ...issue.path.map(String)].filter((p) => p !== '').join('.') || 'body';
  if (issue.code === 'unrecognized_keys') {
    const fields = `unknown field${issue.keys.length > 1 ? 's' : ''}`;
    const keys = issue.keys.join(', ');
    if (unknownFields === 'prefixed') fail(field, `${fields}: ${keys}`);
    const where = issue.path.length ? ` in ${field}` : '';
    fail(field, `${fields}${where}: ${keys}`, { prefix: false });
  }
  if (issue.code === 'invalid_type') {
    if (issue.input === undefined) fail(field, 'is required');
    fail(field, `must be ${EXPECTED[issue.expected] ?? `of type ${issue.expected}`} (got ${given(issue.input)})`);
  }
  if (issue.code === 'too_small' || issue.code === 'too_big') fail(field, outOfRange(issue));
  fail(field, issue.message);
}

/** A bound a field broke, in the words of the other refusals: "must be at least 1 (got 0)", "must have at most 8 items". */
function outOfRange(issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig): string {
  const small = issue.code === 'too_small';
  const bound = small ? (issue as z.core.$ZodIssueTooSmall).minimum : (issue as z.core.$ZodIssueTooBig).maximum;
  const inclusive = issue.inclusive !== false;
  const word = small ? (inclusive ? 'at least' : 'more than') : inclusive ? 'at most' : 'less than';
  if (issue.origin === 'array' || issue.origin === 'set') return `must have ${word} ${String(bound)} items`;
  if (issue.origin === 'string') return `must be ${word} ${String(bound)} characters long`;
  const got = typeof issue.input === 'number' ? ` (got ${issue.input})` : '';
  return `must be ${word} ${String(bound)}${got}`;
}

/** What a field of the wrong type must be, as the refusal says it (zod's `expected`). */
const EXPECTED: Partial<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  record: 'an object',
  array: 'an array',
};

/** What was sent instead: a number as itself, anything else by its JSON type (a string is never echoed). */
function given(input: unknown): string {
  if (input === null) return 'null';
  if (typeof input === 'number') return String(input);
  if (Array.isArray(input)) return 'an array';
  return typeof input === 'object' ? 'an object' : `a ${typeof input}`;
}
