/** @module The store service: the one entry point both faces call for stores, memories and versions. */
import { createAudit } from './audit.js';
import { createConsoleSessions } from './console-sessions.js';
import { createDurability, type MountSync } from './durability.js';
import { MnemoError, notFound } from '../domain/errors.js';
import { newId, type IdGenerator } from './ids.js';
import { createKeys } from './keys.js';
import { DEFAULT_LIMITS, type StoreLimits } from './limits.js';
import type { Storage } from '../storage/port.js';
import type { Actor, Caller, Face } from '../domain/types.js';
import type { LineDiff } from '../domain/line-diff.js';
import { retentionCutoff } from '../domain/store-rules.js';
import { createCommitSignal, type CommitListener } from './commit-signal.js';
import { createDiffs } from './diffs.js';
import { createDiffThread } from './diff-thread.js';
import { createEdit } from './edits.js';
import { createWrite } from './writes.js';
import { eraseSearchRemnants } from './erasure.js';
import { createFeed, type Every } from './feed.js';
import { createForks, type ForksOptions } from './forks.js';
import { createSearch } from './search.js';
import { createIdempotency } from './idempotency.js';
import { createLocalSessions, type LocalMountLocks } from './local-sessions.js';
import { createMountReader } from './mount-reader.js';
import { NO_MOUNTS, type Mounter, type MountReader, type MountService } from './mounts.js';
import { faceOf, operationsCache, type Operations } from './operations.js';
import { checkReadiness } from './readiness.js';
import { createTextHolders } from './text-holders.js';
import { ownSession } from '../domain/nodes.js';
import { AGENT_MOUNT_ROOT, createSessions } from './sessions.js';

/** Expired memories one sweep transaction deletes (each a version row and a delete). */
const EXPIRY_BATCH = 500;
/**
 * Retention's batches (sqlite/retention.ts): versions one transaction looks at and prunes at most,
 * and windows per store per sweep, so one sweep costs the same whatever the store's size; a long
 * history is walked over several sweeps.
 */
const PRUNE = { scan: 2000, max: 500, windowsPerSweep: 20 } as const;

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
  /**
   * This host among the servers sharing the database (MNEMO_NODE_ID): sessions made here record
   * it, and only this node's sessions are remounted (or ended as stale) here. Default: none, a
   * process that serves every session it finds (one host, as on SQLite before node ids).
   */
  nodeId?: string | null;
  /**
   * This server is the only one on its database (SQLite: one server per data directory), so every
   * active session is its to mount whatever node recorded it (a new hostname, a new container).
   */
  soleServer?: boolean;
  /**
   * `mnemo mount` on SQLite: the database is this host's alone, though not this process's, so a
   * `mnemo mount` session of another node id is checked here too (local-sessions.ts). Implied by soleServer.
   */
  oneHost?: boolean;
  /** The `mnemo mount` processes' locks in this data directory, one per session (SQLite; local-sessions.ts). */
  localMountLocks?: LocalMountLocks;
  /** Lines about sessions and mounts (remounts, stale mounts cleared). */
  log?: (line: string) => void;
  /** How long idempotency receipts are kept (MNEMO_IDEMPOTENCY_TTL_SECONDS; default 24 h). */
  idempotencyTtlSeconds?: number;
  /** Largest checkpoint bundle accepted, in bytes (MNEMO_CHECKPOINT_MAX_BYTES; at most 1 MiB). */
  checkpointMaxBytes?: number;
  /** Memories and bytes per store, active sessions and feed streams per workspace (src/service/limits.ts; defaults there). */
  limits?: Partial<StoreLimits>;
  /** Told of each memory write and search, for metrics; the composition root wires it (src/ knows no metrics library). */
  observer?: ServiceObserver;
  /** MNEMO_MOUNT_SYNC: when a mount's writes reach the disk (src/service/durability.ts; default fsync). */
  mountSync?: MountSync;
  /** Told when a background WAL sync fails (the server logs it); the next one tries again. */
  onSyncError?: (err: unknown) => void;
  /** The background WAL sync's timer (durability.ts; tests that must hold commits back move it). */
  syncSchedule?: (fn: () => void, ms: number) => () => void;
  /** The change feed's followers: how often they look for other processes' commits, and their timer (tests). */
  feed?: { pollMs?: number; every?: Every };
  /**
   * Fork builds (forks.ts): `yieldTurn`, the turn a build gives other work between its batches (and
   * the sweep of abandoned forks between its deletions); default a macrotask. Tests hold a build
   * there, between two batches, to act on it at a known point.
   */
  forks?: Pick<ForksOptions, 'yieldTurn'>;
}

export interface ServiceObserver {
  /** A memory write returned: `versions` is how many versions it made (0 for a save that changed nothing). */
  wrote?(face: Face, versions: number): void;
  /** A search answered after `seconds`. */
  searched?(seconds: number): void;
}

