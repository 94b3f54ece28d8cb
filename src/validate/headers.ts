/** @module Rules on request headers. */
import { byteLength } from '../domain/content.js';
import { fail } from './fail.js';
import { CONTROL } from './text.js';

export const IDEMPOTENCY_KEY_MAX_BYTES = 256;

/** An Idempotency-Key header: 1–256 bytes, no control characters. */
export function parseIdempotencyKey(raw: string): string {
  const n = byteLength(raw);
  if (n < 1 || n > IDEMPOTENCY_KEY_MAX_BYTES) fail('Idempotency-Key', `must be 1 to ${IDEMPOTENCY_KEY_MAX_BYTES} bytes (got ${n})`);
  if (CONTROL.test(raw)) fail('Idempotency-Key', 'must not contain control characters');
  return raw;
}
