/** @module SQLite statements for memories: writes that append versions, and path-ordered reads. */
import { attrsAfterSet } from '../../domain/memory-attrs.js';
import { assertNoOverlap, assertStoreWritable, overlapProbe } from '../../domain/memory-rules.js';
import { notFound } from '../../domain/errors.js';
import { assertDeletePrecondition, planUpdate } from '../../domain/memory-updates.js';
import { subtreeEnd } from '../../domain/paths.js';
import type { KeptAttrs, Memory, MemoryListItem, MemoryListQuery, Page } from '../../domain/types.js';
// The port's input types by role name (port.CreateMemoryInput…): one import for the whole set.
import type * as port from '../port.js';
import { ChildPage, memoryItem, rangeAfter, rangePage, walkStart } from '../common/memory-pages.js';
import { newMemory, saveAsUpdate, treeMoveOf, treeMoveUpdate, updatedMemory, us } from '../common/memory-writes.js';
import { META, toMemory, type MemoryRow } from '../common/rows.js';
import { WRITE_PURGE_MAX, deletionVersionRow, writeVersionRow } from '../common/version-rows.js';
import { createVersionAppend } from './commit-order.js';
import { textOf } from './contents.js';
import { LIVE, createExpiryPurge } from './expiry.js';
import type { ChildWalk } from './tree.js';
import type { Synchronous, SyncReads } from './reads.js';
import { writeTx, type Db, type Statement } from './tx.js';

type MemoryStatements = Omit<Synchronous<port.MemoryStorage>, 'getVersion' | 'listVersions' | 'redactVersion' | 'listTextHolders' | 'listMemories' | 'getMemoryInStore'> & Pick<SyncReads, 'listMemories'>;

/** How many live memories a directory move of `from` moves (its version ids are made beforehand: sqlite/reads.ts). */
export function createTreeCount(db: Db): (storeId: string, from: string) => number {
  const count = db.prepare(`SELECT count(*) FROM memories WHERE store_id = ? AND path > ? AND path < ? AND ${LIVE}`).pluck();
  return (storeId, from) => {
    const prefix = from + '/';
    return count.get(storeId, prefix, subtreeEnd(prefix)) as number;
  };
}

