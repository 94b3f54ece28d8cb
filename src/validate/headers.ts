/** @module Rules on request headers. */
import { byteLength } from '../domain/content.js';
import { MnemoError, excerpt } from '../domain/errors.js';
import { fail } from './fail.js';
import { CONTROL } from './text.js';

export const IDEMPOTENCY_KEY_MAX_BYTES = 256;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A header value as Node hands it over, one character per byte (latin1), read as the UTF-8 it
 * was sent as: "é" stays "é", not "Ã©". Bytes that are not UTF-8 are refused.
 */
export function decodeHeader(raw: string, name: string): string {
  if (!/[^\u0000-\u007f]/.test(raw)) return raw;
  try {
    return utf8.decode(Uint8Array.from(raw, (ch) => ch.charCodeAt(0)));
  } catch {
    return fail(name, 'is not valid UTF-8');
  }
}

/**
 * A request body's Content-Encoding: only identity (or none). A compressed body is refused, not
 * decoded: a few KiB of gzip can inflate to gigabytes, and the body limit could only count it
 * while inflating it; clients that compress can send it plain instead.
 */
export function assertIdentityCoding(raw: string): void {
  const codings = raw.split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '' && s !== 'identity');
  if (codings.length === 0) return;
  throw new MnemoError(
    'unsupported_encoding',
    `Content-Encoding: ${excerpt(raw)} is not supported; send the request body uncompressed (no Content-Encoding, or identity)`,
    { field: 'Content-Encoding' },
  );
}

/** An Idempotency-Key header: 1–256 bytes, no control characters. */
export function parseIdempotencyKey(raw: string): string {
  const n = byteLength(raw);
  if (n < 1 || n > IDEMPOTENCY_KEY_MAX_BYTES) fail('Idempotency-Key', `must be 1 to ${IDEMPOTENCY_KEY_MAX_BYTES} bytes (got ${n})`);
  if (CONTROL.test(raw)) fail('Idempotency-Key', 'must not contain control characters');
  return raw;
}
