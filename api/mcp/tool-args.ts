/**
 * @module toolArgs: a tool's input schema as a strict object. An argument the tool does not take
 * (a misspelled precondition, `expected_content_sha256` for `content_sha256`) is refused, as the
 * HTTP API refuses an unknown body field, instead of being dropped while the call goes ahead
 * without it. McpServer checks the arguments against this schema, so the refusal is a tool error
 * like a wrong-typed argument's, and `tools/list` shows `additionalProperties: false`.
 */
import { z } from 'zod';
import { MnemoError, excerpt } from '../../src/index.js';

/** At most this many unknown arguments are named; the rest are counted. */
const NAMED = 10;

export function toolArgs<S extends z.ZodRawShape>(shape: S) {
  const takes = Object.keys(shape);
  const known = takes.length ? `it takes ${takes.join(', ')}` : 'it takes no arguments';
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code !== 'unrecognized_keys') return undefined;
      const keys = issue.keys.slice(0, NAMED).map(excerpt).join(', ');
      const more = issue.keys.length > NAMED ? ` and ${issue.keys.length - NAMED} more` : '';
      return `unknown argument${issue.keys.length > 1 ? 's' : ''}: ${keys}${more} (${known})`;
    },
  });
}

/**
 * The memory a tool that takes `path` or `memory_id` names: exactly one of them. Both would be two
 * answers to one question (a path and an id that may name different memories), so that is refused
 * rather than one of them silently ignored.
 */
export function pathOrId(a: { path?: string | undefined; memory_id?: string | undefined }): { path: string } | { memoryId: string } {
  if (a.path !== undefined && a.memory_id !== undefined) throw new MnemoError('invalid_request', 'give path or memory_id, not both', { field: 'memory_id' });
  if (a.memory_id !== undefined) return { memoryId: a.memory_id };
  if (a.path === undefined) throw new MnemoError('invalid_request', 'give path or memory_id', { field: 'path' });
  return { path: a.path };
}
