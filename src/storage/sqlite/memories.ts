/** @module SQLite statements for memories: writes that append versions, and path-ordered reads. */
import { byteLength, sha256Hex } from '../../domain/content.js';
import { attrsAfterSet, attrsAfterVersion, attrsOfNewMemory } from '../../domain/memory-attrs.js';
import { assertNoOverlap, assertStoreWritable, movedPath, overlapProbe } from '../../domain/memory-rules.js';
import { notFound } from '../../domain/errors.js';
import { assertDeletePrecondition, planUpdate } from '../../domain/memory-updates.js';
import { subtreeEnd } from '../../domain/paths.js';
import type { KeptAttrs, Memory, MemoryListItem, MemoryListQuery, MemoryMeta, Page } from '../../domain/types.js';
import { cursorNumber, cursorString, decodeCursor, encodeCursor } from '../cursor.js';
// The port's input types by role name (port.CreateMemoryInput…): one import for the whole set.
import type * as port from '../port.js';
import { META, actorColumns, msToUs, toMemory, toMemoryMeta, type MemoryRow } from '../common/rows.js';
import { createVersionAppend } from './commit-order.js';
import { LIVE, createExpiryPurge } from './expiry.js';
import type { ChildWalk } from './tree.js';
import type { Synchronous, SyncReads } from './reads.js';
import { writeTx, type Db, type Statement } from './tx.js';

type MemoryStatements = Omit<Synchronous<port.MemoryStorage>, 'getVersion' | 'listVersions' | 'redactVersion' | 'listMemories'> & Pick<SyncReads, 'listMemories'>;

