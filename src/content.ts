/** @module Content rules: UTF-8 text, byte size, sha256 hex. */
import { createHash } from 'node:crypto';
import { MnemoError } from './errors.js';

export const MAX_CONTENT_BYTES = 102_400;

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

export function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** A JS string that came from JSON may hold lone surrogates, which have no UTF-8 form. */
export function assertWellFormed(text: string, field: string): void {
  if (!text.isWellFormed()) {
    throw new MnemoError('invalid_utf8', `${field} is not valid UTF-8 (it contains a lone surrogate)`, { field });
  }
}

export function assertContentSize(bytes: number, field = 'content'): void {
  if (bytes > MAX_CONTENT_BYTES) {
    throw new MnemoError(
      'content_too_large',
      `${field} is ${bytes} bytes; the limit is ${MAX_CONTENT_BYTES} bytes of UTF-8`,
      { field },
    );
  }
}

// ignoreBOM keeps a leading U+FEFF in the text instead of silently dropping it.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Raw bytes (from a mount) to text, refusing anything that is not UTF-8. */
export function decodeUtf8(bytes: Uint8Array, field = 'content'): string {
  assertContentSize(bytes.byteLength, field);
  try {
    return utf8.decode(bytes);
  } catch (err) {
    throw new MnemoError('invalid_utf8', `${field} is not valid UTF-8`, { field }, { cause: err });
  }
}
