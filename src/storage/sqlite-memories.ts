/** @module SQLite statements for memories: writes that append versions, and path-ordered reads. */
import { byteLength, sha256Hex } from '../content.js';
import { notFound } from '../errors.js';
import { archivedStore, assertDeletePrecondition, pathConflict, planUpdate } from '../memories.js';
import { ancestors, assertMemoryPath, subtreeEnd } from '../paths.js';
import type { KeptAttrs, Memory, MemoryListItem, MemoryListQuery, MemoryMeta, Page } from '../types.js';
import { cursorNumber, cursorString, decodeCursor, encodeCursor } from './cursor.js';
import type {
  CreateMemoryInput,
  DeleteMemoryInput,
  DirectoryListing,
  MoveMemoryInput,
  MoveTreeInput,
  SaveMemoryAtInput,
  Storage,
  UpdateMemoryInput,
  WriteStamp,
} from './port.js';
import { actorColumns, msToUs, toMemory, toMemoryMeta, type MemoryRow } from './rows.js';
import { LIVE, createExpiryPurge } from './sqlite-expiry.js';
import type { SyncReads } from './sqlite-reads.js';
import { writeTx, type Db, type Statement } from './tx.js';

type MemoryStatements = Pick<
  Storage,
  | 'createMemory'
  | 'updateMemory'
  | 'deleteMemory'
  | 'getMemory'
  | 'getMemoryByPath'
  | 'getMemoryMetaByPath'
  | 'getMemoryBytesByPath'
  | 'setMemoryAttrs'
  | 'saveMemoryAt'
  | 'moveMemory'
  | 'moveTree'
  | 'listDirectory'
  | 'hasMemoriesUnder'
> &
  Pick<SyncReads, 'listMemories'>;

const META =
  'seq, id, store_id, path, content_sha256, content_size_bytes, version_id, mode, created_at, updated_at, expires_at, atime_us, mtime_us, ctime_us, uid, gid';

