/**
 * @module TEMPORARY, until the mount face is async (branch h-mount): the synchronous door a mount
 * still needs. fs/ answers every FUSE operation synchronously today, so it cannot await the port;
 * an adapter that can answer at once (SQLite) offers these methods under SYNC_MOUNT_PORT, and the
 * service builds the mount's reader and writes on them (src/service/mount-bridge.ts). Delete this
 * file, that one and the adapter's SYNC_MOUNT_PORT member once fs/ awaits MountReader/MountService.
 */
import type { AtomicOptions, Storage } from './index.js';
import type { Synchronous } from './synchronous.js';

export const SYNC_MOUNT_PORT = Symbol.for('mnemo.syncMountPort');

type MountMethod =
  | 'getStore' | 'getStoreById' | 'storeUsage' | 'getMemory' | 'getMemoryMetaByPath' | 'getMemoryBytesByPath' | 'hasMemoriesUnder'
  | 'listDirectory' | 'nextExpiry' | 'saveMemoryAt' | 'updateMemory' | 'moveMemory' | 'moveTree' | 'deleteMemory' | 'setMemoryAttrs'
  | 'changeMark' | 'ownWriteMark';

export type SyncMountPort = Synchronous<Pick<Storage, MountMethod>> & {
  /** Throws (internal) if an async transaction holds the connection: a mount never waits. */
  atomic<T>(fn: () => T, options?: AtomicOptions): T;
};

export function syncMountPort(storage: Storage): SyncMountPort | null {
  return (storage as unknown as { [SYNC_MOUNT_PORT]?: SyncMountPort })[SYNC_MOUNT_PORT] ?? null;
}
