/**
 * @module After a redaction: the versions that still hold the text it erased (README, "Redaction"),
 * so an admin can redact them too. Asked once the redaction has committed, with what it answered:
 * the text is stored once, and its bytes stay while any of them holds it.
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
   * The holders of the text `redacted` (what redactVersion answered) erased, in the stores of its
   * workspace the caller's key may see: null when that answer erased nothing (the version was
   * redacted already). Versions in stores outside the key's grant are counted by
   * `contentStillHeldBy` but never listed.
   */
  return async function textHolders(caller: Caller, redacted: MemoryVersion): Promise<TextHolders | null> {
    if (redacted.contentStillHeldBy === undefined) return null;
    if (redacted.erasedSha256 === undefined) return { data: [], hasMore: false };
    assertAllowed(caller, 'redact');
    await readable(caller, redacted.storeId);
    return storage.listTextHolders(redacted.storeId, redacted.erasedSha256, { limit: TEXT_HOLDERS_MAX, only: grantedStores(caller), now: clock() });
  };
}
