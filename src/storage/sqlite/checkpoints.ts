/** @module SQLite statements for checkpoints: immutable bundles plus one latest pointer per (agent, session). */
import type { Synchronous } from './reads.js';
import { assertCheckpointDeletable, nextRevision } from '../../domain/checkpoint-rules.js';
import { assertStoreFound, assertStoreWritable, type StoreState } from '../../domain/memory-rules.js';
import type { Checkpoint } from '../../domain/types.js';
import type { CheckpointStorage, InsertCheckpointInput, ReferencedMemory, StoreUsage } from '../port.js';
import { actorColumns, bundleJson, toCheckpoint, toMemoryMeta, type CheckpointRow, type MemoryRow } from '../common/rows.js';
import { writeTx, type Db } from './tx.js';

const SELECT = `SELECT c.*, (h.checkpoint_id IS NOT NULL) AS is_latest FROM checkpoints c
  LEFT JOIN checkpoint_heads h ON h.store_id = c.store_id AND h.agent_id = c.agent_id
    AND h.session_id = c.session_id AND h.checkpoint_id = c.id`;

const EXPIRED = '(expires_at IS NOT NULL AND expires_at <= mnemo_now()) AS expired';

/** `liveUsage`: the store's usage less its expired memories (sqlite/stores.ts liveStoreUsage), on the same connection. */
export function createCheckpointStatements(db: Db, liveUsage: (storeId: string) => StoreUsage): Synchronous<CheckpointStorage> {
  const q = {
    storeState: db.prepare('SELECT archived_at AS archivedAt FROM stores WHERE id = ? AND deleted_at IS NULL'),
    usage: db.prepare('SELECT memories, bytes FROM store_usage WHERE store_id = ?'),
    head: db.prepare('SELECT checkpoint_id, revision FROM checkpoint_heads WHERE store_id = ? AND agent_id = ? AND session_id = ?'),
    insert: db.prepare(
      `INSERT INTO checkpoints (id, store_id, agent_id, session_id, revision, bundle, size_bytes, created_at, actor_type, actor_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    setHead: db.prepare(
      `INSERT INTO checkpoint_heads (store_id, agent_id, session_id, checkpoint_id, revision) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (store_id, agent_id, session_id) DO UPDATE SET checkpoint_id = excluded.checkpoint_id, revision = excluded.revision`,
    ),
    byId: db.prepare(`${SELECT} WHERE c.store_id = ? AND c.id = ?`),
    latest: db.prepare(
      `${SELECT} WHERE c.id = (SELECT checkpoint_id FROM checkpoint_heads WHERE store_id = ? AND agent_id = ? AND session_id = ?)`,
    ),
    remove: db.prepare('DELETE FROM checkpoints WHERE id = ?'),
    memoryById: db.prepare(`SELECT *, ${EXPIRED} FROM memories WHERE store_id = ? AND id = ?`),
    memoryByPath: db.prepare(`SELECT *, ${EXPIRED} FROM memories WHERE store_id = ? AND path = ?`),
    expiredId: db.prepare('SELECT 1 FROM memory_expirations WHERE store_id = ? AND memory_id = ?'),
    expiredPath: db.prepare('SELECT 1 FROM memory_expirations WHERE store_id = ? AND path = ?'),
  };

  function get(storeId: string, id: string): Checkpoint | null {
    const row = q.byId.get(storeId, id) as CheckpointRow | undefined;
    return row ? toCheckpoint(row) : null;
  }

  /** Read in the write's transaction: one that raced the store's delete finds it gone. */
  const storeState = (storeId: string): StoreState | null => (q.storeState.get(storeId) as StoreState | undefined) ?? null;

  return {
    insertCheckpoint: writeTx(db, ({ checkpoint: c, expectedLatestId, admit, nearLimit }: InsertCheckpointInput): Checkpoint => {
      assertStoreWritable(c.storeId, storeState(c.storeId));
      if (admit) {
        const usage = (q.usage.get(c.storeId) as StoreUsage | undefined) ?? { memories: 0, bytes: 0 };
        // Near the limit only: the counter less the memories that expired, which it still holds.
        admit(nearLimit?.(usage) ? liveUsage(c.storeId) : usage);
      }
      const head = q.head.get(c.storeId, c.agentId, c.sessionId) as { checkpoint_id: string; revision: number } | undefined;
      const revision = nextRevision(c, head ? { checkpointId: head.checkpoint_id, revision: head.revision } : null, expectedLatestId);
      const a = actorColumns(c.createdBy);
      q.insert.run(c.id, c.storeId, c.agentId, c.sessionId, revision, bundleJson(c), c.sizeBytes, c.createdAt, a.type, a.id);
      q.setHead.run(c.storeId, c.agentId, c.sessionId, c.id, revision);
      return { ...c, revision, isLatest: true };
    }),

    getCheckpoint: get,

    getLatestCheckpoint(storeId, agentId, sessionId) {
      const row = q.latest.get(storeId, agentId, sessionId) as CheckpointRow | undefined;
      return row ? toCheckpoint(row) : null;
    },

    deleteCheckpoint: writeTx(db, (storeId: string, id: string): void => {
      assertStoreFound(storeId, storeState(storeId));
      assertCheckpointDeletable(id, get(storeId, id));
      q.remove.run(id);
    }),

    findReferencedMemory(storeId, ref): ReferencedMemory {
      const row = (
        ref.memoryId !== null ? q.memoryById.get(storeId, ref.memoryId) : q.memoryByPath.get(storeId, ref.path)
      ) as (MemoryRow & { expired: number }) | undefined;
      if (row) return row.expired ? { state: 'expired' } : { state: 'live', memory: toMemoryMeta(row) };
      const gone = ref.memoryId !== null ? q.expiredId.get(storeId, ref.memoryId) : q.expiredPath.get(storeId, ref.path);
      return gone ? { state: 'expired' } : { state: 'missing' };
    },
  };
}