export function createMemoryStatements(db: Db): MemoryStatements {
  const q = {
    storeState: db.prepare('SELECT archived_at FROM stores WHERE id = ?'),
    byId: db.prepare(`SELECT * FROM memories WHERE store_id = ? AND id = ? AND ${LIVE}`),
    byPath: db.prepare(`SELECT * FROM memories WHERE store_id = ? AND path = ? AND ${LIVE}`),
    // The planner would take the unique (store_id, path) index and read the row past its content.
    metaByPath: db.prepare(`SELECT ${META} FROM memories INDEXED BY memories_meta_by_path WHERE store_id = ? AND path = ? AND ${LIVE}`),
    // The content as UTF-8 bytes straight from the row: no decode to a JS string and encode back.
    bytesByPath: db.prepare(`SELECT ${META}, CAST(content AS BLOB) AS bytes FROM memories WHERE store_id = ? AND path = ? AND ${LIVE}`),
    descendant: db.prepare('SELECT id, path FROM memories WHERE store_id = ? AND path > ? AND path < ? AND id != ? LIMIT 1'),
    insertVersion: db.prepare(
      `INSERT INTO versions (id, store_id, memory_id, operation, path, content, content_sha256, content_size_bytes,
                             created_at, actor_type, actor_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
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
    nextGt: db.prepare(`SELECT ${META} FROM memories WHERE store_id = ? AND path > ? AND path < ? AND ${LIVE} ORDER BY path LIMIT ?`),
    nextGte: db.prepare(`SELECT ${META} FROM memories WHERE store_id = ? AND path >= ? AND path < ? AND ${LIVE} ORDER BY path LIMIT ?`),
    anyUnder: db.prepare(`SELECT 1 FROM memories WHERE store_id = ? AND path > ? AND path < ? AND ${LIVE} LIMIT 1`),
  };
  const purgeExpired = createExpiryPurge(db);
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
    if (!s) throw notFound('memory store', storeId);
    if (s.archived_at) throw archivedStore(storeId);
  }

  /** Invariant 2: the path must not equal, contain, or sit below another live memory's path. */
  function assertNoOverlap(storeId: string, path: string, selfId: string): void {
    const candidates = [path, ...ancestors(path)];
    const hit =
      (atAnyPath(candidates.length).get(storeId, ...candidates, selfId) as { id: string; path: string } | undefined) ??
      (q.descendant.get(storeId, path + '/', subtreeEnd(path + '/'), selfId) as { id: string; path: string } | undefined);
    if (hit) throw pathConflict(path, hit);
  }

  function appendVersion(
    stamp: WriteStamp,
    storeId: string,
    memoryId: string,
    op: 'created' | 'modified' | 'deleted',
    path: string,
    body: { content: string; sha: string; size: number } | null,
  ): void {
    const a = actorColumns(stamp.actor);
    q.insertVersion.run(
      stamp.versionId, storeId, memoryId, op, path,
      body?.content ?? null, body?.sha ?? null, body?.size ?? null,
      stamp.now, a.type, a.id,
    );
  }

  function mustGet(storeId: string, id: string): MemoryRow {
    const row = q.byId.get(storeId, id) as MemoryRow | undefined;
    if (!row) throw notFound('memory', id);
    return row;
  }

  function insert(input: CreateMemoryInput & { attrs?: KeptAttrs }): Memory {
    assertWritable(input.storeId);
    assertNoOverlap(input.storeId, input.path, '');
    const sha = sha256Hex(input.content);
    const size = byteLength(input.content);
    appendVersion(input, input.storeId, input.memoryId, 'created', input.path, { content: input.content, sha, size });
    const mode = input.attrs?.mode ?? input.mode ?? 0o644;
    const expiresAt = input.expiresAt ?? null;
    const a = input.attrs ?? {};
    const kept = { atimeMs: a.atimeMs ?? null, mtimeMs: a.mtimeMs ?? null, ctimeMs: null, uid: a.uid ?? null, gid: a.gid ?? null };
    q.insertMemory.run(
      input.memoryId, input.storeId, input.path, input.content, sha, size, input.versionId, mode, input.now, input.now, expiresAt,
      us(kept.atimeMs), us(kept.mtimeMs), kept.uid, kept.gid,
    );
    return {
      id: input.memoryId, storeId: input.storeId, path: input.path, content: input.content,
      contentSha256: sha, contentSizeBytes: size, versionId: input.versionId, mode,
      createdAt: input.now, updatedAt: input.now, expiresAt, ...kept,
    };
  }

  function update(input: UpdateMemoryInput): { memory: Memory; changed: boolean } {
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
    if (plan.renamed) assertNoOverlap(input.storeId, plan.path, current.id);
    appendVersion(input, input.storeId, current.id, 'modified', plan.path, { content: plan.content, sha: plan.sha256, size: plan.size });
    const kept = afterVersion(current, plan.content !== current.content, input.attrs);
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

  /**
   * The kept attributes once a version lands (schema-attrs.ts): new content takes the save time as
   * mtime and ctime (unless the save carries an mtime set after its last write), a rename keeps the
   * mtime and moves the ctime; a NULL atime is frozen at the old mtime either way.
   */
  function afterVersion(current: Memory, contentChanged: boolean, a: KeptAttrs = {}) {
    const oldMtime = current.mtimeMs ?? Date.parse(current.updatedAt);
    return {
      mode: a.mode ?? current.mode,
      atimeMs: a.atimeMs ?? current.atimeMs ?? oldMtime,
      mtimeMs: a.mtimeMs ?? (contentChanged ? null : oldMtime),
      ctimeMs: null,
      uid: a.uid ?? current.uid,
      gid: a.gid ?? current.gid,
    };
  }

  /**
   * Sets attributes without a version; the ctime moves to `now` when anything changed (or always,
   * with `always`: a chmod, chown or utimens moves it even when it sets the values already there).
   */
  function keepAttrs(m: Memory, a: KeptAttrs, now: string, always: boolean): Memory {
    // An atime that follows the mtime stays where it was when only the mtime is set (touch -m).
    const atimeMs = a.atimeMs ?? (a.mtimeMs !== undefined && m.atimeMs === null ? (m.mtimeMs ?? Date.parse(m.updatedAt)) : m.atimeMs);
    const next = { mode: a.mode ?? m.mode, atimeMs, mtimeMs: a.mtimeMs ?? m.mtimeMs, uid: a.uid ?? m.uid, gid: a.gid ?? m.gid };
    const same = next.mode === m.mode && next.atimeMs === m.atimeMs && next.mtimeMs === m.mtimeMs && next.uid === m.uid && next.gid === m.gid;
    if (same && !always) return m;
    assertWritable(m.storeId);
    const ctimeMs = Date.parse(now);
    q.setAttrs.run(next.mode, us(next.atimeMs), us(next.mtimeMs), us(ctimeMs), next.uid, next.gid, m.id);
    return { ...m, ...next, ctimeMs };
  }

  function remove(stamp: WriteStamp, row: MemoryRow): void {
    appendVersion(stamp, row.store_id, row.id, 'deleted', row.path, null);
    q.deleteMemory.run(row.id);
  }

  /**
   * Direct children of `prefix` (ending in "/") from `start`, rolling deeper paths into prefixes.
   * Rows come in keyset pages that grow while they hold files (a directory of 1,000 files is a few
   * queries, not 1,000) and drop back to one row after each jump past a subdirectory.
   */
  function* children(storeId: string, prefix: string, start: { key: string; inclusive: boolean }) {
    const end = subtreeEnd(prefix);
    let key = start.key;
    let inclusive = start.inclusive;
    let batch = 1;
    for (;;) {
      const rows = (inclusive ? q.nextGte : q.nextGt).all(storeId, key, end, batch) as MemoryRow[];
      if (rows.length === 0) return;
      let jumped = false;
      for (const row of rows) {
        const rest = row.path.slice(prefix.length);
        const slash = rest.indexOf('/');
        if (slash < 0) {
          key = row.path;
          inclusive = false;
          yield { item: { type: 'memory', row } as const, resume: { k: key, x: 0 } };
        } else {
          const dir = prefix + rest.slice(0, slash + 1);
          key = subtreeEnd(dir);
          inclusive = true;
          jumped = true;
          yield { item: { type: 'memory_prefix', path: dir } as const, resume: { k: key, x: 1 } };
          break;
        }
      }
      if (!jumped && rows.length < batch) return;
      batch = jumped ? 1 : Math.min(batch * 4, 256);
    }
  }

  return {
    createMemory: writeTx(db, (input: CreateMemoryInput): Memory => {
      purgeExpired(input.storeId, input.now);
      return insert(input);
    }),
    updateMemory: writeTx(db, (input: UpdateMemoryInput) => {
      purgeExpired(input.storeId, input.now);
      return update(input);
    }),
    deleteMemory: writeTx(db, (input: DeleteMemoryInput): void => {
      purgeExpired(input.storeId, input.now);
      const row = mustGet(input.storeId, input.memoryId);
      assertDeletePrecondition(toMemory(row), input.expectedSha256);
      remove(input, row);
    }),

    saveMemoryAt: writeTx(db, (input: SaveMemoryAtInput) => {
      purgeExpired(input.storeId, input.now);
      const row = q.byPath.get(input.storeId, input.path) as MemoryRow | undefined;
      if (!row) return { memory: insert(input), changed: true };
      const attrs = input.mode === undefined ? input.attrs : { ...input.attrs, mode: input.mode };
      return update({ ...input, memoryId: row.id, ...(attrs ? { attrs } : {}) });
    }),

    moveMemory: writeTx(db, (input: MoveMemoryInput): Memory => {
      purgeExpired(input.storeId, input.now);
      const current = mustGet(input.storeId, input.memoryId);
      if (current.path === input.path) return toMemory(current);
      assertWritable(input.storeId);
      const replaced = atAnyPath(1).get(input.storeId, input.path, input.memoryId) as { id: string } | undefined;
      if (replaced) remove({ ...input, versionId: input.replacedVersionId }, mustGet(input.storeId, replaced.id));
      return update({ ...input, path: input.path }).memory;
    }),

    moveTree: writeTx(db, (input: MoveTreeInput): number => {
      purgeExpired(input.storeId, input.now);
      assertWritable(input.storeId);
      const prefix = input.from + '/';
      const rows = q.rangeFull.all(input.storeId, prefix, subtreeEnd(prefix), -1) as MemoryRow[];
      for (const row of rows) {
        // A deeper destination can push a moved path past the limits; the whole move then fails.
        const path = assertMemoryPath(input.to + row.path.slice(input.from.length));
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
    getMemoryMetaByPath(storeId, path): MemoryMeta | null {
      const r = q.metaByPath.get(storeId, path) as MemoryRow | undefined;
      return r ? toMemoryMeta(r) : null;
    },
    getMemoryBytesByPath(storeId, path) {
      const r = q.bytesByPath.get(storeId, path) as (MemoryRow & { bytes: Buffer | null }) | undefined;
      return r ? { ...toMemoryMeta(r), bytes: r.bytes ?? Buffer.alloc(0) } : null;
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

    listDirectory(storeId, dir, limit = Infinity): DirectoryListing {
      const prefix = dir === '/' ? '/' : dir + '/';
      const files: MemoryMeta[] = [];
      const dirs: string[] = [];
      for (const child of children(storeId, prefix, { key: prefix, inclusive: false })) {
        if (files.length + dirs.length === limit) return { files, dirs, truncated: true };
        if (child.item.type === 'memory') files.push(toMemoryMeta(child.item.row));
        else dirs.push(child.item.path.slice(prefix.length, -1));
      }
      return { files, dirs };
    },

    hasMemoriesUnder(storeId, dir) {
      const prefix = dir === '/' ? '/' : dir + '/';
      return q.anyUnder.get(storeId, prefix, subtreeEnd(prefix)) !== undefined;
    },
  };
}

/** A kept time in the row's unit (integer microseconds), or NULL. */
function us(ms: number | null): number | null {
  return ms === null ? null : msToUs(ms);
}
