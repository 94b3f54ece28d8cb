/**
 * @module Page cursors sealed by the database and bound to the list they were issued for.
 *
 * The storage's cursor holds the place a list resumes at (often a row's global `seq`), and a tag of
 * the list's store (or workspace) and filters. Sealed (AES-256-GCM under the database's page key,
 * storage/port/page-key.ts), a cursor shows a client nothing of either: a plain one let any key
 * count other workspaces' writes, stores and sessions between two pages. A cursor used on another
 * store or with other filters would resume at a place that means nothing there and silently skip
 * items: it is refused, as is one that does not open under this database's key (tampered,
 * truncated, another database's). One AES operation per page, on the list's path only.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { MnemoError } from './errors.js';

/** The database's key for page cursors, read once when the storage opens. */
export interface PageKey {
  /** 32 bytes, made by a schema migration (SQLite 24, PostgreSQL 25): every server on the database shares it. */
  readonly key: Buffer;
  /**
   * Until when (ms since the epoch) unsealed cursors, as releases before sealing issued, are still
   * taken: an hour after the migration that made the key, on a database that had data then; null
   * (never) on one made after it.
   */
  readonly legacyUntil: number | null;
}

const TAG = /^[A-Za-z0-9_-]{12}$/;
const PREFIX = 'page_';
const IV_BYTES = 12;
const AUTH_BYTES = 16;

/** A short fingerprint of what a list is of (its kind, store or workspace, filters). */
export function scopeTag(...parts: (string | number | boolean | null)[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 12);
}

/** The page with its next cursor sealed under `key` and bound to `tag`. */
export function bindPage<P extends { nextPage: string | null }>(key: PageKey, page: P, tag: string): P {
  return page.nextPage === null ? page : { ...page, nextPage: seal(key, tag + page.nextPage) };
}

/**
 * The storage's cursor inside `page`: refused (400 naming `page`) unless it opens under `key`, and
 * refused with a message that says so when it was bound to another list. Within the key's legacy
 * window an unsealed cursor is taken as before sealing (clients paging through the upgrade hold
 * them); the storage still checks its own part.
 */
export function unbindPage(key: PageKey, page: string | null, tag: string, now = Date.now()): string | null {
  if (page === null) return null;
  const opened = open(key, page);
  if (opened === null) {
    if (key.legacyUntil !== null && now < key.legacyUntil) return unbindUnsealed(page, tag);
    throw notIssued();
  }
  if (opened.slice(0, 12) !== tag) throw anotherList();
  return opened.slice(12);
}

// Random 96-bit IVs: NIST SP 800-38D keeps one key under 2^32 of them, far past a database's pages.
function seal(key: PageKey, plain: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key.key, iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
}

/** The plaintext, or null when `page` is no cursor sealed under `key`. */
function open(key: PageKey, page: string): string | null {
  if (!page.startsWith(PREFIX) || !/^[A-Za-z0-9_-]+$/.test(page.slice(PREFIX.length))) return null;
  const raw = Buffer.from(page.slice(PREFIX.length), 'base64url');
  if (raw.length < IV_BYTES + AUTH_BYTES + 12) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.key, raw.subarray(0, IV_BYTES));
    decipher.setAuthTag(raw.subarray(raw.length - AUTH_BYTES));
    const plain = Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - AUTH_BYTES)), decipher.final()]).toString('utf8');
    return TAG.test(plain.slice(0, 12)) ? plain : null;
  } catch {
    return null;
  }
}

/** An unsealed cursor: the storage's cursor, then a dot and the list's tag (or no tag, older still). */
function unbindUnsealed(page: string, tag: string): string {
  const dot = page.lastIndexOf('.');
  if (dot < 0) return page;
  const got = page.slice(dot + 1);
  if (got === tag) return page.slice(0, dot);
  if (!TAG.test(got)) throw notIssued();
  throw anotherList();
}

function notIssued(): MnemoError {
  return new MnemoError('invalid_request', 'page: not a cursor this server issued', { field: 'page' });
}

function anotherList(): MnemoError {
  return new MnemoError('invalid_request', 'page: a cursor of another list (another store or other filters); start this list without page', { field: 'page' });
}
