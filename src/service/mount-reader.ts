/** @module The per-store reader the service hands a mount (MountReader in service/mounts.ts): storage's point lookups for one store. */
import type { MountReader } from './mounts.js';
import type { Storage } from '../storage/port.js';

// Each call asks storage at call time (no bound methods), so a test that counts storage queries sees them.
// The reads are async arrows: a promise whatever the port returns (awaiting a plain value is harmless).
export function createMountReader(storage: Storage, storeId: string): MountReader {
  return {
    storeId,
    store: async () => await storage.getStoreById(storeId),
    meta: async (path) => await storage.getMemoryMetaByPath(storeId, path),
    bytes: async (path) => await storage.getMemoryBytesByPath(storeId, path),
    memory: async (id) => await storage.getMemory(storeId, id),
    hasMemoriesUnder: async (dir) => await storage.hasMemoriesUnder(storeId, dir),
    listDirectory: async (dir, limit) => await storage.listDirectory(storeId, dir, limit),
    changeMark: () => storage.changeMark(),
    ownWriteMark: () => storage.ownWriteMark(),
    nextExpiry: async (after) => await storage.nextExpiry(storeId, after),
  };
}
