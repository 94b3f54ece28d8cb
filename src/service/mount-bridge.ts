/**
 * @module TEMPORARY, until fs/ awaits the service (branch h-mount): today's synchronous mount face
 * still needs a MountService and MountReader that answer at once. This builds them on the adapter's
 * synchronous door (storage/port/sync-bridge.ts) with the same rules as the service's operations
 * (src/service/operations.ts): the pure checks are shared, only the storage calls differ. At the
 * merge with h-mount, the service itself is the MountService (same names and arguments, returning
 * promises) and createMountReader reads the async port: delete this file then.
 */
import { assertAllowed, assertStoreGranted } from '../domain/access.js';
import { byteLength } from '../domain/content.js';
import { notFound } from '../domain/errors.js';
import type { SyncMountPort } from '../storage/port/sync-bridge.js';
import type { Caller, KeptAttrs, Store } from '../domain/types.js';
import type { Durability } from './durability.js';
import type { IdGenerator } from './ids.js';
import { assertStoreRoomAfter, clearOfStoreLimits, type StoreLimits } from './limits.js';
import { createMountReader } from './mount-reader.js';
import type { MountReader, MountService } from './mounts.js';
import { assertMoveTree, faceOf, given } from './operations.js';
import { assertAttrs, assertContent, assertMemoryInput, assertMemoryPath, resolveExpiry } from '../validate/index.js';

export interface MountBridgeDeps {
  port: SyncMountPort;
  clock: () => string;
  ids: IdGenerator;
  limits: StoreLimits;
  durability: Durability;
  wrote: (caller: Caller, versions: number) => void;
}

export function createMountBridge({ port, clock, ids, limits, durability, wrote }: MountBridgeDeps): MountService {
  const commit = <T>(caller: Caller, fn: () => T): T => durability.writeSync(port.atomic, faceOf(caller), fn);

  function writable(caller: Caller, id: string): Store {
    assertStoreGranted(caller, id);
    const s = port.getStore(caller.workspaceId, id);
    if (!s) throw notFound('memory store', id);
    assertAllowed(caller, 'write');
    return s;
  }

  function assertRoom(storeId: string, newBytes: number, replaced: () => { contentSizeBytes: number } | null): void {
    const usage = port.storeUsage(storeId);
    if (!clearOfStoreLimits(limits, usage, newBytes)) assertStoreRoomAfter(limits, storeId, usage, newBytes, replaced());
  }

  function setAttrs(caller: Caller, storeId: string, memoryId: string, attrs: KeptAttrs): void {
    writable(caller, storeId);
    const checked = assertAttrs(attrs);
    commit(caller, () => port.setMemoryAttrs(storeId, memoryId, checked, clock()));
  }

  const stamp = (caller: Caller) => ({ actor: caller.actor, now: clock(), versionId: ids('version') });

  return {
    clock,
    ids,
    durability,
    mountReader: (storeId: string): MountReader => createMountReader(port, storeId),
    saveMemoryAt(caller, storeId, input) {
      writable(caller, storeId);
      const path = assertMemoryPath(input.path);
      const content = assertContent(input.content);
      assertRoom(storeId, byteLength(content), () => port.getMemoryMetaByPath(storeId, path));
      const save = {
        ...stamp(caller), storeId, memoryId: input.memoryId, path, content,
        ...(input.mode === undefined ? {} : { mode: input.mode }),
        ...(input.attrs === undefined ? {} : { attrs: assertAttrs(input.attrs) }),
      };
      const result = commit(caller, () => port.saveMemoryAt(save));
      wrote(caller, result.changed ? 1 : 0);
      return result;
    },
    updateMemory(caller, storeId, memoryId, write, attrs) {
      writable(caller, storeId);
      assertMemoryInput(write);
      if (write.content !== undefined) {
        assertRoom(storeId, byteLength(write.content), () => port.getMemory(storeId, memoryId) ?? { contentSizeBytes: 0 });
      }
      const { expiry, ...rest } = write;
      const s = stamp(caller);
      const expiresAt = resolveExpiry(expiry, s.now);
      const result = commit(caller, () =>
        port.updateMemory({
          ...s, storeId, memoryId, ...rest,
          ...(expiresAt === undefined ? {} : { expiresAt }),
          ...(attrs === undefined ? {} : { attrs: assertAttrs(attrs) }),
        }),
      );
      wrote(caller, result.changed ? 1 : 0);
      return result.memory;
    },
    moveMemory(caller, storeId, memoryId, path) {
      writable(caller, storeId);
      const move = { ...stamp(caller), storeId, memoryId, path: assertMemoryPath(path), replacedVersionId: ids('version') };
      const moved = commit(caller, () => port.moveMemory(move));
      wrote(caller, 1);
      return moved;
    },
    moveTree(caller, storeId, from, to) {
      writable(caller, storeId);
      assertMoveTree(from, to);
      const moved = commit(caller, () => port.moveTree({ storeId, from, to, actor: caller.actor, now: clock(), versionIds: () => ids('version') }));
      wrote(caller, moved);
      return moved;
    },
    deleteMemory(caller, storeId, memoryId, expectedSha256) {
      writable(caller, storeId);
      const input = { ...stamp(caller), storeId, memoryId, ...(expectedSha256 === undefined ? {} : { expectedSha256 }) };
      commit(caller, () => port.deleteMemory(input));
      wrote(caller, 1);
    },
    setMemoryMode: (caller, storeId, memoryId, mode) => setAttrs(caller, storeId, memoryId, { mode }),
    setMemoryTimes: (caller, storeId, memoryId, times) => setAttrs(caller, storeId, memoryId, given(times)),
    setMemoryOwner: (caller, storeId, memoryId, owner) => setAttrs(caller, storeId, memoryId, given(owner)),
  };
}
