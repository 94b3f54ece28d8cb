/** @module The store service: the one entry point both faces call for stores, memories and versions. */
import { MnemoError, notFound } from './errors.js';
import { newId, type IdGenerator } from './ids.js';
import { createKeys } from './keys.js';
import { assertMemoryPath } from './paths.js';
import type { Storage } from './storage/port.js';
import type {
  Caller,
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
} from './types.js';
import { assertContent } from './validate.js';

export interface ServiceOptions {
  storage: Storage;
  clock?: () => string;
  ids?: IdGenerator;
  /** Told when a store is archived or deleted, so live mounts can turn read-only or go away. */
  onStoreChanged?: (storeId: string, change: 'archived' | 'deleted') => void;
}

export function createService({
  storage,
  clock = () => new Date().toISOString(),
  ids = newId,
  onStoreChanged = () => {},
}: ServiceOptions) {
  const keys = createKeys(storage, clock);

  function store(caller: Caller, id: string): Store {
    const s = storage.getStore(caller.workspaceId, id);
    if (!s) throw notFound('memory store', id);
    return s;
  }

  function stamp(caller: Caller) {
    return { actor: caller.actor, now: clock(), versionId: ids('version') };
  }

  return {
    storage,
    clock,
    ids,
    keys,

    // ------------------------------------------------------------ stores

    createStore(caller: Caller, input: NewStore): Store {
      const now = clock();
      const s: Store = { id: ids('store'), workspaceId: caller.workspaceId, ...input, createdAt: now, updatedAt: now, archivedAt: null };
      storage.insertStore(s);
      return s;
    },
    getStore: store,
    listStores(caller: Caller, q: StoreListQuery): Page<Store> {
      return storage.listStores(caller.workspaceId, q);
    },
    updateStore(caller: Caller, id: string, patch: StorePatch): Store {
      return storage.updateStore(caller.workspaceId, id, patch, clock());
    },
    archiveStore(caller: Caller, id: string): Store {
      const archived = storage.archiveStore(caller.workspaceId, id, clock());
      onStoreChanged(id, 'archived');
      return archived;
    },
    deleteStore(caller: Caller, id: string): void {
      storage.deleteStore(caller.workspaceId, id);
      onStoreChanged(id, 'deleted');
    },

    // ------------------------------------------------------------ memories

    createMemory(caller: Caller, storeId: string, input: { path: string; content: string; mode?: number }): Memory {
      store(caller, storeId);
      return storage.createMemory({
        ...stamp(caller),
        storeId,
        memoryId: ids('memory'),
        path: assertMemoryPath(input.path),
        content: assertContent(input.content),
        ...(input.mode === undefined ? {} : { mode: input.mode }),
      });
    },
    getMemory(caller: Caller, storeId: string, memoryId: string): Memory {
      store(caller, storeId);
      const m = storage.getMemory(storeId, memoryId);
      if (!m) throw notFound('memory', memoryId);
      return m;
    },
    listMemories(caller: Caller, storeId: string, q: MemoryListQuery): Page<MemoryListItem> {
      store(caller, storeId);
      return storage.listMemories(storeId, q);
    },
    updateMemory(caller: Caller, storeId: string, memoryId: string, write: MemoryWrite): Memory {
      store(caller, storeId);
      if (write.path !== undefined) assertMemoryPath(write.path);
      if (write.content !== undefined) assertContent(write.content);
      return storage.updateMemory({ ...stamp(caller), storeId, memoryId, ...write }).memory;
    },
    deleteMemory(caller: Caller, storeId: string, memoryId: string, expectedSha256?: string): void {
      store(caller, storeId);
      storage.deleteMemory({
        ...stamp(caller),
        storeId,
        memoryId,
        ...(expectedSha256 === undefined ? {} : { expectedSha256 }),
      });
    },

    // ------------------------------------------------------------ versions

    getVersion(caller: Caller, storeId: string, versionId: string): MemoryVersion {
      store(caller, storeId);
      const v = storage.getVersion(storeId, versionId);
      if (!v) throw notFound('memory version', versionId);
      return v;
    },
    listVersions(caller: Caller, storeId: string, q: VersionListQuery): Page<MemoryVersion> {
      store(caller, storeId);
      return storage.listVersions(storeId, q);
    },
    redactVersion(caller: Caller, storeId: string, versionId: string): MemoryVersion {
      store(caller, storeId);
      if (caller.actor.type === 'session_actor') {
        throw new MnemoError('forbidden', 'agents cannot redact memory versions');
      }
      return storage.redactVersion(storeId, versionId, caller.actor, clock());
    },
  };
}

export type Service = ReturnType<typeof createService>;
