/** @module The one refusal of bad input: every rule under src/validate/ throws through it. */
import { MnemoError } from '../domain/errors.js';

/**
 * Throws `invalid_request`. The message leads with the field it names ("limit: must be …") unless
 * `prefix` is false (a message that places the field itself); with no field, the message stands
 * alone (a problem with the whole body) and the details name none.
 */
export function fail(field: string | undefined, message: string, { prefix = true } = {}): never {
  const text = field !== undefined && prefix ? `${field}: ${message}` : message;
  throw new MnemoError('invalid_request', text, field === undefined ? {} : { field });
}
