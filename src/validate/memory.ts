/**
 * @module Rules on a memory's inputs: its path, its content (as text from a body or as bytes from
 * a mount), a content hash, a mount's entry names, its expiry and the attributes a mount keeps.
 */
import { byteLength, MAX_CONTENT_BYTES } from '../domain/content.js';
import { MnemoError } from '../domain/errors.js';
import type { Expiry, KeptAttrs } from '../domain/types.js';
import type { MemoryEdit } from '../domain/text-edits.js';
import { fail } from './fail.js';
import { CONTINUITY_LIMITS } from './limits.js';
import { assertWellFormed } from './text.js';
import { parseTimestamp } from './timestamps.js';

// ---------------------------------------------------------------- paths

export const MAX_PATH_BYTES = 1024;
export const MAX_SEGMENTS = 20;

// Control (Cc), format (Cf), surrogate (Cs) characters and the line/paragraph separators.
const FORBIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029]/u;

/** Returns the path unchanged if it is a valid memory path, otherwise throws `invalid_path`/`path_too_long`. */
/** The reserved prefix: a mount's read-only history directory (fs/history.ts); no memory lives at or below it. */
export const HISTORY_ROOT = '/.history';

export function assertMemoryPath(path: unknown, field = 'path'): string {
  if (typeof path !== 'string') throw new MnemoError('invalid_path', `${field} must be a string`, { field });
  if (!path.startsWith('/')) throw new MnemoError('invalid_path', `${field} must start with "/"`, { field });
  if (Buffer.byteLength(path, 'utf8') > MAX_PATH_BYTES) {
    throw new MnemoError('path_too_long', `${field} is longer than ${MAX_PATH_BYTES} bytes`, { field });
  }
  const bad = FORBIDDEN.exec(path);
  if (bad) {
    const cp = bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    throw new MnemoError('invalid_path', `${field} contains a forbidden character (U+${cp})`, { field });
  }
  if (path.normalize('NFC') !== path) {
    throw new MnemoError('invalid_path', `${field} must be in Unicode Normalization Form C`, { field });
  }
  if (path === HISTORY_ROOT || path.startsWith(HISTORY_ROOT + '/')) {
    throw new MnemoError('invalid_path', `${field} is under ${HISTORY_ROOT}, a reserved prefix: every mount shows the store's history there`, { field });
  }
  const segs = path.slice(1).split('/');
  if (segs.length > MAX_SEGMENTS) {
    // path_too_long, not invalid_path: a mount answers ENAMETOOLONG, where EINVAL made `mv` print
    // "cannot move … to a subdirectory of itself".
    throw new MnemoError('path_too_long', `${field} has ${segs.length} segments; at most ${MAX_SEGMENTS} are allowed`, { field });
  }
  for (const seg of segs) {
    if (seg === '') throw new MnemoError('invalid_path', `${field} has an empty segment`, { field });
    if (seg === '.' || seg === '..') {
      throw new MnemoError('invalid_path', `${field} has a "${seg}" segment`, { field });
    }
  }
  return path;
}

/** A list prefix: "/" or a valid path followed by "/" (whole-segment matching). */
export function assertPathPrefix(prefix: unknown, field = 'path_prefix'): string {
  if (typeof prefix !== 'string' || !prefix.endsWith('/')) fail(field, `${field} must end with "/"`, { prefix: false });
  if (prefix === '/') return prefix;
  const p = assertMemoryPath(prefix.slice(0, -1), field);
  return p + '/';
}

export const NAME_MAX = 255;

/** One directory entry name from the mount: the kernel lets FUSE see up to 1,024 bytes, POSIX says 255. */
export function assertEntryName(name: string): string {
  if (byteLength(name) > NAME_MAX) throw new MnemoError('name_too_long', `name is longer than ${NAME_MAX} bytes`);
  return name;
}

// ---------------------------------------------------------------- content

export function assertContentSize(bytes: number, field = 'content'): void {
  if (bytes > MAX_CONTENT_BYTES) {
    throw new MnemoError(
      'content_too_large',
      `${field} is ${bytes} bytes; the limit is ${MAX_CONTENT_BYTES} bytes of UTF-8`,
      { field },
    );
  }
}

