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
  const result = schema.safeParse(body);
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
  if (issue.code === 'invalid_type' && issue.input === undefined) fail(field, 'is required');
  fail(field, issue.message);
}
