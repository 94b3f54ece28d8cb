/** @module The per-store reader the service hands a mount (MountReader in service/mounts.ts): storage's point lookups for one store. */
import type { MountReader } from './mounts.js';
import type { Storage } from '../storage/port.js';

// Each call asks storage at call time (no bound methods), so a test that counts storage queries sees them.
export function createMountReader(storage: Storage, storeId: string): MountReader {
  return {
    storeId,
    store: () => storage.getStoreById(storeId),
    meta: (path) => storage.getMemoryMetaByPath(storeId, path),
    bytes: (path) => storage.getMemoryBytesByPath(storeId, path),
    memory: (id) => storage.getMemory(storeId, id),
    hasMemoriesUnder: (dir) => storage.hasMemoriesUnder(storeId, dir),
    listDirectory: (dir, limit) => storage.listDirectory(storeId, dir, limit),
    changeMark: () => storage.changeMark(),
    ownWriteMark: () => storage.ownWriteMark(),
    nextExpiry: (after) => storage.nextExpiry(storeId, after),
  };
}
