/**
 * @module Store and workspace limits: the one place they are decided. A memory write that could grow
 * a store (a new memory, or more bytes) is refused by its admission (service/admission.ts), on the
 * usage the write itself finds; a session is checked before it is created;
 * past a limit the write is refused whole with `limit_exceeded` (HTTP 413, ENOSPC on a mount),
 * in a message naming the limit and the setting that raises it. Usage is read from a counter the
 * database keeps (sqlite/schema/limits.ts), so a check costs one indexed row, never a scan of the store.
 */
import { MnemoError } from '../domain/errors.js';
import type { Storage } from '../storage/port.js';

export interface StoreLimits {
  /** Memories one store may hold (MNEMO_STORE_MAX_MEMORIES). */
  maxMemories: number;
  /** Sum of the current content sizes of one store's memories and the sizes of its checkpoints, in bytes (MNEMO_STORE_MAX_BYTES). */
  maxBytes: number;
  /** Active sessions one workspace may have (MNEMO_WORKSPACE_MAX_SESSIONS). */
  maxSessions: number;
  /** Stores the active sessions of one workspace mount together, each a FUSE mount (MNEMO_WORKSPACE_MAX_MOUNTS). */
  maxMounts: number;
  /** Change-feed event streams one workspace may hold open on one server (MNEMO_WORKSPACE_MAX_FEED_STREAMS; feed.ts). */
  maxFeedStreams: number;
}

export const DEFAULT_LIMITS: Readonly<StoreLimits> = Object.freeze({
  maxMemories: 1_000_000,
  maxBytes: 1024 * 1024 * 1024,
  maxSessions: 256,
  maxMounts: 256,
  maxFeedStreams: 256,
});

/** Store usage and a replaced memory's size, read by whichever door asks (the port, or the mount's synchronous bridge). */
interface Usage {
  memories: number;
  bytes: number;
}

/** True when a write adding `newBytes` cannot take the store over either limit, whatever it replaces. */
export function clearOfStoreLimits(limits: StoreLimits, usage: Usage, newBytes: number): boolean {
  const clear = usageClearBelow(limits, newBytes);
  return usage.memories <= clear.memories && usage.bytes <= clear.bytes;
}

/** The usage at or below which a write adding `newBytes` cannot take the store over either limit: fewer memories than the limit, and room for its bytes. */
export function usageClearBelow(limits: StoreLimits, newBytes: number): Usage {
  return { memories: limits.maxMemories - 1, bytes: limits.maxBytes - newBytes };
}

/** The refusal of a write near a limit, once what it replaces (`old`; null: a new memory) is known. */
export function assertStoreRoomAfter(limits: StoreLimits, storeId: string, usage: Usage, newBytes: number, old: { contentSizeBytes: number } | null): void {
  if (old === null && usage.memories + 1 > limits.maxMemories) {
    throw new MnemoError(
      'limit_exceeded',
      `memory store ${storeId} already holds ${usage.memories} memories, its limit (MNEMO_STORE_MAX_MEMORIES=${limits.maxMemories}): delete some first`,
    );
  }
  const after = usage.bytes - (old?.contentSizeBytes ?? 0) + newBytes;
  // An update that shrinks a store already over the byte limit is let through: it makes room.
  if (after > limits.maxBytes && after > usage.bytes) {
    throw new MnemoError(
      'limit_exceeded',
      `memory store ${storeId} would hold ${after} bytes of content, over its limit (MNEMO_STORE_MAX_BYTES=${limits.maxBytes})`,
    );
  }
}

/**
 * A checkpoint save's limit check, run by the adapter in the save's transaction (port
 * `InsertCheckpointInput`): `admit` refuses a checkpoint of `sizeBytes` that would take the store
 * past MNEMO_STORE_MAX_BYTES, its checkpoints counting with its memories (`usage.bytes` holds
 * both); `nearLimit` says when the adapter must show it the usage less the expired memories, as a
 * memory write's admission does (service/admission.ts).
 */
export function checkpointAdmission(limits: StoreLimits, storeId: string, sizeBytes: number): { admit: (usage: Usage) => void; nearLimit: (usage: Usage) => boolean } {
  return {
    admit: (usage) => assertCheckpointRoom(limits, storeId, usage, sizeBytes),
    nearLimit: (usage) => usage.bytes + sizeBytes > limits.maxBytes,
  };
}

/** The refusal of a checkpoint of `sizeBytes` that would take the store past MNEMO_STORE_MAX_BYTES. */
function assertCheckpointRoom(limits: StoreLimits, storeId: string, usage: Usage, sizeBytes: number): void {
  const after = usage.bytes + sizeBytes;
  if (after > limits.maxBytes) {
    throw new MnemoError(
      'limit_exceeded',
      `memory store ${storeId} would hold ${after} bytes of memories and checkpoints, over its limit (MNEMO_STORE_MAX_BYTES=${limits.maxBytes}): ` +
        'delete checkpoints that are not the latest of their session, or memories, first',
    );
  }
}

/**
 * The refusal of a fork whose copy holds more than the limits now in force allow (they may have
 * been lowered since its source grew): refused as a write that took a store there would be.
 */
export function assertForkRoom(limits: StoreLimits, sourceId: string, usage: Usage): void {
  if (usage.memories > limits.maxMemories) {
    throw new MnemoError(
      'limit_exceeded',
      `a fork of memory store ${sourceId} would hold more than ${limits.maxMemories} memories, its limit (MNEMO_STORE_MAX_MEMORIES=${limits.maxMemories}): fork an earlier as_of, or delete some first`,
    );
  }
  if (usage.bytes > limits.maxBytes) {
    throw new MnemoError(
      'limit_exceeded',
      `a fork of memory store ${sourceId} would hold more than ${limits.maxBytes} bytes of content, over its limit (MNEMO_STORE_MAX_BYTES=${limits.maxBytes})`,
    );
  }
}

/** A store's limits beside what it holds: a mount's `statfs` (df) shows them. */
export interface StoreRoom {
  maxBytes: number;
  maxMemories: number;
  bytes: number;
  memories: number;
}

/** The checks over one storage (the outer port, or a transaction's `tx`): closures only, cheap to make per transaction. */
export function createLimits(storage: Pick<Storage, 'countActiveSessions' | 'countActiveMounts' | 'storeUsage'>, limits: StoreLimits) {
  return {
    limits,
    /** One indexed row (the usage counter), never a scan of the store. */
    async storeRoom(storeId: string): Promise<StoreRoom> {
      const usage = await storage.storeUsage(storeId);
      return { maxBytes: limits.maxBytes, maxMemories: limits.maxMemories, bytes: usage.bytes, memories: usage.memories };
    },
    /** Room for one more session mounting `mounts` stores: a session's every store is a FUSE mount (threads, file descriptors). */
    async assertSessionRoom(workspaceId: string, mounts: number): Promise<void> {
      const active = await storage.countActiveSessions(workspaceId);
      if (active >= limits.maxSessions) {
        throw new MnemoError(
          'limit_exceeded',
          `the workspace already has ${active} active sessions, its limit (MNEMO_WORKSPACE_MAX_SESSIONS=${limits.maxSessions}): end one first`,
        );
      }
      const mounted = await storage.countActiveMounts(workspaceId);
      if (mounted + mounts > limits.maxMounts) {
        throw new MnemoError(
          'limit_exceeded',
          `the workspace's active sessions already mount ${mounted} stores; ${mounts} more would pass its limit (MNEMO_WORKSPACE_MAX_MOUNTS=${limits.maxMounts}): end a session first`,
        );
      }
    },
  };
}

export type Limits = ReturnType<typeof createLimits>;
