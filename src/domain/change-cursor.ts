/**
 * @module The change feed's cursor: a place in one store's commit order (schema invariant 15),
 * opaque to clients. `c2.` names the format: base64url of the commit number, a dot, and the
 * store's tag, so a cursor used on another store's feed is refused instead of resuming at a number
 * that means nothing there. `c1.` cursors (the number alone, as earlier releases issued them) are
 * still taken on any store: clients keep them as their place in a feed.
 */
import { MnemoError } from './errors.js';
import { scopeTag } from './page-scope.js';

/** `c2.<number>.<store tag>`, or a legacy `c1.<number>`; the number is base64url of its decimal digits. */
const FORM = /^c(?:1\.([A-Za-z0-9_-]{1,24})|2\.([A-Za-z0-9_-]{1,24})\.([A-Za-z0-9_-]{12}))$/;

export function encodeChangeCursor(seq: number, storeId: string): string {
  return `c2.${Buffer.from(String(seq), 'utf8').toString('base64url')}.${feedTag(storeId)}`;
}

/**
 * The commit number in a cursor this server issued; anything else is a 400 naming `field`. With
 * `storeId`, a `c2.` cursor of another store's feed is refused too; without, only its form is checked.
 */
export function decodeChangeCursor(raw: string, field: string, storeId?: string): number {
  const bad = () => new MnemoError('invalid_request', `${field}: not a change cursor this server issued`, { field });
  const m = FORM.exec(raw);
  if (!m) throw bad();
  const num = (m[1] ?? m[2])!;
  const text = Buffer.from(num, 'base64url').toString('utf8');
  if (!/^(0|[1-9][0-9]{0,15})$/.test(text)) throw bad();
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw bad();
  // Only the canonical spelling: one place has one cursor, so a client may compare them.
  if (Buffer.from(text, 'utf8').toString('base64url') !== num) throw bad();
  if (m[3] !== undefined && storeId !== undefined && m[3] !== feedTag(storeId)) {
    throw new MnemoError('invalid_request', `${field}: a cursor of another store's change feed; start this store's feed without it`, { field });
  }
  return n;
}

function feedTag(storeId: string): string {
  return scopeTag('changes', storeId);
}
