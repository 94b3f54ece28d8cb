/** @module Content measures: UTF-8 byte length, the size limit, sha256 hex (the content rules are in src/validate/memory.ts). */
import { createHash } from 'node:crypto';

export const MAX_CONTENT_BYTES = 102_400;

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

export function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
