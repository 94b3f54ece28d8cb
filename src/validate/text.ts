/** @module Rules on any text field: well-formed UTF-16 (so it has a UTF-8 form), length in characters, control characters. */
import { MnemoError } from '../domain/errors.js';

export const CONTROL = /[\p{Cc}]/u;

/** Characters as a person counts them (code points), not UTF-16 units. */
export function charCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** A JS string that came from JSON may hold lone surrogates, which have no UTF-8 form. */
export function assertWellFormed(text: string, field: string): void {
  if (!text.isWellFormed()) {
    throw new MnemoError('invalid_utf8', `${field} is not valid UTF-8 (it contains a lone surrogate)`, { field });
  }
}
