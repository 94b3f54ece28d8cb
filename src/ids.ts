/** @module Prefixed random identifiers (memstore_, mem_, memver_, sesn_, apikey_, wrkspc_). */
import { randomBytes } from 'node:crypto';

export const ID_PREFIXES = {
  store: 'memstore_',
  memory: 'mem_',
  version: 'memver_',
  session: 'sesn_',
  apiKey: 'apikey_',
  workspace: 'wrkspc_',
  request: 'req_',
  checkpoint: 'ckpt_',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** 24 base62 characters: ~142 bits, far past any collision worry. */
export function randomToken(length = 24): string {
  const bytes = randomBytes(length * 2);
  let out = '';
  for (let i = 0; out.length < length && i < bytes.length; i++) {
    const b = bytes[i]!;
    // Rejection sampling keeps the alphabet uniform (248 = 62 * 4).
    if (b < 248) out += ALPHABET[b % 62];
  }
  return out.length === length ? out : randomToken(length);
}

export function newId(kind: IdKind): string {
  return ID_PREFIXES[kind] + randomToken();
}

export type IdGenerator = (kind: IdKind) => string;
