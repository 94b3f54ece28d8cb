/**
 * @module PostgreSQL operations for checkpoints: immutable bundles and one latest pointer per
 * (agent, session). The race for the pointer has one winner: an insert locks the store row first
 * (as memory writes do), reads the head after the lock and moves it in the same transaction; the
 * unique (store, agent, session, revision) would refuse a second same revision anyway.
 */
import { assertCheckpointDeletable, nextRevision } from '../../domain/checkpoint-rules.js';
import { assertStoreFound, assertStoreWritable } from '../../domain/memory-rules.js';
import type { Checkpoint } from '../../domain/types.js';
import type { InsertCheckpointInput, ReferencedMemory, StoreUsage } from '../port.js';
import { first, run, type Q } from './db.js';
import { lockStore, type MemoryContext } from './memories.js';
import { liveUsageReads } from './stores.js';
import { FULL, actorColumns, bundleJson, byUniqueId, toCheckpoint, toMemoryMeta, type CheckpointRow, type MemoryRow } from './rows.js';

/** Checkpoints from `from` (named `c`), each with whether it is its (agent, session)'s latest. */
const select = (from: string): string => `SELECT c.*, (h.checkpoint_id IS NOT NULL) AS is_latest FROM ${from}
  LEFT JOIN checkpoint_heads h ON h.store_id = c.store_id AND h.agent_id = c.agent_id
    AND h.session_id = c.session_id AND h.checkpoint_id = c.id`;

async function get(q: Q, storeId: string, id: string): Promise<Checkpoint | null> {
  const row = await first<CheckpointRow>(q, `${select(byUniqueId('checkpoints', 2, 'c'))} WHERE c.store_id = $1`, [storeId, id]);
  return row ? toCheckpoint(row) : null;
}

export function checkpointOps(ctx: MemoryContext) {
  const { liveStoreUsage } = liveUsageReads(ctx);
  const writes = {
    async insertCheckpoint(q: Q, { checkpoint: c, expectedLatestId, admit, nearLimit }: InsertCheckpointInput): Promise<Checkpoint> {
      assertStoreWritable(c.storeId, await lockStore(q, c.storeId));
      // Read under the store's lock, as a memory write's probe reads it: no write of the store lands between.
      if (admit) {
        const usage = (await first<StoreUsage>(q, 'SELECT memories, bytes FROM store_usage WHERE store_id = $1', [c.storeId])) ?? { memories: 0, bytes: 0 };
        // Near the limit only: the counter less the memories that expired, which it still holds.
        admit(nearLimit?.(usage) ? await liveStoreUsage(q, c.storeId) : usage);
      }
      const head = await first<{ checkpoint_id: string; revision: number }>(
        q,
        'SELECT checkpoint_id, revision FROM checkpoint_heads WHERE store_id = $1 AND agent_id = $2 AND session_id = $3',
        [c.storeId, c.agentId, c.sessionId],
      );
      const revision = nextRevision(c, head ? { checkpointId: head.checkpoint_id, revision: head.revision } : null, expectedLatestId);
      const a = actorColumns(c.createdBy);
      await run(
        q,
        `INSERT INTO checkpoints (id, store_id, agent_id, session_id, revision, bundle, size_bytes, created_at, actor_type, actor_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [c.id, c.storeId, c.agentId, c.sessionId, revision, bundleJson(c), c.sizeBytes, c.createdAt, a.type, a.id],
      );
      await run(
        q,
        `INSERT INTO checkpoint_heads (store_id, agent_id, session_id, checkpoint_id, revision) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (store_id, agent_id, session_id) DO UPDATE SET checkpoint_id = excluded.checkpoint_id, revision = excluded.revision`,
        [c.storeId, c.agentId, c.sessionId, c.id, revision],
      );
      return { ...c, revision, isLatest: true };
    },
    async deleteCheckpoint(q: Q, storeId: string, id: string): Promise<void> {
      // Locked as an insert does, so a delete cannot take the checkpoint a concurrent insert leaves latest.
      assertStoreFound(storeId, await lockStore(q, storeId));
      assertCheckpointDeletable(id, await get(q, storeId, id));
      await run(q, 'DELETE FROM checkpoints WHERE id = $1', [id]);
    },
  };

  const reads = {
    getCheckpoint: get,
    async getLatestCheckpoint(q: Q, storeId: string, agentId: string, sessionId: string): Promise<Checkpoint | null> {
      const row = await first<CheckpointRow>(
        q,
        `${select('checkpoints c')} WHERE c.id = (SELECT checkpoint_id FROM checkpoint_heads WHERE store_id = $1 AND agent_id = $2 AND session_id = $3)`,
        [storeId, agentId, sessionId],
      );
      return row ? toCheckpoint(row) : null;
    },
    async findReferencedMemory(q: Q, storeId: string, ref: { memoryId: string | null; path: string | null }): Promise<ReferencedMemory> {
      const expired = '(expires_at IS NOT NULL AND expires_at <= $3) AS expired';
      const row = await first<MemoryRow & { expired: boolean }>(
        q,
        ref.memoryId !== null
          ? `SELECT ${FULL}, ${expired} FROM ${byUniqueId('memories', 2)} WHERE store_id = $1`
          : `SELECT ${FULL}, ${expired} FROM memories WHERE store_id = $1 AND path = $2`,
        [storeId, ref.memoryId ?? ref.path, ctx.clock()],
      );
      if (row) return row.expired ? { state: 'expired' } : { state: 'live', memory: toMemoryMeta(row) };
      const gone = await first(
        q,
        `SELECT 1 FROM memory_expirations WHERE store_id = $1 AND ${ref.memoryId !== null ? 'memory_id' : 'path'} = $2`,
        [storeId, ref.memoryId ?? ref.path],
      );
      return gone ? { state: 'expired' } : { state: 'missing' };
    },
  };
  return { writes, reads };
}