export function createMemoryStatements(db: Db, children: ChildWalk): MemoryStatements {
  const q = {
    // A deleted store takes no write while its rows are removed (sqlite/store-purge.ts).
    storeState: db.prepare('SELECT archived_at FROM stores WHERE id = ? AND deleted_at IS NULL'),
    byId: db.prepare(`SELECT *, ${textOf('memories')} AS content FROM memories WHERE store_id = ? AND id = ? AND ${LIVE}`),
    byPath: db.prepare(`SELECT *, ${textOf('memories')} AS content FROM memories WHERE store_id = ? AND path = ? AND ${LIVE}`),
    descendant: db.prepare('SELECT id, path FROM memories WHERE store_id = ? AND path > ? AND path < ? AND id != ? LIMIT 1'),
    insertMemory: db.prepare(
      `INSERT INTO memories (id, store_id, path, content_sha256, content_size_bytes, version_id, mode, created_at, updated_at, expires_at,
                            atime_us, mtime_us, uid, gid)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    updateMemory: db.prepare(
      `UPDATE memories SET path = ?, content_sha256 = ?, content_size_bytes = ?, version_id = ?, updated_at = ?,
                           mode = ?, atime_us = ?, mtime_us = ?, ctime_us = NULL, uid = ?, gid = ?
       WHERE id = ?`,
    ),
    setExpiry: db.prepare('UPDATE memories SET expires_at = ? WHERE id = ?'),
    deleteMemory: db.prepare('DELETE FROM memories WHERE id = ?'),
    setAttrs: db.prepare('UPDATE memories SET mode = ?, atime_us = ?, mtime_us = ?, ctime_us = ?, uid = ?, gid = ? WHERE id = ?'),
    rangeMeta: db.prepare(
      `SELECT ${META} FROM memories WHERE store_id = ? AND path > ? AND path < ? AND ${LIVE} ORDER BY path LIMIT +?`,
    ),
    rangeFull: db.prepare(`SELECT *, ${textOf('memories')} AS content FROM memories WHERE store_id = ? AND path > ? AND path < ? AND ${LIVE} ORDER BY path LIMIT +?`),
  };
  const purgeExpired = createExpiryPurge(db);
  const insertVersion = createVersionAppend(db);
  // A live memory (other than one id) at any of `count` paths: the overlap check asks for a path and
  // its ancestors in one probe. One statement per count, each prepared once; a json_each list cost a
  // third of the check.
  const atAnyPathStatements: Statement[] = [];
  function atAnyPath(count: number): Statement {
    return (atAnyPathStatements[count] ??= db.prepare(
      `SELECT id, path FROM memories WHERE store_id = ? AND path IN (${Array(count).fill('?').join(', ')}) AND id != ? LIMIT 1`,
    ));
  }

  function assertWritable(storeId: string): void {
    const s = q.storeState.get(storeId) as { archived_at: string | null } | undefined;
    assertStoreWritable(storeId, s ? { archivedAt: s.archived_at } : null);
  }

  /** A memory, other than `selfId`, at `path`, at one of its ancestors or below it, or null. */
  function overlapAt(storeId: string, path: string, selfId: string): { id: string; path: string } | null {
    const probe = overlapProbe(path);
    const hit =
      (atAnyPath(probe.atOrAbove.length).get(storeId, ...probe.atOrAbove, selfId) as { id: string; path: string } | undefined) ??
      (q.descendant.get(storeId, probe.below, subtreeEnd(probe.below), selfId) as { id: string; path: string } | undefined);
    return hit ?? null;
  }

  /** Invariant 2 (src/domain/memory-rules.ts): refuses a write where a live memory other than `selfId` would overlap `path`. */
  function checkOverlap(storeId: string, path: string, selfId: string): void {
    assertNoOverlap(path, overlapAt(storeId, path, selfId));
  }

  function mustGet(storeId: string, id: string): MemoryRow {
    const row = q.byId.get(storeId, id) as MemoryRow | undefined;
    if (!row) throw notFound('memory', id);
    return row;
  }

  function insert(input: port.CreateMemoryInput & { attrs?: KeptAttrs }): Memory {
    assertWritable(input.storeId);
    checkOverlap(input.storeId, input.path, '');
    const m = newMemory(input);
    insertVersion(writeVersionRow(input, 'created', m));
    q.insertMemory.run(
      m.id, m.storeId, m.path, m.contentSha256, m.contentSizeBytes, m.versionId, m.mode, m.createdAt, m.updatedAt, m.expiresAt,
      us(m.atimeMs), us(m.mtimeMs), m.uid, m.gid,
    );
    return m;
  }

  function update(input: port.UpdateMemoryInput): { memory: Memory; changed: boolean } {
    const current = toMemory(mustGet(input.storeId, input.memoryId));
    const plan = planUpdate(current, input);
    const expiresAt = input.expiresAt === undefined ? current.expiresAt : input.expiresAt;
    // Before the no-op check: an update sent to an archived store is refused even if it would change nothing.
    assertWritable(input.storeId);
    if (plan.kind === 'noop') {
      // A TTL is not versioned (like mode): renewing it changes the row but appends no version.
      let memory = current;
      if (expiresAt !== current.expiresAt) {
        q.setExpiry.run(expiresAt, current.id);
        memory = { ...memory, expiresAt };
      }
      // A save of unchanged bytes still keeps what the file was given meanwhile (cp -p onto a twin).
      return { memory: input.attrs ? keepAttrs(memory, input.attrs, input.now, false) : memory, changed: false };
    }
    if (plan.renamed) checkOverlap(input.storeId, plan.path, current.id);
    const m = updatedMemory(current, plan, input, expiresAt);
    insertVersion(writeVersionRow(input, 'modified', m));
    q.updateMemory.run(
      m.path, m.contentSha256, m.contentSizeBytes, m.versionId, m.updatedAt,
      m.mode, us(m.atimeMs), us(m.mtimeMs), m.uid, m.gid, m.id,
    );
    if (expiresAt !== current.expiresAt) q.setExpiry.run(expiresAt, current.id);
    return { memory: m, changed: true };
  }

  /** Sets attributes without a version (src/domain/memory-attrs.ts decides what they become). */
  function keepAttrs(m: Memory, a: KeptAttrs, now: string, always: boolean): Memory {
    const next = attrsAfterSet(m, a, now, always);
    if (!next) return m;
    assertWritable(m.storeId);
    q.setAttrs.run(next.mode, us(next.atimeMs), us(next.mtimeMs), us(next.ctimeMs), next.uid, next.gid, m.id);
    return { ...m, ...next };
  }

  function remove(stamp: port.WriteStamp, row: MemoryRow): void {
    insertVersion(deletionVersionRow(stamp, row));
    q.deleteMemory.run(row.id);
  }

  return {
    createMemory: writeTx(db, (input: port.CreateMemoryInput): Memory => {
      purgeExpired(input.storeId, input.now, WRITE_PURGE_MAX, input.path);
      return insert(input);
    }),
    updateMemory: writeTx(db, (input: port.UpdateMemoryInput) => {
      purgeExpired(input.storeId, input.now, WRITE_PURGE_MAX, input.path);
      return update(input);
    }),
    deleteMemory: writeTx(db, (input: port.DeleteMemoryInput): void => {
      purgeExpired(input.storeId, input.now);
      const row = mustGet(input.storeId, input.memoryId);
      assertDeletePrecondition(toMemory(row), input.expectedSha256);
      remove(input, row);
    }),

    saveMemoryAt: writeTx(db, (input: port.SaveMemoryAtInput) => {
      purgeExpired(input.storeId, input.now, WRITE_PURGE_MAX, input.path);
      const row = q.byPath.get(input.storeId, input.path) as MemoryRow | undefined;
      if (!row) return { memory: insert(input), changed: true };
      return update(saveAsUpdate(input, row.id));
    }),

    moveMemory: writeTx(db, (input: port.MoveMemoryInput): Memory => {
      purgeExpired(input.storeId, input.now, WRITE_PURGE_MAX, input.path);
      const current = mustGet(input.storeId, input.memoryId);
      if (current.path === input.path) return toMemory(current);
      assertWritable(input.storeId);
      const replaced = atAnyPath(1).get(input.storeId, input.path, input.memoryId) as { id: string } | undefined;
      if (replaced) remove({ ...input, versionId: input.replacedVersionId }, mustGet(input.storeId, replaced.id));
      return update({ ...input, path: input.path }).memory;
    }),

    /**
     * When nothing is at the destination, at its ancestors or below it (what a mount's rename leaves
     * to move), no moved path can meet another memory: each memory moves from its row without its
     * text and without an overlap check (about half the time of an update each). Otherwise each is
     * updated and checked as any rename is, and the first that meets another memory fails the move.
     */
    moveTree: writeTx(db, (input: port.MoveTreeInput): number => {
      purgeExpired(input.storeId, input.now, WRITE_PURGE_MAX, input.to);
      assertWritable(input.storeId);
      const prefix = input.from + '/';
      if (overlapAt(input.storeId, input.to, '') !== null) {
        const rows = q.rangeFull.all(input.storeId, prefix, subtreeEnd(prefix), -1) as MemoryRow[];
        for (const row of rows) update(treeMoveUpdate(input, row));
        return rows.length;
      }
      const rows = q.rangeMeta.all(input.storeId, prefix, subtreeEnd(prefix), -1) as MemoryRow[];
      for (const row of rows) {
        const { memory: m, version } = treeMoveOf(input, row);
        insertVersion(version);
        q.updateMemory.run(m.path, m.contentSha256, m.contentSizeBytes, m.versionId, m.updatedAt, m.mode, us(m.atimeMs), us(m.mtimeMs), m.uid, m.gid, m.id);
      }
      return rows.length;
    }),

    getMemory(storeId, id) {
      const r = q.byId.get(storeId, id) as MemoryRow | undefined;
      return r ? toMemory(r) : null;
    },
    getMemoryByPath(storeId, path) {
      const r = q.byPath.get(storeId, path) as MemoryRow | undefined;
      return r ? toMemory(r) : null;
    },
    setMemoryAttrs: writeTx(db, (storeId: string, id: string, attrs: KeptAttrs, now: string): void => {
      keepAttrs(toMemory(mustGet(storeId, id)), attrs, now, true);
    }),

    listMemories(storeId, lq: MemoryListQuery): Page<MemoryListItem> {
      if (lq.depth === 0) {
        const stmt = lq.view === 'full' ? q.rangeFull : q.rangeMeta;
        return rangePage(stmt.all(storeId, rangeAfter(lq), subtreeEnd(lq.pathPrefix), lq.limit + 1) as MemoryRow[], lq);
      }
      const page = new ChildPage(lq.limit);
      for (const child of children(storeId, lq.pathPrefix, walkStart(lq))) {
        if (!page.wants()) break;
        if (child.item.type === 'memory') {
          const row = child.item.row;
          page.add(memoryItem(lq.view === 'full' ? (q.byId.get(storeId, row.id) as MemoryRow) : row, lq.view), child.resume);
        } else {
          page.add(child.item, child.resume);
        }
      }
      return page.result();
    },
  };
}
