/** @module Opaque page cursors: `page_` + base64url(JSON), validated on the way back in. */
import { MnemoError } from '../domain/errors.js';
import type { Page } from '../domain/types.js';

export function encodeCursor(value: Record<string, string | number | boolean>): string {
  return 'page_' + Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

export function decodeCursor(page: string | null): Record<string, unknown> | null {
  if (page === null) return null;
  try {
    if (!page.startsWith('page_')) throw new Error('prefix');
    const value: unknown = JSON.parse(Buffer.from(page.slice(5), 'base64url').toString('utf8'));
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('shape');
    return value as Record<string, unknown>;
  } catch (err) {
    throw new MnemoError('invalid_request', 'page: not a cursor this server issued', { field: 'page' }, { cause: err });
  }
}

/**
 * A search page cursor, refused with a message that says so when it was issued for the other mode:
 * full-text cursors hold an offset (`o`), substring ones a path (`p`).
 */
export function decodeSearchCursor(page: string | null, mode: 'fts' | 'substring'): Record<string, unknown> | null {
  const c = decodeCursor(page);
  if (c === null) return null;
  const modeOf = 'o' in c ? 'fts' : 'p' in c ? 'substring' : null;
  if (modeOf !== null && modeOf !== mode) {
    throw new MnemoError('invalid_request', `page: a cursor of mode ${modeOf}, not ${mode}; start the ${mode} search without page`, { field: 'page' });
  }
  return c;
}

export function cursorNumber(c: Record<string, unknown>, key: string): number {
  const v = c[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw unknownCursor();
  return v;
}

export function cursorString(c: Record<string, unknown>, key: string): string {
  const v = c[key];
  if (typeof v !== 'string') throw unknownCursor();
  return v;
}

/** Where a newest-first listing by `seq` resumes: below the cursor's seq, or from the newest. */
export function seqBefore(page: string | null): number {
  const c = decodeCursor(page);
  return c ? cursorNumber(c, 's') : Number.MAX_SAFE_INTEGER;
}

/** A newest-first page from up to `limit + 1` rows by `seq` (the one past the page says there is more). */
export function seqPage<R extends { seq: number }, T>(rows: R[], limit: number, map: (r: R) => T): Page<T> {
  const data = rows.slice(0, limit);
  return { data: data.map((r) => map(r)), nextPage: rows.length > limit ? encodeCursor({ s: data[data.length - 1]!.seq }) : null };
}

/** Where an oldest-first listing by (created_at, id) resumes: after the cursor's key, or from the oldest. */
export interface CreatedAfter {
  id: string;
  /** The key's created_at; null in a cursor issued before it held one (the adapter looks it up). */
  createdAt: string | null;
}

export function createdAfter(page: string | null): CreatedAfter | null {
  const c = decodeCursor(page);
  if (c === null) return null;
  return { id: cursorString(c, 'i'), createdAt: c['t'] === undefined ? null : cursorString(c, 't') };
}

/** An oldest-first page from up to `limit + 1` rows by (created_at, id) (the one past the page says there is more). */
export function createdPage<R extends { id: string; created_at: string }, T>(rows: R[], limit: number, map: (r: R) => T): Page<T> {
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  return { data: data.map((r) => map(r)), nextPage: rows.length > limit && last ? encodeCursor({ i: last.id, t: last.created_at }) : null };
}

/** A cursor this server did not issue for the listing it is used on. */
export function unknownCursor(): MnemoError {
  return new MnemoError('invalid_request', 'page: not a cursor this server issued', { field: 'page' });
}
