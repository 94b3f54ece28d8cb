/**
 * @module The change feed's cursor: a place in one store's commit order (schema invariant 15),
 * opaque to clients. `c1.` names the format, so a later one (a fork's, a shard's) can sit beside
 * it; the rest is base64url of the commit number. `c1.MA` (0) is the place before the first version.
 */
import { MnemoError } from './errors.js';

const PREFIX = 'c1.';

export function encodeChangeCursor(seq: number): string {
  return PREFIX + Buffer.from(String(seq), 'utf8').toString('base64url');
}

/** The commit number in a cursor this server issued; anything else is a 400 naming `field`. */
export function decodeChangeCursor(raw: string, field: string): number {
  const bad = () => new MnemoError('invalid_request', `${field}: not a change cursor this server issued`, { field });
  if (!raw.startsWith(PREFIX) || !/^[A-Za-z0-9_-]{1,24}$/.test(raw.slice(PREFIX.length))) throw bad();
  const text = Buffer.from(raw.slice(PREFIX.length), 'base64url').toString('utf8');
  if (!/^(0|[1-9][0-9]{0,15})$/.test(text)) throw bad();
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw bad();
  // Only the canonical spelling: one place has one cursor, so a client may compare them.
  if (encodeChangeCursor(n) !== raw) throw bad();
  return n;
}