export function assertContent(content: string): string {
  assertWellFormed(content, 'content');
  assertContentSize(byteLength(content));
  return content;
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

// ---------------------------------------------------------------- checked once

/** Inputs a parser built and checked: the service takes their path and content as they are. */
const parsed = new WeakSet<object>();

/**
 * Marks a parser's result as checked and freezes it, so a face cannot change a value after the
 * check (a copy, such as a spread, is no longer marked and is checked again: never zero times).
 */
export function checked<T extends object>(input: T): T {
  parsed.add(input);
  return Object.freeze(input);
}

/**
 * The path and content rules for a memory write, applied once: a body the API or an MCP tool
 * parsed (parseMemoryCreate, parseMemoryUpdate) was checked there; anything else (a mount's
 * save, a direct call) is checked here, in the order the parsers use: path, then content.
 */
export function assertMemoryInput<T extends { path?: string | undefined; content?: string | undefined }>(input: T): T {
  if (parsed.has(input)) return input;
  if (input.path !== undefined) assertMemoryPath(input.path);
  if (input.content !== undefined) assertContent(input.content);
  return input;
}

const SHA256 = /^[0-9a-f]{64}$/;

export function parseSha256(value: unknown, field: string): string {
  if (typeof value !== 'string' || !SHA256.test(value)) fail(field, 'must be 64 lowercase hexadecimal characters');
  return value;
}

// ---------------------------------------------------------------- expiry (mnemo's additive TTL extension)

/**
 * `ttl_seconds` (1 s to 10 years) or `expires_at` (RFC 3339); at most one. On an update,
 * `expires_at: null` clears the expiry; absent fields keep it.
 */
export function parseExpiry(b: { ttl_seconds?: number | null | undefined; expires_at?: string | null | undefined }, clearable: boolean): Expiry | undefined {
  const ttl = b.ttl_seconds;
  const at = b.expires_at;
  if (ttl != null && at != null) fail('ttl_seconds', 'give ttl_seconds or expires_at, not both');
  if (ttl != null) {
    if (!Number.isInteger(ttl) || ttl < 1 || ttl > CONTINUITY_LIMITS.ttlMaxSeconds) {
      fail('ttl_seconds', `must be an integer from 1 to ${CONTINUITY_LIMITS.ttlMaxSeconds}`);
    }
    return { ttlSeconds: ttl };
  }
  if (at != null) return { expiresAt: parseTimestamp(at, 'expires_at')! };
  if (at === null && clearable) return null;
  return undefined;
}

/** The absolute expiry for `now`; an expires_at that is not in the future is refused. */
export function resolveExpiry(e: Expiry | undefined, now: string): string | null | undefined {
  if (e === undefined || e === null) return e;
  if ('ttlSeconds' in e) return new Date(Date.parse(now) + e.ttlSeconds * 1000).toISOString();
  if (e.expiresAt <= now) fail('expires_at', `must be in the future (now is ${now})`);
  return e.expiresAt;
}

// ---------------------------------------------------------------- attributes a mount keeps

/** Times are finite milliseconds; ids are what a 32-bit uid_t holds, less (uid_t)-1, which means "unchanged". */
export function assertAttrs(a: KeptAttrs): KeptAttrs {
  for (const key of ['atimeMs', 'mtimeMs'] as const) {
    const v = a[key];
    if (v !== undefined && !Number.isFinite(v)) fail(undefined, `${key} must be a finite number of milliseconds`);
  }
  for (const key of ['uid', 'gid'] as const) {
    const v = a[key];
    if (v !== undefined && !(Number.isInteger(v) && v >= 0 && v < 0xffffffff)) {
      fail(undefined, `${key} must be an integer from 0 to 4294967294`);
    }
  }
  if (a.mode !== undefined) return { ...a, mode: a.mode & 0o7777 };
  return a;
}

// ---------------------------------------------------------------- edits (MCP memory_edit)

/** memory_edit's arguments: what each command needs, before the memory is read (the rest depends on its text). */
export function parseMemoryEdit(a: { command: 'str_replace' | 'insert'; old_str?: string | undefined; new_str?: string | undefined; insert_line?: number | undefined; insert_text?: string | undefined }): MemoryEdit {
  // The other command's arguments are refused, never dropped: the caller may have meant that command.
  const others = (a.command === 'str_replace' ? (['insert_line', 'insert_text'] as const) : (['old_str', 'new_str'] as const)).filter((k) => a[k] !== undefined);
  if (others.length > 0) fail(others[0], `${others.join(' and ')} do${others.length === 1 ? 'es' : ''} not apply to ${a.command}`, { prefix: false });
  if (a.command === 'str_replace') {
    if (!a.old_str) fail('old_str', 'str_replace needs a non-empty old_str', { prefix: false });
    return { command: 'str_replace', oldStr: a.old_str, newStr: a.new_str ?? '' };
  }
  if (a.insert_text === undefined) fail('insert_text', 'insert needs insert_text', { prefix: false });
  return { command: 'insert', insertLine: a.insert_line, insertText: a.insert_text };
}
