/**
 * @module After a redaction: how many versions still hold the text it erased, and which (README,
 * "Redaction"), so an admin can redact them too. Asked once the redaction has committed, with what
 * it answered: the text is stored once, and its bytes stay while any of them holds it. Both grow
 * with the holders, so they are read as listings are (on SQLite a reader thread), never in the
 * redaction's write transaction.
 */
import { assertAllowed, grantedStores } from '../domain/access.js';
import type { Caller, MemoryVersion, Store, TextHolders } from '../domain/types.js';
import type { Storage } from '../storage/port.js';

/** How many holders a redaction's answer lists at most (newest first; `hasMore` says there are others). */
export const TEXT_HOLDERS_MAX = 100;

export interface TextHolderOptions {
  storage: Pick<Storage, 'listTextHolders'>;
  /** The store as the caller may see it (404 otherwise): operations' getStore. */
  readable: (caller: Caller, storeId: string) => Promise<Store>;
  clock: () => string;
}

export function createTextHolders({ storage, readable, clock }: TextHolderOptions) {
  /**
   * The holders of the text `redacted` (what redactVersion answered) erased: how many in the stores
   * of its workspace anyone can see (`count`, the answer's `content_still_held_by`), and those in
   * the stores the caller's key may see; null when that answer erased nothing (the version was
   * redacted already). Versions in stores outside the key's grant are counted but never listed.
   */
  return async function textHolders(caller: Caller, redacted: MemoryVersion): Promise<TextHolders | null> {
    if (redacted.erased === undefined) return null;
    // Bytes gone with the version: no version anywhere holds them, so there is nothing to read.
    if (redacted.erased.sha256 === null || redacted.erased.gone) return { data: [], hasMore: false, count: 0 };
    assertAllowed(caller, 'redact');
    await readable(caller, redacted.storeId);
    return storage.listTextHolders(redacted.storeId, redacted.erased.sha256, { limit: TEXT_HOLDERS_MAX, only: grantedStores(caller), now: clock() });
  };
}
