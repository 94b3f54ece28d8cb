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
import { createHash } from 'node:crypto';
import { MnemoError } from './errors.js';
import { SEALED_OVERHEAD, seal as sealText, unseal } from './sealed.js';

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

function seal(key: PageKey, plain: string): string {
  return PREFIX + sealText(key.key, plain).toString('base64url');
}

/** The plaintext, or null when `page` is no cursor sealed under `key`. */
function open(key: PageKey, page: string): string | null {
  if (!page.startsWith(PREFIX) || !/^[A-Za-z0-9_-]+$/.test(page.slice(PREFIX.length))) return null;
  const raw = Buffer.from(page.slice(PREFIX.length), 'base64url');
  if (raw.length < SEALED_OVERHEAD + 12) return null;
  const plain = unseal(key.key, raw);
  return plain !== null && TAG.test(plain.slice(0, 12)) ? plain : null;
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
