/** @module SQLite statements for memory versions: filtered newest-first lists and redaction. */
import { truncateWalSoon } from './wal-checkpointer.js';
import { assertStoreFound, type StoreState } from '../../domain/memory-rules.js';
import { planRedaction } from '../../domain/version-rules.js';
import type { Actor, MemoryVersion, Page, TextHolderQuery, TextHolders, VersionListQuery } from '../../domain/types.js';
import { cursorNumber, decodeCursor, encodeCursor } from '../cursor.js';
import type { MemoryStorage } from '../port.js';
import { actorColumns, toTextHolders, toVersion, type TextHolderRow, type VersionRow } from '../common/rows.js';
import type { Synchronous, SyncReads } from './reads.js';
import { createReceiptRedaction } from './receipts.js';
import { HELD_IN_WORKSPACE, HOLDERS_IN_WORKSPACE, versionContent } from './contents.js';
import { createFloorKeep } from './path-floors.js';
import type { SearchIndex } from './search-index.js';
import { afterCommit, writeTx, type Db, type Statement } from './tx.js';
import { createExpiredMemoryPurge } from './expiry.js';

type VersionStatements = Pick<Synchronous<MemoryStorage>, 'getVersion' | 'redactVersion'> & Pick<SyncReads, 'listVersions' | 'listTextHolders'>;

