/**
 * @module The service's operations on stores, memories, versions and checkpoints, with their rules,
 * built over one storage: the outer port for a call of its own, or a transaction's `tx` when the
 * call must commit with something else (an idempotency receipt; a group commit of API writes). Every
 * storage call of an operation goes through that storage, so inside a transaction nothing waits
 * for the transaction itself. Building them is closures only, and `operationsOver` keeps one set
 * per storage object (the SQLite adapter's `tx` is one object), so a transaction pays nothing.
 */
import { assertAllowed, assertMayCreateStores, assertStoreGranted, grantedStores } from '../domain/access.js';
import { byteLength } from '../domain/content.js';
import { MnemoError, notFound } from '../domain/errors.js';
import { bindPage, scopeTag, unbindPage } from '../domain/page-scope.js';
import { createCheckpoints } from './checkpoints.js';
import type { Audit } from './audit.js';
import type { Durability } from './durability.js';
import type { IdGenerator } from './ids.js';
import { writeAdmission, type WriteRoom } from './admission.js';
import { eraseSearchRemnants } from './erasure.js';
import { createLimits, type StoreLimits } from './limits.js';
import type { AppendWrite, Mounter, SaveAtInput } from './mounts.js';
import type { Admission, JournaledWrite, Storage, WriteResult } from '../storage/port.js';
import type {
  Actor,
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
import { assertAttrs, assertContent, assertMemoryInput, assertMemoryPath, parseSha256, resolveExpiry } from '../validate/index.js';

/** What the operations need besides storage: the same for every storage they are built over. */
export interface OperationDeps {
  clock: () => string;
  ids: IdGenerator;
  limits: StoreLimits;
  mounter: Pick<Mounter, 'storeChanged' | 'versionRedacted'>;
  durability: Pick<Durability, 'write'>;
  wrote: (caller: Caller, versions: number) => void;
  /** The log of admin actions: archiving, deleting and redacting are recorded in their transaction. */
  audit: Pick<Audit, 'within'>;
  /** Told after each memory write of a store has returned (the change feed's followers wake: service/commit-signal.ts). */
  committed?: (storeId: string, actor: Actor) => void;
  checkpointMaxBytes?: number;
}

/** Mounts write as their session and name no face; API keys are the API unless the MCP face says so. */
export function faceOf(caller: Caller): Face {
  return caller.face ?? (caller.actor.type === 'session_actor' ? 'mount' : 'api');
}

export function createOperations(storage: Storage, deps: OperationDeps) {
  const { clock, ids, mounter, durability, wrote, audit } = deps;
  const limits = createLimits(storage, deps.limits);
  /**
   * A memory write: a mount's is durable at fsync() (or at close() with MNEMO_MOUNT_SYNC=close), any
   * other at commit. The change feed's followers hear of it once it has returned (inside a group
   * commit that is just before the commit; the group tells them again once it has committed:
   * src/service/idempotency.ts).
   */
  const commit = async <T>(caller: Caller, storeId: string, fn: (s: Storage) => Promise<T>, journal?: JournaledWrite, durable = false): Promise<T> => {
    const result = await durability.write(storage, faceOf(caller), fn, journal, durable);
    deps.committed?.(storeId, caller.actor);
    return result;
  };

  async function store(caller: Caller, id: string): Promise<Store> {
    assertStoreGranted(caller, id);
    const s = await storage.getStore(caller.workspaceId, id);
    if (!s) throw notFound('memory store', id);
    return s;
  }

  /**
   * The store, once the caller is known to have the right to change what is in it. Visibility comes
   * first: a store the caller cannot see is 404 whatever its role, so a 403 never reveals one.
   */
  async function writable(caller: Caller, id: string): Promise<Store> {
    const s = await store(caller, id);
    assertAllowed(caller, 'write');
    return s;
  }

  /** The write's admission (service/admission.ts): its checks run on what the write finds, in its own first round trip. */
  const admission = (caller: Caller, storeId: string, room: WriteRoom | null): Admission =>
    writeAdmission(deps.limits, caller, storeId, room);

  /** chmod, utimens and chown through a mount: kept with the memory, no version (assertAttrs masks the mode). */
  async function setAttrs(caller: Caller, storeId: string, memoryId: string, attrs: KeptAttrs): Promise<void> {
    const checked = assertAttrs(attrs);
    // Checked as `writable` does, on what the write finds: attributes take no room.
    const admitted = admission(caller, storeId, null);
    await commit(caller, storeId, (s) => s.setMemoryAttrs(storeId, memoryId, checked, clock(), admitted));
  }

  function stamp(caller: Caller) {
    return { actor: caller.actor, now: clock(), versionId: ids('version') };
  }

  return {
    /** The store a caller may see (404 otherwise). */
    getStore: store,
    writable,
    limits,
    /** Agent continuity: checkpoints with a latest pointer, and restores within a byte budget. */
    checkpoints: createCheckpoints({
      storage, clock, ids, readable: store, writable, limits: deps.limits,
      ...(deps.checkpointMaxBytes === undefined ? {} : { maxBundleBytes: deps.checkpointMaxBytes }),
    }),

    // ------------------------------------------------------------ stores

    async createStore(caller: Caller, input: NewStore): Promise<Store> {
      assertMayCreateStores(caller);
      const now = clock();
      const s: Store = { id: ids('store'), workspaceId: caller.workspaceId, ...input, createdAt: now, updatedAt: now, archivedAt: null };
      await storage.insertStore(s);
      return s;
    },
    async listStores(caller: Caller, q: StoreListQuery): Promise<Page<Store>> {
      const tag = scopeTag('stores', caller.workspaceId, q.includeArchived, q.createdGte, q.createdLte);
      return bindPage(storage.pageKey(), await storage.listStores(caller.workspaceId, { ...q, page: unbindPage(storage.pageKey(), q.page, tag) }, grantedStores(caller)), tag);
    },
    async updateStore(caller: Caller, id: string, patch: StorePatch): Promise<Store> {
      await writable(caller, id);
      return storage.updateStore(caller.workspaceId, id, patch, clock());
    },
    /**
     * How many memories a store holds and its bytes, checkpoints included as the byte limit counts them,
     * and its memories' bytes alone (the web console's store page), as every reader sees them: expired
     * memories the sweep has not deleted yet are left out (one indexed row, less the expired rows found
     * through the expiry index).
     */
    async storeUsage(caller: Caller, id: string): Promise<{ memories: number; bytes: number; memoryBytes: number }> {
      await store(caller, id);
      return await storage.liveStoreUsage(id);
    },
    async archiveStore(caller: Caller, id: string): Promise<Store> {
      const before = await writable(caller, id);
      const archived = await audit.within(storage, caller, (tx) => tx.archiveStore(caller.workspaceId, id, clock()), (s) =>
        before.archivedAt ? null : { action: 'memory_store.archived', targetId: id, storeId: id, summary: s.name });
      mounter.storeChanged(id, 'archived');
      return archived;
    },
    async deleteStore(caller: Caller, id: string): Promise<void> {
      const before = await writable(caller, id);
      await audit.within(storage, caller, (tx) => tx.deleteStore(caller.workspaceId, id), () =>
        ({ action: 'memory_store.deleted', targetId: id, storeId: id, summary: before.name }));
      mounter.storeChanged(id, 'deleted');
    },

    // ------------------------------------------------------------ memories

    async createMemory(caller: Caller, storeId: string, input: { path: string; content: string; mode?: number; expiry?: Expiry }): Promise<Memory> {
      const { path, content } = assertMemoryInput(input);
      const admitted = admission(caller, storeId, { newBytes: byteLength(content), replaces: 'nothing' });
      const s = stamp(caller);
      const expiresAt = resolveExpiry(input.expiry, s.now);
      const created = await commit(caller, storeId, (st) => st.createMemory({
        ...s,
        admission: admitted,
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
    async getMemory(caller: Caller, storeId: string, memoryId: string): Promise<Memory> {
      assertStoreGranted(caller, storeId);
      // The store and the memory in one lookup (one round trip on PostgreSQL), checked as `store` does.
      const { storeFound, memory: m } = await storage.getMemoryInStore(caller.workspaceId, storeId, memoryId);
      if (!storeFound) throw notFound('memory store', storeId);
      if (!m) throw notFound('memory', memoryId);
      return m;
    },
    /**
     * The live memory at `path`, after the caller's read check on the store (MCP reads by path). A
     * path that can never name a memory is refused as a write refuses it, not looked up.
     */
    async getMemoryByPath(caller: Caller, storeId: string, path: string): Promise<Memory | null> {
      assertMemoryPath(path);
      await store(caller, storeId);
      return storage.getMemoryByPath(storeId, path);
    },
    /**
     * The live memory at `path` for a write addressed by path (MCP write, edit, rename, delete). The
     * right to write is checked before the path is looked up, as a write by id checks it before its
     * memory: a read_only key is refused `forbidden` whether or not the path holds a memory.
     */
    async getMemoryToWrite(caller: Caller, storeId: string, path: string): Promise<Memory | null> {
      assertMemoryPath(path);
      await writable(caller, storeId);
      return storage.getMemoryByPath(storeId, path);
    },
    async listMemories(caller: Caller, storeId: string, q: MemoryListQuery): Promise<Page<MemoryListItem>> {
      await store(caller, storeId);
      const tag = scopeTag('memories', storeId, q.pathPrefix, q.depth);
      return bindPage(storage.pageKey(), await storage.listMemories(storeId, { ...q, page: unbindPage(storage.pageKey(), q.page, tag) }), tag);
    },
    /**
     * `attrs`: what a mount's save keeps beside the content (its times and owner); the API passes none.
     * `durable`: a mount's save fsync() asked for (SaveAtInput.durable).
     */
    async updateMemory(caller: Caller, storeId: string, memoryId: string, write: MemoryWrite, attrs?: KeptAttrs, durable = false): Promise<Memory> {
      assertMemoryInput(write);
      const admitted = admission(caller, storeId, write.content === undefined ? null : { newBytes: byteLength(write.content), replaces: 'target' });
      const { expiry, ...rest } = write;
      const s = stamp(caller);
      const expiresAt = resolveExpiry(expiry, s.now);
      const update = {
        ...s, storeId, memoryId, ...rest,
        ...(expiresAt === undefined ? {} : { expiresAt }),
        ...(attrs === undefined ? {} : { attrs: assertAttrs(attrs) }),
      };
      // The journal keeps the write as data, without the admission: a replay is of a write already admitted.
      const result = await commit(caller, storeId, (st) => st.updateMemory({ ...update, admission: admitted }), { method: 'updateMemory', input: update }, durable);
      wrote(caller, result.changed ? 1 : 0);
      return result.memory;
    },
    /**
     * A mount's save of a file only appended to since it was read: `content` is the text whose sha is
     * `onto` with `appended` after it. If another writer's save landed first, the write holds the
     * memory's newest text with `appended` after it, decided under the store's lock (port
     * `UpdateMemoryInput.appended`): it never fails for that, so appends from any number of sessions
     * are all kept, each once, and none retries.
     */
    async appendToMemory(caller: Caller, storeId: string, memoryId: string, write: AppendWrite, attrs?: KeptAttrs, durable = false): Promise<Memory> {
      const content = assertContent(write.content);
      const onto = parseSha256(write.onto, 'onto');
      if (!content.endsWith(write.appended)) throw new MnemoError('invalid_request', 'appended: must be the end of content', { field: 'appended' });
      const admitted = admission(caller, storeId, { newBytes: byteLength(content), replaces: 'target', appended: byteLength(write.appended) });
      const update = {
        ...stamp(caller), storeId, memoryId, content, expectedSha256: onto, appended: write.appended,
        ...(attrs === undefined ? {} : { attrs: assertAttrs(attrs) }),
      };
      // The journal keeps the write as data, without the admission: a replay is of a write already admitted.
      const result = await commit(caller, storeId, (st) => st.updateMemory({ ...update, admission: admitted }), { method: 'updateMemory', input: update }, durable);
      wrote(caller, result.changed ? 1 : 0);
      return result.memory;
    },
    async deleteMemory(caller: Caller, storeId: string, memoryId: string, expectedSha256?: string): Promise<void> {
      const input = { ...stamp(caller), storeId, memoryId, ...(expectedSha256 === undefined ? {} : { expectedSha256 }) };
      const admitted = admission(caller, storeId, null);
      await commit(caller, storeId, (s) => s.deleteMemory({ ...input, admission: admitted }), { method: 'deleteMemory', input });
      wrote(caller, 1);
    },

    // ------------------------------------------------------------ mount saves (fs/)

    /** Create-or-update by path: a save through a mount; `memoryId` names the memory if the path is free. */
    async saveMemoryAt(
      caller: Caller,
      storeId: string,
      input: SaveAtInput,
    ): Promise<WriteResult> {
      const path = assertMemoryPath(input.path);
      const content = assertContent(input.content);
      // The save replaces the memory it finds at the path, or adds one: the limits see which (service/admission.ts).
      const admitted = admission(caller, storeId, { newBytes: byteLength(content), replaces: 'found' });
      const save = {
        ...stamp(caller),
        storeId,
        memoryId: input.memoryId,
        path,
        content,
        ...(input.mode === undefined ? {} : { mode: input.mode }),
        ...(input.attrs === undefined ? {} : { attrs: assertAttrs(input.attrs) }),
        ...(input.adds ? { adds: true } : {}),
      };
      // The journal keeps the write as data, without the admission: a replay is of a write already admitted.
      const result = await commit(caller, storeId, (s) => s.saveMemoryAt({ ...save, admission: admitted }), { method: 'saveMemoryAt', input: save }, input.durable);
      wrote(caller, result.changed ? 1 : 0);
      return result;
    },
    /** Renames a memory, replacing (deleting) one already at `path`, in one transaction. */
    async moveMemory(caller: Caller, storeId: string, memoryId: string, path: string): Promise<Memory> {
      const move = { ...stamp(caller), storeId, memoryId, path: assertMemoryPath(path), replacedVersionId: ids('version') };
      const admitted = admission(caller, storeId, null);
      const moved = await commit(caller, storeId, (s) => s.moveMemory({ ...move, admission: admitted }), { method: 'moveMemory', input: move });
      wrote(caller, 1);
      return moved;
    },
    /**
     * Renames a directory: every memory below `from` moves below `to`, in one transaction. Durable at
     * commit in every mode, so that it is the port's own call and not a relaxed `atomic` around it:
     * on SQLite the port makes it on another connection, off the serving thread (sqlite/readers.ts).
     */
    async moveTree(caller: Caller, storeId: string, from: string, to: string): Promise<number> {
      await writable(caller, storeId);
      assertMoveTree(from, to);
      const input = { storeId, from, to, actor: caller.actor, now: clock(), versionIds: () => ids('version') };
      const moved = await commit(caller, storeId, (s) => s.moveTree(input), undefined, true);
      wrote(caller, moved);
      return moved;
    },
    /** chmod through a mount: kept with the memory, no version; the ctime moves. */
    async setMemoryMode(caller: Caller, storeId: string, memoryId: string, mode: number): Promise<void> {
      await setAttrs(caller, storeId, memoryId, { mode });
    },
    /** utimens through a mount: each time given is set (ms since the epoch), no version; the ctime moves. */
    async setMemoryTimes(caller: Caller, storeId: string, memoryId: string, times: { atimeMs?: number; mtimeMs?: number }): Promise<void> {
      await setAttrs(caller, storeId, memoryId, given(times));
    },
    /** chown through a mount: each id given is kept, no version; the ctime moves. */
    async setMemoryOwner(caller: Caller, storeId: string, memoryId: string, owner: { uid?: number; gid?: number }): Promise<void> {
      await setAttrs(caller, storeId, memoryId, given(owner));
    },
    /** A mode, times and owner together (what a mount held for a file set aside): each given is kept, no version; the ctime moves. */
    async setMemoryAttrs(caller: Caller, storeId: string, memoryId: string, attrs: KeptAttrs): Promise<void> {
      await setAttrs(caller, storeId, memoryId, given(attrs));
    },

    // ------------------------------------------------------------ versions

    async getVersion(caller: Caller, storeId: string, versionId: string): Promise<MemoryVersion> {
      await store(caller, storeId);
      const v = await storage.getVersion(storeId, versionId);
      if (!v) throw notFound('memory version', versionId);
      return v;
    },
    async listVersions(caller: Caller, storeId: string, q: VersionListQuery): Promise<Page<MemoryVersion>> {
      await store(caller, storeId);
      const tag = scopeTag('versions', storeId, q.memoryId, q.operation, q.sessionId, q.apiKeyId, q.serviceAccountId, q.createdGte, q.createdLte);
      return bindPage(storage.pageKey(), await storage.listVersions(storeId, { ...q, page: unbindPage(storage.pageKey(), q.page, tag) }), tag);
    },
    async redactVersion(caller: Caller, storeId: string, versionId: string): Promise<MemoryVersion> {
      await store(caller, storeId);
      assertAllowed(caller, 'redact');
      const before = await storage.getVersion(storeId, versionId);
      const v = await audit.within(storage, caller, (tx) => tx.redactVersion(storeId, versionId, caller.actor, clock()), (v) =>
        before?.redactedAt ? null : { action: 'memory_version.redacted', targetId: v.id, storeId, summary: `${v.operation} version of memory ${v.memoryId}` });
      // The redacted text's words that re-indexing left in the search index's pages leave the file too.
      await eraseSearchRemnants(storage);
      // Redacted bytes leave every place mnemo keeps them: the mounts' caches in this process too.
      if (v.erased) mounter.versionRedacted?.(storeId, v.id, v.erased.gone ? v.erased.sha256 : null);
      // The faces ask the service's textHolders how many versions still hold the erased text, and
      // which, once this has committed: not here, where this may still be inside a transaction.
      return v;
    },
  };
}

export type Operations = ReturnType<typeof createOperations>;

/** One set of operations per storage object, made on first use (closures; no I/O). */
export function operationsCache(deps: OperationDeps): (storage: Storage) => Operations {
  const made = new WeakMap<Storage, Operations>();
  return (storage) => {
    let ops = made.get(storage);
    if (!ops) {
      ops = createOperations(storage, deps);
      made.set(storage, ops);
    }
    return ops;
  };
}

/** A directory rename's paths: valid, and not into itself. */
export function assertMoveTree(from: string, to: string): void {
  assertMemoryPath(from, 'from');
  assertMemoryPath(to, 'to');
  if (to === from || to.startsWith(from + '/')) {
    throw new MnemoError('invalid_request', `cannot move ${from} into itself (${to})`);
  }
}

/** The fields of `o` that were given: with exactOptionalPropertyTypes, an absent time or id must not arrive as `undefined`. */
export function given<T extends object>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}
