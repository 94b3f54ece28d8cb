/**
 * @module Prefixed identifiers (memstore_, mem_, memver_, sesn_, apikey_, wrkspc_): 24 base62
 * characters after the prefix, the first 8 the creation time in milliseconds and 16 random (~95
 * bits). Ids are opaque to clients; the time prefix is for SQLite. Every id is a key in a unique
 * index, and a random key lands on a random leaf page: a commit of four API creates wrote 31 WAL
 * pages (21 now), and in a store of a million versions each insert read a cold page. Ids made in
 * the same moment share leaf pages, and new ones append at the end of the index. Secrets (API
 * keys) use `randomToken` alone.
 */
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
  adminAction: 'adminact_',
  consoleSession: 'console_',
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

/** Milliseconds since 1970 in 8 base62 digits (good until the year 8888), so ids sort by time. */
function timeToken(ms: number): string {
  let out = '';
  for (let i = 0; i < 8; i++) {
    out = ALPHABET[ms % 62]! + out;
    ms = Math.floor(ms / 62);
  }
  return out;
}

export function newId(kind: IdKind): string {
  return ID_PREFIXES[kind] + timeToken(Date.now()) + randomToken(16);
}

export type IdGenerator = (kind: IdKind) => string;
