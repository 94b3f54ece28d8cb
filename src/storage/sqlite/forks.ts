/**
 * @module SQLite statements for the forks role (port/forks.ts): a hidden store filled in batches
 * from another store's state at an instant, then published (sqlite/schema/forks.ts).
 */
import { attrsOfNewMemory } from '../../domain/memory-attrs.js';
import { abandonedFork, type ForkAbandonment } from '../../domain/errors.js';
import type { Store } from '../../domain/types.js';
import type { ForkStorage } from '../port.js';
import { createVersionAppend } from './commit-order.js';
import { AT_COLUMNS, type AtRow } from '../common/history-rows.js';
import { actorColumns, toStore, type StoreRow } from '../common/rows.js';
import type { Synchronous } from './reads.js';
import { writeTx, type Db } from './tx.js';

export function createForkStatements(db: Db): Synchronous<ForkStorage> {
  const q = {
    insertStore: db.prepare(
      `INSERT INTO stores (id, workspace_id, name, description, metadata, created_at, updated_at, archived_at, retention, forked_from, forking_since)
       VALUES (@id, @workspaceId, @name, @description, @metadata, @createdAt, @updatedAt, NULL, NULL, @forkedFrom, @createdAt)`,
    ),
    hidden: db.prepare('SELECT 1 FROM stores WHERE id = ? AND forking_since IS NOT NULL AND deleted_at IS NULL'),
    // versions_by_memory (store_id, memory_id, seq): the next memory ids of the source, in order.
    memoryIds: db.prepare('SELECT DISTINCT memory_id FROM versions WHERE store_id = ? AND memory_id > ? ORDER BY memory_id LIMIT +?').pluck(),
    latestAt: db.prepare(
      `SELECT ${AT_COLUMNS} FROM versions INDEXED BY versions_by_memory_time
       WHERE store_id = ? AND memory_id = ? AND created_at <= ? ORDER BY created_at DESC, seq DESC LIMIT 1`,
    ),
    // A memory's expiry is kept on its row only (an update may renew it without a version): the
    // row's, or, once a sweep deleted it, the instant it expired.
    expiry: db.prepare(
      `SELECT expires_at FROM memories WHERE id = @memory
       UNION ALL SELECT expired_at FROM memory_expirations WHERE store_id = @store AND memory_id = @memory`,
    ).pluck(),
    insertMemory: db.prepare(
      `INSERT INTO memories (id, store_id, path, content_sha256, content_size_bytes, version_id, mode, created_at, updated_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    // An abandoned fork (deleted_at set by another sweep meanwhile) is not published: its rows are going.
    publish: db.prepare('UPDATE stores SET forking_since = NULL WHERE id = ? AND forking_since IS NOT NULL AND deleted_at IS NULL'),
    get: db.prepare('SELECT * FROM stores WHERE id = ?'),
    // Deleted as any store is: hidden at once, its rows removed in steps (sqlite/store-purge.ts).
    abandon: db.prepare(`UPDATE stores SET deleted_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ? AND forking_since IS NOT NULL AND deleted_at IS NULL`),
    countContents: db.prepare('SELECT count(*) FROM contents').pluck(),
    abandoned: db.prepare('SELECT id FROM stores WHERE forking_since IS NOT NULL AND forking_since < ? AND deleted_at IS NULL ORDER BY seq LIMIT 1').pluck(),
    // Who deleted a build while it ran (sqlite/schema/fork-abandonments.ts): the sweep here, a redaction in versions.ts.
    cause: db.prepare('SELECT cause FROM fork_abandonments WHERE store_id = ?').pluck(),
    record: db.prepare('INSERT INTO fork_abandonments (store_id, cause, abandoned_at) VALUES (?, ?, ?) ON CONFLICT (store_id) DO NOTHING'),
    forget: db.prepare('DELETE FROM fork_abandonments WHERE store_id = ?'),
    forgetBefore: db.prepare('DELETE FROM fork_abandonments WHERE abandoned_at < ?'),
  };
  const appendVersion = createVersionAppend(db);
  const mode = attrsOfNewMemory(undefined, undefined).mode;

  const abandonFork = writeTx(db, (storeId: string): void => {
    q.abandon.run(storeId);
    q.forget.run(storeId);
  });

  const sweep = writeTx(db, (before: string, now: string): string | null => {
    q.forgetBefore.run(before);
    const id = (q.abandoned.get(before) as string | undefined) ?? null;
    if (id !== null && q.abandon.run(id).changes === 1) q.record.run(id, 'sweep', now);
    return id;
  });

  /** The build `storeId`, deleted while it ran, says who deleted it (port/forks.ts: none recorded is an hour gone, the sweep's). */
  const gone = (storeId: string) => abandonedFork(storeId, (q.cause.get(storeId) as ForkAbandonment | undefined) ?? 'sweep');

  return {
    beginFork(store: Store) {
      q.insertStore.run({
        id: store.id, workspaceId: store.workspaceId, name: store.name, description: store.description,
        metadata: JSON.stringify(store.metadata), createdAt: store.createdAt, updatedAt: store.updatedAt,
        forkedFrom: store.forkedFrom ? JSON.stringify(store.forkedFrom) : null,
      });
    },

    copyForkBatch: writeTx(db, (input): string | null => {
      if (!q.hidden.get(input.targetId)) throw gone(input.targetId);
      const ids = q.memoryIds.all(input.sourceId, input.after ?? '', input.limit) as string[];
      const a = actorColumns(input.actor);
      for (const memoryId of ids) {
        const v = q.latestAt.get(input.sourceId, memoryId, input.asOf) as AtRow | undefined;
        // Not yet created, deleted by then, or its text then redacted since: nothing to copy.
        if (!v || v.operation === 'deleted' || v.redacted_at !== null || v.path === null || v.content_sha256 === null) continue;
        const expiresAt = (q.expiry.get({ memory: memoryId, store: input.sourceId }) as string | null | undefined) ?? null;
        // Expired by now (at as_of, or since: the copy keeps its expiry and would be born expired).
        if (expiresAt !== null && expiresAt <= input.now) continue;
        const id = input.newMemoryId();
        const versionId = input.newVersionId();
        // The version and the memory row name the source's stored text by sha: no text is read or
        // written (sqlite/schema/memory-text.ts), so no content goes to put.
        appendVersion({
          id: versionId, storeId: input.targetId, memoryId: id, operation: 'created', path: v.path,
          content: null, sha: v.content_sha256, size: v.content_size_bytes, createdAt: input.now, actorType: a.type, actorId: a.id,
        });
        q.insertMemory.run(id, input.targetId, v.path, v.content_sha256, v.content_size_bytes, versionId, mode, input.now, input.now, expiresAt);
      }
      return ids.length < input.limit ? null : ids[ids.length - 1]!;
    }),

    publishFork: writeTx(db, (storeId: string): Store => {
      if (q.publish.run(storeId).changes !== 1) throw gone(storeId);
      return toStore(q.get.get(storeId) as StoreRow);
    }),

    abandonFork,

    purgeAbandonedFork: sweep,

    countContents() {
      return q.countContents.get() as number;
    },
  };
}
