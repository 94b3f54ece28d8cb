/**
 * @module Page cursors bound to the list they were issued for: the storage's cursor, a dot, and a
 * tag of the list's store (or workspace) and filters. A cursor used on another store or with other
 * filters would resume at a place that means nothing there and silently skip items: it is refused.
 */
import { createHash } from 'node:crypto';
import { MnemoError } from './errors.js';

const TAG = /^[A-Za-z0-9_-]{12}$/;

/** A short fingerprint of what a list is of (its kind, store or workspace, filters). */
export function scopeTag(...parts: (string | number | boolean | null)[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 12);
}

/** The page with its next cursor bound to `tag`. */
export function bindPage<P extends { nextPage: string | null }>(page: P, tag: string): P {
  return page.nextPage === null ? page : { ...page, nextPage: `${page.nextPage}.${tag}` };
}

/**
 * The storage's cursor inside `page`, refused when it was bound to another list. A cursor without
 * a tag, as releases before this one issued (base64url has no dot), is taken as it is: clients
 * paging through a rolling upgrade hold them; the storage still checks its own part.
 */
export function unbindPage(page: string | null, tag: string): string | null {
  if (page === null) return null;
  const dot = page.lastIndexOf('.');
  if (dot < 0) return page;
  const got = page.slice(dot + 1);
  if (got === tag) return page.slice(0, dot);
  if (!TAG.test(got)) throw new MnemoError('invalid_request', 'page: not a cursor this server issued', { field: 'page' });
  throw new MnemoError('invalid_request', 'page: a cursor of another list (another store or other filters); start this list without page', { field: 'page' });
}