export { faceOf };

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
  syncSchedule,
  feed: feedOptions = {},
  forks: forkOptions = {},
  nodeId = null,
  soleServer = false,
  oneHost = false,
  localMountLocks,
}: ServiceOptions) {
  /** The node whose sessions this process serves (null: every one). */
  const servedNode = soleServer ? null : nodeId;
  const storeLimits: StoreLimits = { ...DEFAULT_LIMITS, ...limitOptions };
  const wrote = (caller: Caller, versions: number) => observer.wrote?.(faceOf(caller), versions);
  const durability = createDurability({
    storage, mountSync, ...(onSyncError ? { onError: onSyncError } : {}), ...(syncSchedule ? { schedule: syncSchedule } : {}),
  });
  const commits = createCommitSignal();
  const audit = createAudit({ storage, clock, ids });
  /** The operations over a storage: the outer port here, a transaction's `tx` for receipts and group commits. */
  const over = operationsCache({
    clock, ids, limits: storeLimits, mounter, durability, wrote, audit, committed: (storeId: string, actor: Actor) => commits.notify(storeId, actor),
    ...(checkpointMaxBytes === undefined ? {} : { checkpointMaxBytes }),
  });
  const ops = over(storage);
  // A revoked key's sessions end with it (and their mounts): `sessions` is made below, before any call.
  const keys = createKeys(storage, clock, ops.getStore, audit, (caller, key) => sessions.endSessionsOfKey(caller, key.id));
  const search = createSearch({ storage, readable: ops.getStore });
  const existingWorkspace = async (id: string): Promise<void> => {
    if (!(await storage.getWorkspace(id))) throw notFound('workspace', id);
  };

  const local = createLocalSessions({ storage, ids, clock, nodeId, oneHost: soleServer || oneHost, ...(localMountLocks ? { locks: localMountLocks } : {}) });
  /** Where each store's retention walk goes on at the next sweep (commit numbers; from 0 after a restart). */
  const pruneCursors = new Map<string, number>();
  const feed = createFeed({ storage, readable: ops.getStore, current: keys.current, signal: commits, maxStreams: storeLimits.maxFeedStreams, ...feedOptions });
  const forks = createForks({ storage, clock, ids, readable: ops.getStore, limits: storeLimits, relaxed: durability.relaxed, ...forkOptions });
  const diffThread = createDiffThread();
  const service = {
    clock,
    ids,
    keys,
    /** The log of admin actions (src/service/audit.ts): GET /v1/admin_actions and the console read it. */
    adminActions: { list: audit.list },
    /** Web console sign-ins (src/service/console-sessions.ts): in the database, checked against the key on every request. */
    consoleSessions: createConsoleSessions({ storage, keys, clock, ids }),
    /** `mnemo mount`'s own sessions: recorded with its pid, ended when it stops or its process is gone. */
    localSessions: local,
    /** Idempotency-Key receipts, replayed to retries (src/service/idempotency.ts); mutations run over the transaction's operations. */
    idempotency: createIdempotency<Operations>({
      storage, over, clock, committed: (storeId: string) => commits.notify(storeId),
      ...(idempotencyTtlSeconds === undefined ? {} : { ttlSeconds: idempotencyTtlSeconds }),
    }),
    /** GET /readyz: the database answers and every active session's mounts are live. */
    readiness: () => checkReadiness(storage, mounter, servedNode),
    /** Active sessions this server mounts (a gauge): its own node's. */
    countMountedSessions: async (): Promise<number> => (await storage.listActiveSessions()).filter((s) => ownSession(s, servedNode)).length,
    /**
     * Another server committed (the PostgreSQL change listener heard it; null: some store, or
     * notices may have been missed): the change feed's followers read at once, as for this server's commits.
     */
    outsideCommit: (storeId: string | null): void => commits.notify(storeId),
    /** Another server redacted a version (the listener heard it): this server's mounts drop what they keep of it. */
    outsideRedaction: (storeId: string, versionId: string, erasedSha256: string | null): void => mounter.versionRedacted?.(storeId, versionId, erasedSha256),
    /**
     * The listener (re)connected, so notices may have been missed: the feed's followers read at once
     * and the mounts drop every text they keep (a redaction elsewhere may be among the missed).
     */
    outsideResync: (): void => {
      commits.notify(null);
      mounter.redactionsMissed?.();
    },
    /**
     * What the operator does from the host's command line (`mnemo keys`, `workspaces`, `check`): it
     * holds the database file, so no caller and no grant apply. A workspace it names must exist (as
     * for keys.createKey): an empty list or "key not found" would hide a mistyped id.
     */
    operator: {
      storeExists: async (workspaceId: string, id: string): Promise<boolean> => (await storage.getStore(workspaceId, id)) !== null,
      listKeys: async (workspaceId: string) => {
        await existingWorkspace(workspaceId);
        return storage.listApiKeys(workspaceId);
      },
      revokeKey: async (workspaceId: string, id: string) => {
        await existingWorkspace(workspaceId);
        const key = await storage.revokeApiKey(workspaceId, id, clock());
        // Its sessions end in the database; the server that mounts one unmounts it when it hears of
        // it (PostgreSQL: the end's notice, at once; SQLite: its minute sweep, sessions.reconcile).
        for (const s of await storage.listActiveSessionsOfKey(key.id)) await storage.endSession(s.workspaceId, s.id, clock());
        return key;
      },
      listWorkspaces: () => storage.listWorkspaces(),
      /** The engine's integrity check ("sqlite: …" or "postgresql: …"), then the domain's invariants; empty when clean. */
      check: async (): Promise<string[]> => [...(await storage.integrityCheck()), ...(await storage.domainCheck())],
    },
    /** One store's reads for a mount (src/service/mount-reader.ts): handed to the mounter with each mount. */
    mountReader: (storeId: string, asOf?: string): MountReader => createMountReader(storage, storeId, asOf),
    onCommit: (fn: CommitListener): (() => void) => commits.subscribe(fn),
    /** When writes reach the disk: `sync()` for a mount's fsync(), `stop()` at shutdown before the storage closes. */
    durability,
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
        const n = await storage.purgeExpiredMemories(now, EXPIRY_BATCH);
        total += n;
        // Each expired memory got a deleted version: the feed's followers read them.
        if (n > 0) commits.notify(null);
        if (n < EXPIRY_BATCH) return total;
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
    /**
     * Prunes versions the stores' retention lets go (the server runs it every minute), in bounded
     * transactions with a turn of the event loop between them; returns how many it pruned.
     */
    async pruneHistory(): Promise<number> {
      const now = clock();
      let total = 0;
      for (const { id, retention } of await storage.storesWithRetention()) {
        if (retention.maxAgeDays === null && retention.keepLast === null) continue;
        let after = pruneCursors.get(id) ?? 0;
        for (let i = 0; i < PRUNE.windowsPerSweep; i++) {
          const w = { after, scan: PRUNE.scan, max: PRUNE.max, cutoff: retentionCutoff(retention.maxAgeDays, now), keepLast: retention.keepLast, now };
          const r = await storage.pruneVersions(id, w);
          total += r.pruned;
          if (r.pruned > 0) commits.notify(id);
          // As after a redaction: the pruned texts' words leave the search index's pages before the next window.
          if (r.pruned > 0) await eraseSearchRemnants(storage);
          // The end of the store's history: the next sweep starts from its beginning again.
          after = r.scannedTo ?? 0;
          if (r.scannedTo === null) break;
          await new Promise((resolve) => setImmediate(resolve));
        }
        pruneCursors.set(id, after);
      }
      return total;
    },
    /** Indexes up to `max` written memories for search; returns how many still wait (the server runs it every 200 ms). */
    indexSearchBacklog: (max: number): Promise<number> => storage.indexSearchBacklog(max),
    /** One short step of removing deleted stores' rows (SQLite); false once none remain (the server runs it with the indexing). */
    purgeDeletedStores: (): Promise<boolean> => storage.purgeDeletedStores(),
    tidyStorage: (): Promise<readonly string[]> => storage.tidy?.() ?? Promise.resolve([]),
    /** The operations over a transaction's `tx` (a group commit's, an `atomic`'s): their storage calls join it. */
    operationsOn: over,

    // ------------------------------------------------------------ history (issue 15)

    /** The change feed: pages in commit order, and followers for server-sent events (src/service/feed.ts). */
    feed,
    /** A unified diff of a version against another or its predecessor (src/service/diffs.ts). */
    diffVersion: createDiffs({ storage, readable: ops.getStore, thread: diffThread }),
    /** The line runs between two texts, for the console's diff views: on the diff thread too. */
    lineDiff: (from: string, to: string): Promise<LineDiff> => diffThread.run({ kind: 'runs', from, to }),
    /**
     * After a redaction has committed, outside its transaction (on SQLite a reader thread reads it):
     * the versions the caller may see that still hold the text it erased (src/service/text-holders.ts).
     */
    textHolders: createTextHolders({ storage, readable: ops.getStore, clock }),
    /** MCP memory_edit: a str_replace or insert on the text as read, applied again if it changed meanwhile (src/service/edits.ts). */
    editMemory: createEdit(ops),
    /** MCP memory_write: create the memory at a path or replace its content, re-read if another writer created or deleted it meanwhile (src/service/writes.ts). */
    writeMemory: createWrite(ops),
    /** POST /v1/memory_stores/{id}/fork: built hidden in batches, published whole (src/service/forks.ts). */
    forkStore: forks.forkStore,
    /** Deletes forks a crash cut short (the server runs it every minute). */
    purgeAbandonedForks: forks.purgeAbandonedForks,
    ...ops,
  };
  /** What a mount writes through and reads from, handed to the mounter with each mount: the service itself. */
  const mountService: MountService = service;
  const sessions = createSessions({
    storage, getStore: ops.getStore, ids, clock, limits: (s) => over(s).limits, local, mounter, mountService, mountRoot, log, audit, nodeId, soleServer,
  });
  /** Mount sessions (src/service/sessions.ts): created, listed and ended here, mounted through `mounter`. */
  return { ...service, sessions };
}

export type Service = ReturnType<typeof createService>;

/** Idempotency-Key receipts whose mutations run over the service's operations on the transaction. */
export type ServiceIdempotency = Service['idempotency'];

