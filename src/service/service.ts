/** @module The store service: the one entry point both faces call for stores, memories and versions. */
import { assertAllowed, assertMayCreateStores, assertStoreGranted, grantedStores } from '../domain/access.js';
import { createAudit } from './audit.js';
import { createCheckpoints } from './checkpoints.js';
import { createConsoleSessions } from './console-sessions.js';
import { byteLength } from '../domain/content.js';
import { createDurability, type MountSync } from './durability.js';
import { MnemoError, notFound } from '../domain/errors.js';
import { newId, type IdGenerator } from './ids.js';
import { createKeys } from './keys.js';
import { createLimits, DEFAULT_LIMITS, type StoreLimits } from './limits.js';
import type { Storage, WriteResult } from '../storage/port.js';
import type {
  Caller,
  Expiry,
  Face,
  KeptAttrs,
  Memory,
  MemoryListItem,
  MemoryListQuery,
  MemoryVersion,
  MemoryWrite,
  NewStore,
  Page,
  Store,
  StoreListQuery,
  StorePatch,
  VersionListQuery,
} from '../domain/types.js';
import { createSearch } from './search.js';
import { createIdempotency } from './idempotency.js';
import { createLocalSessions } from './local-sessions.js';
import { createMountReader } from './mount-reader.js';
import { NO_MOUNTS, type Mounter, type MountReader } from './mounts.js';
import { checkReadiness } from './readiness.js';
import { AGENT_MOUNT_ROOT, createSessions } from './sessions.js';
import { assertAttrs, assertContent, assertMemoryInput, assertMemoryPath, resolveExpiry } from '../validate/index.js';

/** Expired memories one sweep transaction deletes (each a version row and a delete). */
const EXPIRY_BATCH = 500;

export interface ServiceOptions {
  storage: Storage;
  clock?: () => string;
  ids?: IdGenerator;
  /**
   * Serves the sessions' mounts (fs/ in the server); it is told when a store is archived or deleted,
   * so live mounts turn read-only or go away. Default: a process that mounts nothing.
   */
  mounter?: Mounter;
  /** Where sessions are mounted on this host: <mountRoot>/<session id>/<slug> (MNEMO_MOUNT_ROOT). */
  mountRoot?: string;
  /** Lines about sessions and mounts (remounts, stale mounts cleared). */
  log?: (line: string) => void;
  /** How long idempotency receipts are kept (MNEMO_IDEMPOTENCY_TTL_SECONDS; default 24 h). */
  idempotencyTtlSeconds?: number;
  /** Largest checkpoint bundle accepted, in bytes (MNEMO_CHECKPOINT_MAX_BYTES; at most 1 MiB). */
  checkpointMaxBytes?: number;
  /** Memories and bytes per store, active sessions per workspace (src/service/limits.ts; defaults there). */
  limits?: Partial<StoreLimits>;
  /** Told of each memory write and search, for metrics; the composition root wires it (src/ knows no metrics library). */
  observer?: ServiceObserver;
  /** MNEMO_MOUNT_SYNC: when a mount's writes reach the disk (src/service/durability.ts; default fsync). */
  mountSync?: MountSync;
  /** Told when a background WAL sync fails (the server logs it); the next one tries again. */
  onSyncError?: (err: unknown) => void;
}

export interface ServiceObserver {
  /** A memory write returned: `versions` is how many versions it made (0 for a save that changed nothing). */
  wrote?(face: Face, versions: number): void;
  /** A search answered after `seconds`. */
  searched?(seconds: number): void;
}

/** Mounts write as their session and name no face; API keys are the API unless the MCP face says so. */
export function faceOf(caller: Caller): Face {
  return caller.face ?? (caller.actor.type === 'session_actor' ? 'mount' : 'api');
}

