/**
 * @module A memory write's admission (port/memories.ts `Admission`): what `writable` and the store's
 * limits check, for a write that runs them on what it finds. The adapter reads the store and its
 * usage with the write's own first statement instead of two round trips before it (on PostgreSQL
 * under the store's lock, in the probe; on SQLite on its one connection, just before the write). The
 * rules stay here, in the order `writable` and the limits apply them: the store is the caller's
 * (404), the key may write (403), the store has room for the write's bytes (413).
 */
import { allowed, assertAllowed, assertStoreGranted } from '../domain/access.js';
import { notFound } from '../domain/errors.js';
import type { Caller } from '../domain/types.js';
import type { Admission } from '../storage/port.js';
import { assertStoreRoomAfter, clearOfStoreLimits, usageClearBelow, type StoreLimits } from './limits.js';

/**
 * What a write's `newBytes` take the place of, for the limits:
 * - `nothing`: it adds a memory (a create);
 * - `target`: the bytes of the memory it names (an update; a missing one counts as empty, and the
 *   write then fails as not found);
 * - `found`: the memory it finds at its path if there is one, else it adds a memory (a mount's save).
 */
export type Replaces = 'nothing' | 'target' | 'found';

/**
 * What a write may add: `newBytes` replacing what `replaces` says. `appended`: the bytes an append
 * adds (port `UpdateMemoryInput.appended`), which the write puts after the target's text if that
 * changed meanwhile: it then holds the target's bytes and these. `newBytes` is the whole text sent,
 * the append included, so a write clear of the limits by it is clear replayed too (a replay grows
 * the store by `appended` alone).
 */
export interface WriteRoom {
  newBytes: number;
  replaces: Replaces;
  appended?: number;
}

/** The admission of `caller`'s write to `storeId`; `room` null: a write that cannot grow the store (a delete, a move). */
export function writeAdmission(limits: StoreLimits, caller: Caller, storeId: string, room: WriteRoom | null): Admission {
  // A store outside the key's grant is refused before any I/O, as `writable` does.
  assertStoreGranted(caller, storeId);
  return {
    workspaceId: caller.workspaceId,
    admit(found) {
      const { storeFound, usage } = found;
      if (!storeFound) throw notFound('memory store', storeId);
      assertAllowed(caller, 'write');
      if (room === null || clearOfStoreLimits(limits, usage, room.newBytes)) return;
      // `found.target` is read only here, near a limit: on SQLite reading it is a query.
      const target = room.replaces === 'nothing' ? null : found.target;
      const old = room.replaces === 'target' ? (target ?? { contentSizeBytes: 0 }) : target;
      // An append holds its text or, replayed, the target's with the append after it: counted as the larger.
      const newBytes = room.appended === undefined || target === null ? room.newBytes : Math.max(room.newBytes, target.contentSizeBytes + room.appended);
      assertStoreRoomAfter(limits, storeId, usage, newBytes, old);
    },
    nearLimit(usage) {
      return room !== null && !clearOfStoreLimits(limits, usage, room.newBytes);
    },
    clearBelow() {
      // A write that adds a memory (a create; a save that finds nothing at its path): `admit` says
      // yes to it at or below this usage in a store the caller sees.
      if (room === null || room.replaces === 'target' || !allowed(caller, 'write')) return null;
      return usageClearBelow(limits, room.newBytes);
    },
  };
}
