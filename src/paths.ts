/** @module Pure path algebra for memory paths: validation, segments, ancestry, prefixes, slugs. */
import { MnemoError } from './errors.js';

export const MAX_PATH_BYTES = 1024;
export const MAX_SEGMENTS = 20;

// Control (Cc), format (Cf), surrogate (Cs) characters and the line/paragraph separators.
const FORBIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029]/u;

/** Returns the path unchanged if it is a valid memory path, otherwise throws `invalid_path`/`path_too_long`. */
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
  const segs = path.slice(1).split('/');
  if (segs.length > MAX_SEGMENTS) {
    throw new MnemoError('invalid_path', `${field} has ${segs.length} segments; at most ${MAX_SEGMENTS} are allowed`, { field });
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
  if (typeof prefix !== 'string' || !prefix.endsWith('/')) {
    throw new MnemoError('invalid_request', `${field} must end with "/"`, { field });
  }
  if (prefix === '/') return prefix;
  const p = assertMemoryPath(prefix.slice(0, -1), field);
  return p + '/';
}

export function segments(path: string): string[] {
  return path.slice(1).split('/');
}

/** Proper ancestors of a path, nearest last: "/a/b/c" → ["/a", "/a/b"]. */
export function ancestors(path: string): string[] {
  const segs = segments(path);
  const out: string[] = [];
  for (let i = 1; i < segs.length; i++) out.push('/' + segs.slice(0, i).join('/'));
  return out;
}

export function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

export function joinPath(dir: string, name: string): string {
  return dir === '/' ? '/' + name : dir + '/' + name;
}

/**
 * The smallest string greater than every path inside `dir + "/"`: "/" is 0x2F and "0" is 0x30,
 * so under binary collation all of "/a/…" sorts between "/a/" and "/a0".
 */
export function subtreeEnd(dirWithSlash: string): string {
  return dirWithSlash.slice(0, -1) + '0';
}

/** Mount slug: the name lowercased, each run of characters other than a–z and 0–9 one hyphen. */
export function slugify(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return slug || 'store';
}