export function createService({
  storage,
  clock = () => new Date().toISOString(),
  ids = newId,
  mounter = NO_MOUNTS,
  mountRoot = AGENT_MOUNT_ROOT,
  log = () => {},
  idempotencyTtlSeconds,
  checkpointMaxBytes,
  limits: limitOptions = {},
  observer = {},
  mountSync = 'fsync',
  onSyncError,
}: ServiceOptions) {
  const audit = createAudit({ storage, clock, ids });
  const keys = createKeys(storage, clock, store, audit);
  const limits = createLimits(storage, { ...DEFAULT_LIMITS, ...limitOptions });
  const wrote = (caller: Caller, versions: number) => observer.wrote?.(faceOf(caller), versions);
  const search = createSearch({ storage, readable: store });
  const durability = createDurability({ storage, mountSync, ...(onSyncError ? { onError: onSyncError } : {}) });
  /** A memory write: a mount's is durable at fsync() (or at close() with MNEMO_MOUNT_SYNC=close), any other at commit. */
  const commit = <T>(caller: Caller, fn: () => T): T => durability.write(faceOf(caller), fn);

  function store(caller: Caller, id: string): Store {
    assertStoreGranted(caller, id);
    const s = storage.getStore(caller.workspaceId, id);
    if (!s) throw notFound('memory store', id);
    return s;
  }

  /**
   * The store, once the caller is known to have the right to change what is in it. Visibility comes
   * first: a store the caller cannot see is 404 whatever its role, so a 403 never reveals one.
   */
  function writable(caller: Caller, id: string): Store {
    const s = store(caller, id);
    assertAllowed(caller, 'write');
    return s;
  }

  /** chmod, utimens and chown through a mount: kept with the memory, no version (assertAttrs masks the mode). */
  function setAttrs(caller: Caller, storeId: string, memoryId: string, attrs: KeptAttrs): void {
    writable(caller, storeId);
    const checked = assertAttrs(attrs);
    commit(caller, () => storage.setMemoryAttrs(storeId, memoryId, checked, clock()));
  }

  function stamp(caller: Caller) {
    return { actor: caller.actor, now: clock(), versionId: ids('version') };
  }

  const local = createLocalSessions({ storage, ids, clock });
  const service = {
    clock,
    ids,
    keys,
    /** The log of admin actions (src/service/audit.ts): GET /v1/admin_actions and the console read it. */
    adminActions: { list: audit.list },
    /** Web console sign-ins (src/service/console-sessions.ts): in memory, checked against the key on every request. */
    consoleSessions: createConsoleSessions({ keys, clock, ids }),
    /** `mnemo mount`'s own sessions: recorded with its pid, ended when it stops or its process is gone. */
    localSessions: local,
    /** Idempotency-Key receipts, replayed to retries (src/service/idempotency.ts). */
    idempotency: createIdempotency({ storage, clock, ...(idempotencyTtlSeconds === undefined ? {} : { ttlSeconds: idempotencyTtlSeconds }) }),
    /** GET /readyz: the database answers and every active session's mounts are live. */
    readiness: () => checkReadiness(storage, mounter),
    /** Active sessions this server mounts (a gauge). */
    countMountedSessions: (): number => storage.listActiveSessions().length,
    /**
     * What the operator does from the host's command line (`mnemo keys`, `workspaces`, `check`): it
     * holds the database file, so no caller and no grant apply.
     */
    operator: {
      storeExists: (workspaceId: string, id: string): boolean => storage.getStore(workspaceId, id) !== null,
      listKeys: (workspaceId: string) => storage.listApiKeys(workspaceId),
      revokeKey: (workspaceId: string, id: string) => storage.revokeApiKey(workspaceId, id, clock()),
      listWorkspaces: () => storage.listWorkspaces(),
      /** SQLite's integrity check ("sqlite: …"), then the domain's invariants; empty when clean. */
      check: async (): Promise<string[]> => [...(await storage.integrityCheck()).map((p) => `sqlite: ${p}`), ...(await storage.domainCheck())],
    },
    /** One store's reads for a mount (src/service/mount-reader.ts): handed to the mounter with each mount. */
    mountReader: (storeId: string): MountReader => createMountReader(storage, storeId),
    /** Store and workspace limits; sessions ask it before a session is created. */
    limits,
    /** When writes reach the disk: `sync()` for a mount's fsync(), `stop()` at shutdown before the storage closes. */
    durability,
    /** Agent continuity: checkpoints with a latest pointer, and restores within a byte budget. */
    checkpoints: createCheckpoints({
      storage, clock, ids, readable: store, writable,
      ...(checkpointMaxBytes === undefined ? {} : { maxBundleBytes: checkpointMaxBytes }),
    }),
    async searchMemories(...args: Parameters<typeof search>): ReturnType<typeof search> {
      const started = performance.now();
      try {
        return await search(...args);
      } finally {
        observer.searched?.((performance.now() - started) / 1000);
      }
    },
    /** Deletes expired memories now rather than at their store's next write (the server runs it every minute). */
    async purgeExpiredMemories(): Promise<number> {
      // In bounded transactions, one per turn of the event loop: a mass expiry never stalls the mounts.
      const now = clock();
      let total = 0;
      for (;;) {
        const n = storage.purgeExpiredMemories(now, EXPIRY_BATCH);
        total += n;
        if (n < EXPIRY_BATCH) return total;
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
    /** Indexes up to `max` written memories for search; returns how many still wait (the server runs it every 200 ms). */
    indexSearchBacklog: (max: number): number => storage.indexSearchBacklog(max),

    // ------------------------------------------------------------ stores

    createStore(caller: Caller, input: NewStore): Store {
      assertMayCreateStores(caller);
      const now = clock();
      const s: Store = { id: ids('store'), workspaceId: caller.workspaceId, ...input, createdAt: now, updatedAt: now, archivedAt: null };
      storage.insertStore(s);
      return s;
    },
    getStore: store,
    /** How many memories a store holds and their bytes (the web console's store page): one indexed row. */
    async storeUsage(caller: Caller, id: string): Promise<{ memories: number; bytes: number }> {
      store(caller, id);
      return await storage.storeUsage(id);
    },
    async listStores(caller: Caller, q: StoreListQuery): Promise<Page<Store>> {
      return storage.listStores(caller.workspaceId, q, grantedStores(caller));
    },
    updateStore(caller: Caller, id: string, patch: StorePatch): Store {
      writable(caller, id);
      return storage.updateStore(caller.workspaceId, id, patch, clock());
    },
    archiveStore(caller: Caller, id: string): Store {
      const before = writable(caller, id);
      const archived = audit.within(caller, () => storage.archiveStore(caller.workspaceId, id, clock()), (s) =>
        before.archivedAt ? null : { action: 'memory_store.archived', targetId: id, storeId: id, summary: s.name });
      mounter.storeChanged(id, 'archived');
      return archived;
    },
    deleteStore(caller: Caller, id: string): void {
      const before = writable(caller, id);
      audit.within(caller, () => storage.deleteStore(caller.workspaceId, id), () => ({ action: 'memory_store.deleted', targetId: id, storeId: id, summary: before.name }));
      mounter.storeChanged(id, 'deleted');
    },

    // ------------------------------------------------------------ memories

    createMemory(caller: Caller, storeId: string, input: { path: string; content: string; mode?: number; expiry?: Expiry }): Memory {
      writable(caller, storeId);
      const { path, content } = assertMemoryInput(input);
      limits.assertStoreRoom(storeId, byteLength(content), () => null);
      const s = stamp(caller);
      const expiresAt = resolveExpiry(input.expiry, s.now);
      const created = commit(caller, () => storage.createMemory({
        ...s,
        storeId,
        memoryId: ids('memory'),
        path,
        content,
        ...(input.mode === undefined ? {} : { mode: input.mode }),
        ...(expiresAt == null ? {} : { expiresAt }),
      }));
      wrote(caller, 1);
      return created;
    },
    getMemory(caller: Caller, storeId: string, memoryId: string): Memory {
      store(caller, storeId);
      const m = storage.getMemory(storeId, memoryId);
      if (!m) throw notFound('memory', memoryId);
      return m;
    },
    /** The live memory at `path`, after the caller's read check on the store (MCP reads by path). */
    getMemoryByPath(caller: Caller, storeId: string, path: string): Memory | null {
      store(caller, storeId);
      return storage.getMemoryByPath(storeId, path);
    },
    async listMemories(caller: Caller, storeId: string, q: MemoryListQuery): Promise<Page<MemoryListItem>> {
      store(caller, storeId);
      return storage.listMemories(storeId, q);
    },
    /** `attrs`: what a mount's save keeps beside the content (its times and owner); the API passes none. */
    updateMemory(caller: Caller, storeId: string, memoryId: string, write: MemoryWrite, attrs?: KeptAttrs): Memory {
      writable(caller, storeId);
      assertMemoryInput(write);
      if (write.content !== undefined) {
        limits.assertStoreRoom(storeId, byteLength(write.content), () => storage.getMemory(storeId, memoryId) ?? { contentSizeBytes: 0 });
      }
      const { expiry, ...rest } = write;
      const s = stamp(caller);
      const expiresAt = resolveExpiry(expiry, s.now);
      const result = commit(caller, () =>
        storage.updateMemory({
          ...s, storeId, memoryId, ...rest,
          ...(expiresAt === undefined ? {} : { expiresAt }),
          ...(attrs === undefined ? {} : { attrs: assertAttrs(attrs) }),
        }),
      );
      wrote(caller, result.changed ? 1 : 0);
      return result.memory;
    },
    deleteMemory(caller: Caller, storeId: string, memoryId: string, expectedSha256?: string): void {
      writable(caller, storeId);
      const input = { ...stamp(caller), storeId, memoryId, ...(expectedSha256 === undefined ? {} : { expectedSha256 }) };
      commit(caller, () => storage.deleteMemory(input));
      wrote(caller, 1);
    },

    // ------------------------------------------------------------ mount saves (fs/)

    /** Create-or-update by path: a save through a mount; `memoryId` names the memory if the path is free. */
    saveMemoryAt(
      caller: Caller,
      storeId: string,
      input: { path: string; content: string; memoryId: string; mode?: number; attrs?: KeptAttrs },
    ): WriteResult {
      writable(caller, storeId);
      const path = assertMemoryPath(input.path);
      const content = assertContent(input.content);
      limits.assertStoreRoom(storeId, byteLength(content), () => storage.getMemoryMetaByPath(storeId, path));
      const save = {
        ...stamp(caller),
        storeId,
        memoryId: input.memoryId,
        path,
        content,
        ...(input.mode === undefined ? {} : { mode: input.mode }),
        ...(input.attrs === undefined ? {} : { attrs: assertAttrs(input.attrs) }),
      };
      const result = commit(caller, () => storage.saveMemoryAt(save));
      wrote(caller, result.changed ? 1 : 0);
      return result;
    },
    /** Renames a memory, replacing (deleting) one already at `path`, in one transaction. */
    moveMemory(caller: Caller, storeId: string, memoryId: string, path: string): Memory {
      writable(caller, storeId);
      const move = { ...stamp(caller), storeId, memoryId, path: assertMemoryPath(path), replacedVersionId: ids('version') };
      const moved = commit(caller, () => storage.moveMemory(move));
      wrote(caller, 1);
      return moved;
    },
    /** Renames a directory: every memory below `from` moves below `to`, in one transaction. */
    moveTree(caller: Caller, storeId: string, from: string, to: string): number {
      writable(caller, storeId);
      assertMemoryPath(from, 'from');
      assertMemoryPath(to, 'to');
      if (to === from || to.startsWith(from + '/')) {
        throw new MnemoError('invalid_request', `cannot move ${from} into itself (${to})`);
      }
      const moved = commit(caller, () => storage.moveTree({ storeId, from, to, actor: caller.actor, now: clock(), versionIds: () => ids('version') }));
      wrote(caller, moved);
      return moved;
    },
    /** chmod through a mount: kept with the memory, no version; the ctime moves. */
    setMemoryMode(caller: Caller, storeId: string, memoryId: string, mode: number): void {
      setAttrs(caller, storeId, memoryId, { mode });
    },
    /** utimens through a mount: each time given is set (ms since the epoch), no version; the ctime moves. */
    setMemoryTimes(caller: Caller, storeId: string, memoryId: string, times: { atimeMs?: number; mtimeMs?: number }): void {
      setAttrs(caller, storeId, memoryId, given(times));
    },
    /** chown through a mount: each id given is kept, no version; the ctime moves. */
    setMemoryOwner(caller: Caller, storeId: string, memoryId: string, owner: { uid?: number; gid?: number }): void {
      setAttrs(caller, storeId, memoryId, given(owner));
    },

    // ------------------------------------------------------------ versions

    getVersion(caller: Caller, storeId: string, versionId: string): MemoryVersion {
      store(caller, storeId);
      const v = storage.getVersion(storeId, versionId);
      if (!v) throw notFound('memory version', versionId);
      return v;
    },
    async listVersions(caller: Caller, storeId: string, q: VersionListQuery): Promise<Page<MemoryVersion>> {
      store(caller, storeId);
      return storage.listVersions(storeId, q);
    },
    redactVersion(caller: Caller, storeId: string, versionId: string): MemoryVersion {
      store(caller, storeId);
      assertAllowed(caller, 'redact');
      const before = storage.getVersion(storeId, versionId);
      return audit.within(caller, () => storage.redactVersion(storeId, versionId, caller.actor, clock()), (v) =>
        before?.redactedAt ? null : { action: 'memory_version.redacted', targetId: v.id, storeId, summary: `${v.operation} version of memory ${v.memoryId}` });
    },
  };
  const sessions = createSessions({
    storage, getStore: store, ids, clock, limits, local, mounter, mountService: service, mountRoot, log, audit,
  });
  /** Mount sessions (src/service/sessions.ts): created, listed and ended here, mounted through `mounter`. */
  return { ...service, sessions };
}

export type Service = ReturnType<typeof createService>;

/** The fields of `o` that were given: with exactOptionalPropertyTypes, an absent time or id must not arrive as `undefined`. */
function given<T extends object>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}
