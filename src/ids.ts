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

/**
 * Random bytes are drawn 4 KiB at a time: one getrandom call per id was 3% of an API create. The
 * pool is consumed once, front to back, so no byte is ever used twice.
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let used = 0;

function takeRandom(n: number): Buffer {
  if (used + n > pool.length) {
    pool = randomBytes(Math.max(POOL_BYTES, n));
    used = 0;
  }
  const out = pool.subarray(used, used + n);
  used += n;
  return out;
}

/** 24 base62 characters: ~142 bits, far past any collision worry. */
export function randomToken(length = 24): string {
  const bytes = takeRandom(length * 2);
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
