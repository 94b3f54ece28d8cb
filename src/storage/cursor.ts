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

export function cursorNumber(c: Record<string, unknown>, key: string): number {
  const v = c[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) {
    throw new MnemoError('invalid_request', 'page: not a cursor this server issued', { field: 'page' });
  }
  return v;
}

export function cursorString(c: Record<string, unknown>, key: string): string {
  const v = c[key];
  if (typeof v !== 'string') throw new MnemoError('invalid_request', 'page: not a cursor this server issued', { field: 'page' });
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