export function createMemoryStatements(db: Db, children: ChildWalk): MemoryStatements {
  const q = {
    storeState: db.prepare('SELECT archived_at FROM stores WHERE id = ?'),
    byId: db.prepare(`SELECT * FROM memories WHERE store_id = ? AND id = ? AND ${LIVE}`),
    byPath: db.prepare(`SELECT * FROM memories WHERE store_id = ? AND path = ? AND ${LIVE}`),
    descendant: db.prepare('SELECT id, path FROM memories WHERE store_id = ? AND path > ? AND path < ? AND id != ? LIMIT 1'),
    insertMemory: db.prepare(
      `INSERT INTO memories (id, store_id, path, content, content_sha256, content_size_bytes, version_id, mode, created_at, updated_at, expires_at,
                            atime_us, mtime_us, uid, gid)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    updateMemory: db.prepare(
      `UPDATE memories SET path = ?, content = ?, content_sha256 = ?, content_size_bytes = ?, version_id = ?, updated_at = ?,
                           mode = ?, atime_us = ?, mtime_us = ?, ctime_us = NULL, uid = ?, gid = ?
       WHERE id = ?`,
    ),
    setExpiry: db.prepare('UPDATE memories SET expires_at = ? WHERE id = ?'),
    deleteMemory: db.prepare('DELETE FROM memories WHERE id = ?'),
    setAttrs: db.prepare('UPDATE memories SET mode = ?, atime_us = ?, mtime_us = ?, ctime_us = ?, uid = ?, gid = ? WHERE id = ?'),
    rangeMeta: db.prepare(
      `SELECT ${META} FROM memories WHERE store_id = ? AND path > ? AND path < ? AND ${LIVE} ORDER BY path LIMIT ?`,
    ),
    rangeFull: db.prepare(`SELECT * FROM memories WHERE store_id = ? AND path > ? AND path < ? AND ${LIVE} ORDER BY path LIMIT ?`),
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

  /** Invariant 2 (src/domain/memory-rules.ts): finds a live memory, other than `selfId`, where one would overlap `path`. */
  function checkOverlap(storeId: string, path: string, selfId: string): void {
    const probe = overlapProbe(path);
    const hit =
      (atAnyPath(probe.atOrAbove.length).get(storeId, ...probe.atOrAbove, selfId) as { id: string; path: string } | undefined) ??
      (q.descendant.get(storeId, probe.below, subtreeEnd(probe.below), selfId) as { id: string; path: string } | undefined);
    assertNoOverlap(path, hit ?? null);
  }

  function appendVersion(
    stamp: port.WriteStamp,
    storeId: string,
    memoryId: string,
    op: 'created' | 'modified' | 'deleted',
    path: string,
    body: { content: string; sha: string; size: number } | null,
  ): void {
    const a = actorColumns(stamp.actor);
    insertVersion({
      id: stamp.versionId, storeId, memoryId, operation: op, path,
      content: body?.content ?? null, sha: body?.sha ?? null, size: body?.size ?? null,
      createdAt: stamp.now, actorType: a.type, actorId: a.id,
    });
  }

  function mustGet(storeId: string, id: string): MemoryRow {
    const row = q.byId.get(storeId, id) as MemoryRow | undefined;
    if (!row) throw notFound('memory', id);
    return row;
  }

  function insert(input: port.CreateMemoryInput & { attrs?: KeptAttrs }): Memory {
    assertWritable(input.storeId);
    checkOverlap(input.storeId, input.path, '');
    const sha = sha256Hex(input.content);
    const size = byteLength(input.content);
    appendVersion(input, input.storeId, input.memoryId, 'created', input.path, { content: input.content, sha, size });
    const expiresAt = input.expiresAt ?? null;
    const kept = attrsOfNewMemory(input.attrs, input.mode);
    q.insertMemory.run(
      input.memoryId, input.storeId, input.path, input.content, sha, size, input.versionId, kept.mode, input.now, input.now, expiresAt,
      us(kept.atimeMs), us(kept.mtimeMs), kept.uid, kept.gid,
    );
    return {
      id: input.memoryId, storeId: input.storeId, path: input.path, content: input.content,
      contentSha256: sha, contentSizeBytes: size, versionId: input.versionId,
      createdAt: input.now, updatedAt: input.now, expiresAt, ...kept,
    };
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
    appendVersion(input, input.storeId, current.id, 'modified', plan.path, { content: plan.content, sha: plan.sha256, size: plan.size });
    const kept = attrsAfterVersion(current, plan.content !== current.content, input.attrs);
    q.updateMemory.run(
      plan.path, plan.content, plan.sha256, plan.size, input.versionId, input.now,
      kept.mode, us(kept.atimeMs), us(kept.mtimeMs), kept.uid, kept.gid, current.id,
    );
    if (expiresAt !== current.expiresAt) q.setExpiry.run(expiresAt, current.id);
    const memory: Memory = {
      ...current, path: plan.path, content: plan.content, contentSha256: plan.sha256,
      contentSizeBytes: plan.size, versionId: input.versionId, updatedAt: input.now, expiresAt, ...kept,
    };
    return { memory, changed: true };
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
    appendVersion(stamp, row.store_id, row.id, 'deleted', row.path, null);
    q.deleteMemory.run(row.id);
  }

  return {
    createMemory: writeTx(db, (input: port.CreateMemoryInput): Memory => {
      purgeExpired(input.storeId, input.now);
      return insert(input);
    }),
    updateMemory: writeTx(db, (input: port.UpdateMemoryInput) => {
      purgeExpired(input.storeId, input.now);
      return update(input);
    }),
    deleteMemory: writeTx(db, (input: port.DeleteMemoryInput): void => {
      purgeExpired(input.storeId, input.now);
      const row = mustGet(input.storeId, input.memoryId);
      assertDeletePrecondition(toMemory(row), input.expectedSha256);
      remove(input, row);
    }),

    saveMemoryAt: writeTx(db, (input: port.SaveMemoryAtInput) => {
      purgeExpired(input.storeId, input.now);
      const row = q.byPath.get(input.storeId, input.path) as MemoryRow | undefined;
      if (!row) return { memory: insert(input), changed: true };
      const attrs = input.mode === undefined ? input.attrs : { ...input.attrs, mode: input.mode };
      return update({ ...input, memoryId: row.id, ...(attrs ? { attrs } : {}) });
    }),

    moveMemory: writeTx(db, (input: port.MoveMemoryInput): Memory => {
      purgeExpired(input.storeId, input.now);
      const current = mustGet(input.storeId, input.memoryId);
      if (current.path === input.path) return toMemory(current);
      assertWritable(input.storeId);
      const replaced = atAnyPath(1).get(input.storeId, input.path, input.memoryId) as { id: string } | undefined;
      if (replaced) remove({ ...input, versionId: input.replacedVersionId }, mustGet(input.storeId, replaced.id));
      return update({ ...input, path: input.path }).memory;
    }),

    moveTree: writeTx(db, (input: port.MoveTreeInput): number => {
      purgeExpired(input.storeId, input.now);
      assertWritable(input.storeId);
      const prefix = input.from + '/';
      const rows = q.rangeFull.all(input.storeId, prefix, subtreeEnd(prefix), -1) as MemoryRow[];
      for (const row of rows) {
        const path = movedPath(input.from, input.to, row.path);
        update({ actor: input.actor, now: input.now, versionId: input.versionIds(), storeId: input.storeId, memoryId: row.id, path });
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
      const c = decodeCursor(lq.page);
      if (lq.depth === 0) {
        // A cursor taken from another query must not lead the range out of the prefix.
        const k = c ? cursorString(c, 'k') : null;
        const after = k !== null && k > lq.pathPrefix ? k : lq.pathPrefix;
        const stmt = lq.view === 'full' ? q.rangeFull : q.rangeMeta;
        const rows = stmt.all(storeId, after, subtreeEnd(lq.pathPrefix), lq.limit + 1) as MemoryRow[];
        const page = rows.slice(0, lq.limit);
        const data = page.map((r): MemoryListItem => ({ type: 'memory', memory: lq.view === 'full' ? toMemory(r) : toMemoryMeta(r) }));
        return { data, nextPage: rows.length > lq.limit ? encodeCursor({ k: page[page.length - 1]!.path }) : null };
      }
      const resumeAt = c ? { key: cursorString(c, 'k'), inclusive: cursorNumber(c, 'x') === 1 } : null;
      const start = resumeAt && resumeAt.key > lq.pathPrefix ? resumeAt : { key: lq.pathPrefix, inclusive: false };
      const data: MemoryListItem[] = [];
      let resume: { k: string; x: number } | null = null;
      let more = false;
      for (const child of children(storeId, lq.pathPrefix, start)) {
        if (data.length === lq.limit) {
          more = true;
          break;
        }
        if (child.item.type === 'memory') {
          const row = child.item.row;
          const full = lq.view === 'full' ? (q.byId.get(storeId, row.id) as MemoryRow) : row;
          data.push({ type: 'memory', memory: lq.view === 'full' ? toMemory(full) : toMemoryMeta(full) });
        } else {
          data.push(child.item);
        }
        resume = child.resume;
      }
      return { data, nextPage: more && resume ? encodeCursor(resume) : null };
    },

  };
}

/** A kept time in the row's unit (integer microseconds), or NULL. */
function us(ms: number | null): number | null {
  return ms === null ? null : msToUs(ms);
}
