/**
 * @module Checkpoint rules: save a bundle with its latest pointer, read, delete, and restore within
 * a byte budget with the status of every reference. Checkpoints are not memories.
 */
import { byteLength } from '../domain/content.js';
import { MnemoError, notFound } from '../domain/errors.js';
import type { IdGenerator } from './ids.js';
import type { Storage } from '../storage/port.js';
import type { Caller, Checkpoint, CheckpointReference, ReferenceStatus, Store } from '../domain/types.js';
import { CONTINUITY_LIMITS, parseCheckpointCreate, type CheckpointRequest } from '../validate/index.js';
import { checkpointAdmission, type StoreLimits } from './limits.js';

export interface RestoredReference extends CheckpointReference {
  status: ReferenceStatus;
  /** The memory as it stands now (null when the memory is missing or expired). */
  current: { memoryId: string; path: string; contentSha256: string; versionId: string } | null;
}

/** What a restore returns: the essentials always, the summary and reference notes when they fit. */
export interface Restored {
  checkpoint: Omit<Checkpoint, 'summary' | 'references'>;
  locator: string;
  summary: string | null;
  references: RestoredReference[];
  /** Fields left out to fit the budget ("summary", "references.note"); never an essential one. */
  omitted: string[];
  sizeBytes: number;
  maxBytes: number;
}

export type RestoreTarget = { checkpointId: string } | { agentId: string; sessionId: string };

export interface CheckpointDeps {
  storage: Storage;
  clock: () => string;
  ids: IdGenerator;
  /** The store, if the caller may read it (the service's grant check). */
  readable: (caller: Caller, storeId: string) => Promise<Store>;
  /** The store, if the caller may change what is in it. */
  writable: (caller: Caller, storeId: string) => Promise<Store>;
  /** Bundle cap in bytes (MNEMO_CHECKPOINT_MAX_BYTES), at most 1 MiB. */
  maxBundleBytes?: number;
  /** The store limits: a store's checkpoints count against MNEMO_STORE_MAX_BYTES with its memories. */
  limits: StoreLimits;
}

const LOCATOR = /^mnemo:\/\/memory_stores\/([A-Za-z0-9_]+)\/checkpoints\/(ckpt_[A-Za-z0-9]+)$/;

/** The stable string a runtime keeps in its session metadata to find a checkpoint again. */
export function checkpointLocator(storeId: string, checkpointId: string): string {
  return `mnemo://memory_stores/${storeId}/checkpoints/${checkpointId}`;
}

export function parseLocator(locator: string): { storeId: string; checkpointId: string } {
  const m = LOCATOR.exec(locator);
  if (!m) throw new MnemoError('invalid_request', 'locator: expected mnemo://memory_stores/<store id>/checkpoints/<checkpoint id>', { field: 'locator' });
  return { storeId: m[1]!, checkpointId: m[2]! };
}