export function createVersionStatements(db: Db, index: SearchIndex): VersionStatements {
  const q = {
    storeState: db.prepare('SELECT archived_at AS archivedAt FROM stores WHERE id = ? AND deleted_at IS NULL'),
    get: db.prepare(`SELECT v.*, ${versionContent('v')} AS content FROM versions v WHERE v.store_id = ? AND v.id = ?`),
    // Read on a reader thread, together, once the redaction has committed (listTextHolders).
    heldInWorkspace: db.prepare(HELD_IN_WORKSPACE).pluck(),
    holders: db.prepare(HOLDERS_IN_WORKSPACE),
    // One primary-key probe, whatever holds the text: the row goes with its last holder (the trigger below).
    contentStored: db.prepare('SELECT 1 FROM contents WHERE sha256 = ?').pluck(),
    // By the memory's id: there is no index on version_id, and this must not scan the store.
    isHead: db.prepare('SELECT 1 FROM memories WHERE id = ? AND version_id = ?'),
    redact: db.prepare(
      `UPDATE versions SET path = NULL, content_sha256 = NULL, content_size_bytes = NULL,
         redacted_at = ?, redacted_by_type = ?, redacted_by_id = ?
       WHERE id = ?`,
    ),
    // A fork still being built (hidden) that copies, or is to copy, this version as its memory's
    // text at the fork's instant is abandoned (deleted as any store is), and the fork request builds
    // it again, without this version (service/forks.ts): a publish must not carry a text redacted
    // since it was copied. (Nor does its redaction count a store nobody can see as a holder: contents.ts.)
    // Each deleted build's cause is recorded with it (sqlite/schema/fork-abandonments.ts), so its
    // request fails with the right reason should this be its last try.
    abandonForks: db.prepare(
      `UPDATE stores SET deleted_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
       WHERE forking_since IS NOT NULL AND deleted_at IS NULL AND json_extract(forked_from, '$.storeId') = @store
         AND (SELECT id FROM versions INDEXED BY versions_by_memory_time
              WHERE store_id = @store AND memory_id = @memory AND created_at <= json_extract(forked_from, '$.asOf')
              ORDER BY created_at DESC, seq DESC LIMIT 1) = @id
       RETURNING id`,
    ).pluck(),
    recordAbandoned: db.prepare(`INSERT INTO fork_abandonments (store_id, cause, abandoned_at) VALUES (?, 'redaction', ?) ON CONFLICT (store_id) DO NOTHING`),
    // An expired memory's last path stays in memory_expirations (so a checkpoint reference by path
    // reads "expired"); once no version of that memory holds the path, it is redacted text too.
    // '' is no memory path, so a reference by that path then reads "missing"; by id, still "expired".
    forgetExpiredPath: db.prepare(
      `UPDATE memory_expirations SET path = '' WHERE store_id = @store AND memory_id = @memory AND path = @path
         AND NOT EXISTS (SELECT 1 FROM versions WHERE store_id = @store AND memory_id = @memory AND path = @path)`,
    ),
  };
  const redactReceipts = createReceiptRedaction(db);
  const purgeIfExpired = createExpiredMemoryPurge(db);
  const keepFloor = createFloorKeep(db);
  // One prepared statement per combination of filters, prepared on first use and kept.
  const lists = new Map<string, Statement>();
  // The count and the list in one read transaction: the same snapshot, so they agree.
  const readHolders = db.transaction((storeId: string, sha256: string, hq: TextHolderQuery): TextHolders => {
    const count = q.heldInWorkspace.get({ sha: sha256, store: storeId }) as number;
    const only = hq.only === null ? null : JSON.stringify(hq.only);
    const rows = count === 0 ? [] : (q.holders.all({ sha: sha256, store: storeId, only, now: hq.now, limit: hq.limit + 1 }) as TextHolderRow[]);
    return toTextHolders(rows, hq.limit, count);
  });

  function listStatement(lq: VersionListQuery): Statement {
    const where = ['store_id = @store', 'seq < @before'];
    if (lq.memoryId !== null) where.push('memory_id = @memoryId');
    if (lq.operation !== null) where.push('operation = @operation');
    if (lq.sessionId !== null) where.push("actor_type = 'session_actor' AND actor_id = @sessionId");
    if (lq.apiKeyId !== null) where.push("actor_type = 'api_actor' AND actor_id = @apiKeyId");
    // No service accounts write here, so that filter matches nothing.
    if (lq.serviceAccountId !== null) where.push('0');
    if (lq.createdGte !== null) where.push('created_at >= @gte');
    if (lq.createdLte !== null) where.push('created_at <= @lte');
    const columns = lq.view === 'full' ? `*, ${versionContent('versions')} AS content` : 'seq, id, store_id, memory_id, operation, path, NULL AS content, content_sha256, content_size_bytes, created_at, actor_type, actor_id, redacted_at, redacted_by_type, redacted_by_id';
    const sql = `SELECT ${columns} FROM versions WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT +@limit`;
    let stmt = lists.get(sql);
    if (!stmt) {
      stmt = db.prepare(sql);
      lists.set(sql, stmt);
    }
    return stmt;
  }

  return {
    getVersion(storeId, id) {
      const r = q.get.get(storeId, id) as VersionRow | undefined;
      return r ? toVersion(r) : null;
    },

    listVersions(storeId, lq): Page<MemoryVersion> {
      const c = decodeCursor(lq.page);
      const params: Record<string, string | number> = {
        store: storeId,
        before: c ? cursorNumber(c, 's') : Number.MAX_SAFE_INTEGER,
        limit: lq.limit + 1,
      };
      if (lq.memoryId !== null) params['memoryId'] = lq.memoryId;
      if (lq.operation !== null) params['operation'] = lq.operation;
      if (lq.sessionId !== null) params['sessionId'] = lq.sessionId;
      if (lq.apiKeyId !== null) params['apiKeyId'] = lq.apiKeyId;
      if (lq.createdGte !== null) params['gte'] = lq.createdGte;
      if (lq.createdLte !== null) params['lte'] = lq.createdLte;
      const rows = listStatement(lq).all(params) as VersionRow[];
      const page = rows.slice(0, lq.limit);
      return { data: page.map(toVersion), nextPage: rows.length > lq.limit ? encodeCursor({ s: page[page.length - 1]!.seq }) : null };
    },

    listTextHolders(storeId: string, sha256: string, hq: TextHolderQuery): TextHolders {
      return readHolders.deferred(storeId, sha256, hq);
    },

    redactVersion: (() => {
      const redact = writeTx(db, (storeId: string, id: string, actor: Actor, now: string): { version: MemoryVersion; changed: boolean } => {
        // In the write's transaction: a redaction that raced the store's delete changes nothing.
        assertStoreFound(storeId, (q.storeState.get(storeId) as StoreState | undefined) ?? null);
        const found = q.get.get(storeId, id) as VersionRow | undefined;
        // The head probe only for a version still to redact: an already redacted one is no head.
        const head = found !== undefined && found.redacted_at === null && q.isHead.get(found.memory_id, id) !== undefined;
        // The head of a memory whose expiry has passed is no live memory's (reads find none): the
        // memory is deleted now, as the sweep would, and its current text can go at once.
        const isHead = head && !purgeIfExpired(storeId, found.memory_id, now);
        const plan = planRedaction(id, found ? { memoryId: found.memory_id, redactedAt: found.redacted_at } : null, isHead);
        // planRedaction threw not_found when there was no row.
        const row = found as VersionRow;
        if (plan === 'already') return { version: toVersion(row), changed: false };
        const sha = row.content_sha256;
        // The index may still hold this version's words, queued to be replaced, and removing them
        // needs this text: re-index those memories before it goes, so the checkpoint below erases them too.
        index.indexQueuedAt(id);
        // Words of this text that an earlier re-indexing left in the index pages go too (service: eraseSearchRemnants).
        index.eraseDue(storeId);
        for (const fork of q.abandonForks.all({ store: storeId, memory: row.memory_id, id }) as string[]) q.recordAbandoned.run(fork, now);
        const a = actorColumns(actor);
        // The text's row goes with its last holder, in this statement (a trigger: sqlite/schema/contents.ts).
        q.redact.run(now, a.type, a.id, id);
        // Whether the bytes went: not how many versions still hold them, which grows with them and is
        // read on a reader thread once this has committed (the service's textHolders).
        const gone = sha !== null && q.contentStored.get(sha) === undefined;
        // Receipts replaying this version's memory hold its text too: same transaction (issue 11).
        redactReceipts(storeId, id);
        if (row.path !== null) q.forgetExpiredPath.run({ store: storeId, memory: row.memory_id, path: row.path });
        // The path goes, its number stays taken (sqlite/schema/path-numbers.ts).
        if (row.path !== null && row.path_seq != null) keepFloor(storeId, row.path, row.path_seq);
        return { version: { ...toVersion(q.get.get(storeId, id) as VersionRow), erased: { sha256: sha, gone } }, changed: true };
      });
      return (storeId: string, id: string, actor: Actor, now: string): MemoryVersion => {
        const { version, changed } = redact(storeId, id, actor, now);
        // Copy every page into the main file and cut the WAL to zero bytes: the old page images
        // that still hold the redacted content leave the disk.
        if (changed) afterCommit(db, () => truncateWalSoon(db));
        return version;
      };
    })(),
  };
}
