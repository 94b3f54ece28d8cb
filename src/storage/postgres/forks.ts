/**
 * @module PostgreSQL operations for the forks role (port/forks.ts): a hidden store filled in
 * batches from another store's state at an instant, then published (postgres/schema/v6.ts).
 */
import { attrsOfNewMemory } from '../../domain/memory-attrs.js';
import { abandonedFork, type ForkAbandonment, type MnemoError } from '../../domain/errors.js';
import type { Store } from '../../domain/types.js';
import type { ForkBatchInput } from '../port.js';
import { appendVersionRow } from './commit-order.js';
import { all, first, run, type Q } from './db.js';
import { actorColumns, toStore, type StoreRow } from './rows.js';

interface AtRow {
  memory_id: string;
  operation: string;
  path: string | null;
  content_sha256: string | null;
  content_size_bytes: number | null;
  redacted_at: string | null;
  content: string | null;
  expires_at: string | null;
}

const MODE = attrsOfNewMemory(undefined, undefined).mode;

/**
 * The build `storeId`, deleted while it ran, says who deleted it, as recorded in the deletion's
 * transaction (postgres/schema/v27.ts); none recorded is an hour gone: the sweep's (port/forks.ts).
 */
async function gone(q: Q, storeId: string): Promise<MnemoError> {
  const r = await first<{ cause: ForkAbandonment }>(q, 'SELECT cause FROM fork_abandonments WHERE store_id = $1', [storeId]);
  return abandonedFork(storeId, r?.cause ?? 'sweep');
}

export const forkWrites = {
  async beginFork(q: Q, store: Store): Promise<void> {
    await run(
      q,
      `INSERT INTO stores (id, workspace_id, name, description, metadata, created_at, updated_at, archived_at, retention, forked_from, forking_since)
       VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, NULL, $8, $6)`,
      [store.id, store.workspaceId, store.name, store.description, JSON.stringify(store.metadata), store.createdAt, store.updatedAt,
        store.forkedFrom ? JSON.stringify(store.forkedFrom) : null],
    );
  },

  async copyForkBatch(q: Q, input: ForkBatchInput): Promise<string | null> {
    if (!(await first(q, 'SELECT 1 FROM stores WHERE id = $1 AND forking_since IS NOT NULL AND deleted_at IS NULL FOR NO KEY UPDATE', [input.targetId]))) {
      throw await gone(q, input.targetId);
    }
    // The next memory ids of the source (versions_by_memory), each one's latest version at asOf
    // (versions_by_memory_time), with its text and its expiry: one statement for the batch. The
    // expiry is kept on the memory's row only (an update may renew it without a version): the
    // row's, or, once a sweep deleted it, the instant it expired.
    const ids = await all<{ memory_id: string }>(
      q,
      'SELECT DISTINCT memory_id FROM versions WHERE store_id = $1 AND memory_id > $2 ORDER BY memory_id LIMIT $3',
      [input.sourceId, input.after ?? '', input.limit],
    );
    const rows = await all<AtRow>(
      q,
      `SELECT i.memory_id, l.operation, l.path, l.content_sha256, l.content_size_bytes, l.redacted_at,
              (SELECT c.content FROM contents c WHERE c.sha256 = l.content_sha256) AS content,
              COALESCE((SELECT m.expires_at FROM memories m WHERE m.id = i.memory_id),
                       (SELECT e.expired_at FROM memory_expirations e WHERE e.store_id = $1 AND e.memory_id = i.memory_id)) AS expires_at
       FROM unnest($2::text[]) AS i(memory_id)
       CROSS JOIN LATERAL (SELECT operation, path, content_sha256, content_size_bytes, redacted_at FROM versions v
                           WHERE v.store_id = $1 AND v.memory_id = i.memory_id AND v.created_at <= $3
                           ORDER BY v.created_at DESC, v.seq DESC LIMIT 1) l
       ORDER BY i.memory_id`,
      [input.sourceId, ids.map((r) => r.memory_id), input.asOf],
    );
    const a = actorColumns(input.actor);
    for (const v of rows) {
      // Deleted by then, or its text then redacted since: nothing to copy.
      if (v.operation === 'deleted' || v.redacted_at !== null || v.path === null || v.content_sha256 === null || v.content === null) continue;
      // Expired by now (at as_of, or since: the copy keeps its expiry and would be born expired).
      if (v.expires_at !== null && v.expires_at <= input.now) continue;
      const id = input.newMemoryId();
      const versionId = input.newVersionId();
      // putContent (in appendVersionRow) finds the source's row and locks it: no bytes are copied,
      // and a concurrent release of that text waits for this commit (postgres/schema/v5.ts).
      await appendVersionRow(q, {
        id: versionId, storeId: input.targetId, memoryId: id, operation: 'created', path: v.path,
        content: v.content, sha: v.content_sha256, size: v.content_size_bytes, createdAt: input.now, actorType: a.type, actorId: a.id,
      });
      await run(
        q,
        // The row names the shared text by sha and keeps only its words (postgres/schema/v9.ts): no text is written.
        `INSERT INTO memories (id, store_id, path, search, content_sha256, content_size_bytes, version_id, mode, created_at, updated_at, expires_at)
         VALUES ($1, $2, $3, mnemo_search($3, $4), $5, $6, $7, $8, $9, $9, $10)`,
        [id, input.targetId, v.path, v.content, v.content_sha256, v.content_size_bytes, versionId, MODE, input.now, v.expires_at],
      );
    }
    return ids.length < input.limit ? null : ids[ids.length - 1]!.memory_id;
  },

  async publishFork(q: Q, storeId: string): Promise<Store> {
    const r = await first<StoreRow>(q, 'UPDATE stores SET forking_since = NULL WHERE id = $1 AND forking_since IS NOT NULL AND deleted_at IS NULL RETURNING *', [storeId]);
    if (!r) throw await gone(q, storeId);
    return toStore(r);
  },

  // Deleted as any store is: hidden at once, its rows removed in steps (postgres/schema/v14.ts).
  async abandonFork(q: Q, storeId: string): Promise<void> {
    await run(q, 'UPDATE stores SET deleted_at = $1 WHERE id = $2 AND forking_since IS NOT NULL AND deleted_at IS NULL', [new Date().toISOString(), storeId]);
    await run(q, 'DELETE FROM fork_abandonments WHERE store_id = $1', [storeId]);
  },

  async purgeAbandonedFork(q: Q, before: string, now: string): Promise<string | null> {
    await run(q, 'DELETE FROM fork_abandonments WHERE abandoned_at < $1', [before]);
    // SKIP LOCKED: two servers' sweeps never wait on each other's (or a live fork's batch's) row.
    const r = await first<{ id: string }>(
      q,
      'SELECT id FROM stores WHERE forking_since IS NOT NULL AND forking_since < $1 AND deleted_at IS NULL ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED',
      [before],
    );
    if (!r) return null;
    await run(q, 'UPDATE stores SET deleted_at = $1 WHERE id = $2', [new Date().toISOString(), r.id]);
    await run(q, `INSERT INTO fork_abandonments (store_id, cause, abandoned_at) VALUES ($1, 'sweep', $2) ON CONFLICT (store_id) DO NOTHING`, [r.id, now]);
    return r.id;
  },
};

export const forkReads = {
  async countContents(q: Q): Promise<number> {
    return (await first<{ n: number }>(q, 'SELECT count(*)::int AS n FROM contents'))!.n;
  },
};
