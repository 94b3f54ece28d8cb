/**
 * @module Small secrets sealed with AES-256-GCM: page cursors (page-scope.ts) and the console's
 * one-time key reveal (api/admin/reveal.ts). The layout is iv (12 bytes) | ciphertext | tag (16),
 * so a reader needs nothing but the key: a tampered, truncated or foreign value fails to open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The smallest sealed value: an iv and a tag around an empty text. */
export const SEALED_OVERHEAD = IV_BYTES + TAG_BYTES;

// Random 96-bit IVs: NIST SP 800-38D keeps one key under 2^32 of them, far past what we seal.
/** `plain` sealed under the 32-byte `key`. */
export function seal(key: Buffer, plain: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]);
}

/** The text `sealed` holds, or null when it was not sealed under `key` (or was changed since). */
export function unseal(key: Buffer, sealed: Buffer): string | null {
  if (sealed.length < SEALED_OVERHEAD) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