export function createCheckpoints({ storage, clock, ids, readable, writable, maxBundleBytes = CONTINUITY_LIMITS.bundleBytes, limits }: CheckpointDeps) {
  const cap = Math.min(maxBundleBytes, CONTINUITY_LIMITS.bundleBytes);

  async function get(caller: Caller, storeId: string, id: string): Promise<Checkpoint> {
    await readable(caller, storeId);
    const c = await storage.getCheckpoint(storeId, id);
    if (!c) throw notFound('checkpoint', id);
    return c;
  }

  async function latest(caller: Caller, storeId: string, agentId: string, sessionId: string): Promise<Checkpoint> {
    await readable(caller, storeId);
    const c = await storage.getLatestCheckpoint(storeId, agentId, sessionId);
    if (!c) throw new MnemoError('not_found', `no checkpoint for agent ${agentId} session ${sessionId}`);
    return c;
  }

  async function referenceStatus(storeId: string, ref: CheckpointReference): Promise<RestoredReference> {
    const found = await storage.findReferencedMemory(storeId, ref);
    if (found.state !== 'live') return { ...ref, status: found.state, current: null };
    const m = found.memory;
    const current = { memoryId: m.id, path: m.path, contentSha256: m.contentSha256, versionId: m.versionId };
    if (ref.contentSha256 !== null) return { ...ref, status: ref.contentSha256 === m.contentSha256 ? 'ok' : 'changed', current };
    if (ref.versionId === m.versionId) return { ...ref, status: 'ok', current };
    // A version the memory never had (a checkpoint's versions are never pruned): what it relied on was never there.
    const relied = ref.versionId === null ? null : await storage.getVersion(storeId, ref.versionId);
    return { ...ref, status: relied?.memoryId === m.id ? 'changed' : 'missing', current };
  }

  return {
    maxBundleBytes: cap,

    /** Validates a raw request body against every limit, with this server's bundle cap. */
    parse(body: unknown): CheckpointRequest {
      return parseCheckpointCreate(body, cap);
    },

    async create(caller: Caller, storeId: string, req: CheckpointRequest): Promise<Checkpoint> {
      await writable(caller, storeId);
      return storage.insertCheckpoint({
        checkpoint: { ...req.bundle, id: ids('checkpoint'), storeId, sizeBytes: req.sizeBytes, createdAt: clock(), createdBy: caller.actor },
        expectedLatestId: req.expectedLatestId,
        // Near the limit, checked against the store less its expired memories, as memory writes are.
        ...checkpointAdmission(limits, storeId, req.sizeBytes),
      });
    },

    get,
    latest,

    async delete(caller: Caller, storeId: string, id: string): Promise<void> {
      // Deleting is allowed on an archived store, like deleting a memory.
      await writable(caller, storeId);
      await storage.deleteCheckpoint(storeId, id);
    },

    /**
     * Restores within `maxBytes` as the face measures its rendering. The summary and reference notes
     * go first; goal, constraints, decisions, open tasks, next action, capsule and references never
     * do: if they alone do not fit, the restore fails naming the size they need.
     */
    async restore(caller: Caller, storeId: string, target: RestoreTarget, maxBytes: number, measure: (r: Restored) => number = jsonBytes): Promise<Restored> {
      const c = 'checkpointId' in target ? await get(caller, storeId, target.checkpointId) : await latest(caller, storeId, target.agentId, target.sessionId);
      const { summary, references, ...essentials } = c;
      const refs: RestoredReference[] = [];
      for (const r of references) refs.push(await referenceStatus(storeId, r));
      const full: Restored = {
        checkpoint: essentials,
        locator: checkpointLocator(storeId, c.id),
        summary,
        references: refs,
        omitted: [],
        sizeBytes: 0,
        maxBytes,
      };
      const omit = [...(summary !== '' ? ['summary'] : []), ...(references.some((r) => r.note !== null) ? ['references.note'] : [])];
      const lean: Restored = { ...full, summary: null, references: refs.map((r) => ({ ...r, note: null })), omitted: omit };
      const candidates = omit.length > 0 ? [full, lean] : [full];
      for (const candidate of candidates) {
        const size = selfSized((n) => measure({ ...candidate, sizeBytes: n }));
        if (size <= maxBytes) return { ...candidate, sizeBytes: size };
      }
      const needed = Math.min(...candidates.map((r) => selfSized((n) => measure({ ...r, sizeBytes: n, maxBytes: n }))));
      throw new MnemoError(
        'budget_exceeded',
        `restoring checkpoint ${c.id} needs at least ${needed} bytes for its goal, constraints, decisions, open tasks, ` +
          `next action, capsule and references; max_bytes is ${maxBytes}. Retry with max_bytes >= ${needed}.`,
        { field: 'max_bytes', needed_bytes: needed },
      );
    },
  };
}

/**
 * The size of an answer that states its own size: `sizeOf(n)` is the answer's size when it says n.
 * From n = 0 the sizes only grow (a larger figure has no fewer digits), and stop once the figure
 * stated is the size: exact, where starting from the budget overstated a small answer by the
 * digits the budget has more.
 */
function selfSized(sizeOf: (n: number) => number): number {
  let n = sizeOf(0);
  for (let next = sizeOf(n); next > n; next = sizeOf(n)) n = next;
  return n;
}

function jsonBytes(r: Restored): number {
  return byteLength(JSON.stringify(r));
}

export type Checkpoints = ReturnType<typeof createCheckpoints>;
