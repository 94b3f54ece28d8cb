/**
 * @module The per-store reader the service hands a mount (MountReader in service/mounts.ts):
 * storage's point lookups for one store, live or as it was at an instant (a point-in-time mount).
 */
import { MnemoError } from '../domain/errors.js';
import type { MountReader } from './mounts.js';
import type { Storage } from '../storage/port.js';

// Each call asks storage at call time (no bound methods), so a test that counts storage queries sees them.
export function createMountReader(storage: Storage, storeId: string, asOf?: string): MountReader {
  const history = {
    pathVersions: (path: string, limit: number) => storage.listPathVersions(storeId, path, limit),
    pathVersion: (path: string, n: number) => storage.getPathVersion(storeId, path, n),
    pathVersionBytes: (path: string, n: number) => storage.getPathVersionBytes(storeId, path, n),
    versionBytes: async (versionId: string) => {
      const v = await storage.getVersion(storeId, versionId);
      return v?.content == null ? null : Buffer.from(v.content, 'utf8');
    },
    historyDirectory: (dir: string, limit: number) => storage.listHistoryDirectory(storeId, dir, limit),
    hasHistoryUnder: (dir: string) => storage.hasHistoryUnder(storeId, dir),
  };
  if (asOf !== undefined) return pointInTime(storage, storeId, asOf, history);
  return {
    storeId,
    asOf: null,
    store: () => storage.getStoreById(storeId),
    meta: (path) => storage.getMemoryMetaByPath(storeId, path),
    bytes: (path) => storage.getMemoryBytesByPath(storeId, path),
    memory: (id) => storage.getMemory(storeId, id),
    memoryMeta: (id) => storage.getMemoryMetaById(storeId, id),
    hasMemoriesUnder: (dir) => storage.hasMemoriesUnder(storeId, dir),
    listDirectory: (dir, limit) => storage.listDirectory(storeId, dir, limit),
    listDirectoryNames: (dir, listingUpTo) => storage.listDirectoryNames(storeId, dir, listingUpTo),
    // A store's own mark where the engine keeps one: other stores' changes on other hosts keep this mount's answers.
    changeMark: () => storage.storeChangeMark?.(storeId) ?? storage.changeMark(),
    ownWriteMark: () => storage.ownWriteMark(),
    ownWriteCount: () => storage.ownWriteCount(),
    ...(storage.onMarkMoved ? { onMarkMoved: (listener: () => void) => storage.onMarkMoved!(listener) } : {}),
    nextExpiry: (after) => storage.nextExpiry(storeId, after),
    lastChange: () => storage.lastCommitSeq(storeId),
    changesAfter: (seq, limit) => storage.listChanges(storeId, { after: seq, limit }),
    ...(storage.redactionsAfter ? { redactionsAfter: (after: number | null) => storage.redactionsAfter!(storeId, after) } : {}),
    ...history,
  };
}

/**
 * The store at `asOf`: each memory's latest version created at or before it, not deleted. New writes
 * do not change the past, so its marks never move; a redaction or a prune does, and the mount,
 * which follows the live store for them, drops its answers then (fs/index.ts pastChanged).
 */
function pointInTime(storage: Storage, storeId: string, asOf: string, history: Pick<MountReader, 'pathVersions' | 'pathVersion' | 'pathVersionBytes' | 'versionBytes' | 'historyDirectory' | 'hasHistoryUnder'>): MountReader {
  const limit = Number.MAX_SAFE_INTEGER;
  return {
    storeId,
    asOf,
    store: () => storage.getStoreById(storeId),
    meta: (path) => storage.getMemoryMetaAsOf(storeId, path, asOf),
    bytes: async (path) => {
      const m = await storage.getMemoryBytesAsOf(storeId, path, asOf);
      if (m) return m;
      if (await storage.getMemoryMetaAsOf(storeId, path, asOf)) throw new MnemoError('forbidden', `the version of ${path} at ${asOf} was redacted`);
      return null;
    },
    // A point-in-time mount reads files by path only (it has no drafts to refresh).
    memory: () => Promise.resolve(null),
    memoryMeta: () => Promise.resolve(null),
    hasMemoriesUnder: (dir) => storage.hasMemoriesUnderAsOf(storeId, dir, asOf),
    listDirectory: (dir, max) => storage.listDirectoryAsOf(storeId, dir, asOf, max ?? limit),
    changeMark: () => 0,
    ownWriteMark: () => 0,
    ownWriteCount: () => 0,
    nextExpiry: () => Promise.resolve(null),
    lastChange: () => Promise.resolve(0),
    changesAfter: () => Promise.resolve([]),
    ...history,
  };
}
