/**
 * @module PostgreSQL operations for memories: writes that append versions, and path-ordered reads.
 * Every write first locks its store's row (FOR NO KEY UPDATE): writes to one store are ordered, so
 * the overlap probe, the preconditions (read after the lock, newest committed row) and the expiry
 * purge decide on what the write will change, whichever server runs them. The rules are the pure
 * functions the SQLite adapter applies (src/domain/).
 */
import { byteLength, sha256Hex } from '../../domain/content.js';
import { attrsAfterSet, attrsAfterVersion, attrsOfNewMemory } from '../../domain/memory-attrs.js';
import { assertNoOverlap, assertStoreWritable, movedPath, overlapProbe, type StoreState } from '../../domain/memory-rules.js';
import { MnemoError, notFound } from '../../domain/errors.js';
import { assertDeletePrecondition, planUpdate } from '../../domain/memory-updates.js';
import { subtreeEnd } from '../../domain/paths.js';
import type { KeptAttrs, Memory, MemoryListItem, MemoryListQuery, Page } from '../../domain/types.js';
import { cursorNumber, cursorString, decodeCursor, encodeCursor } from '../cursor.js';
import type * as port from '../port.js';
import { appendVersionRow } from './commit-order.js';
import { all, first, run, type Q } from './db.js';
import { purgeExpired } from './expiry.js';
import { FULL, META, actorColumns, live, msToUs, toMemory, toMemoryMeta, type MemoryRow } from './rows.js';
import { children } from './tree.js';

/** What memory operations need beyond the statements: the clock readers hide expired memories by. */
export interface MemoryContext {
  clock: () => string;
}

/** Locks the store for this write and returns its state (null: no such store). */
export async function lockStore(q: Q, storeId: string): Promise<StoreState | null> {
  const s = await first<{ archived_at: string | null }>(q, 'SELECT archived_at FROM stores WHERE id = $1 FOR NO KEY UPDATE', [storeId]);
  return s ? { archivedAt: s.archived_at } : null;
}

/** PostgreSQL text cannot hold U+0000; SQLite can. Refused as invalid input rather than a 500. */
function assertStorable(content: string): void {
  if (content.includes('\0')) {
    throw new MnemoError('invalid_request', 'content: contains U+0000 (NUL), which a PostgreSQL-backed store cannot hold', { field: 'content' });
  }
}

export function memoryOps(ctx: MemoryContext) {
  const byId = (q: Q, storeId: string, id: string) =>
    first<MemoryRow>(q, `SELECT ${FULL} FROM memories WHERE store_id = $1 AND id = $2 AND ${live(3)}`, [storeId, id, ctx.clock()]);
  const byPath = (q: Q, storeId: string, path: string) =>
    first<MemoryRow>(q, `SELECT ${FULL} FROM memories WHERE store_id = $1 AND path = $2 AND ${live(3)}`, [storeId, path, ctx.clock()]);

  async function mustGet(q: Q, storeId: string, id: string): Promise<MemoryRow> {
    const row = await byId(q, storeId, id);
    if (!row) throw notFound('memory', id);
    return row;
  }

  /** Invariant 2: a live memory other than `selfId` where one at `path` would overlap (any live one, as SQLite's probe). */
  async function checkOverlap(q: Q, storeId: string, path: string, selfId: string): Promise<void> {
    const probe = overlapProbe(path);
    // One round trip: the path and its ancestors first, then anything below (Append runs its branches in order).
    const hit = await first<{ id: string; path: string }>(
      q,
      `(SELECT id, path FROM memories WHERE store_id = $1 AND path = ANY($2::text[]) AND id <> $3 LIMIT 1)
       UNION ALL
       (SELECT id, path FROM memories WHERE store_id = $1 AND path > $4 AND path < $5 AND id <> $3 LIMIT 1)
       LIMIT 1`,
      [storeId, probe.atOrAbove, selfId, probe.below, subtreeEnd(probe.below)],
    );
    assertNoOverlap(path, hit ?? null);
  }

  async function appendVersion(
    q: Q,
    stamp: port.WriteStamp,
    storeId: string,
    memoryId: string,
    op: 'created' | 'modified' | 'deleted',
    path: string,
    body: { content: string; sha: string; size: number } | null,
  ): Promise<void> {
    const a = actorColumns(stamp.actor);
    await appendVersionRow(q, {
      id: stamp.versionId, storeId, memoryId, operation: op, path, content: body?.content ?? null, sha: body?.sha ?? null,
      size: body?.size ?? null, createdAt: stamp.now, actorType: a.type, actorId: a.id,
    });
  }

  async function insert(q: Q, store: StoreState | null, input: port.CreateMemoryInput & { attrs?: KeptAttrs }): Promise<Memory> {
    assertStoreWritable(input.storeId, store);
    assertStorable(input.content);
    await checkOverlap(q, input.storeId, input.path, '');
    const sha = sha256Hex(input.content);
    const size = byteLength(input.content);
    await appendVersion(q, input, input.storeId, input.memoryId, 'created', input.path, { content: input.content, sha, size });
    const expiresAt = input.expiresAt ?? null;
    const kept = attrsOfNewMemory(input.attrs, input.mode);
    await run(
      q,
      `INSERT INTO memories (id, store_id, path, content, content_sha256, content_size_bytes, version_id, mode, created_at, updated_at, expires_at,
                             atime_us, mtime_us, uid, gid)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10, $11, $12, $13, $14)`,
      [input.memoryId, input.storeId, input.path, input.content, sha, size, input.versionId, kept.mode, input.now, expiresAt,
        us(kept.atimeMs), us(kept.mtimeMs), kept.uid, kept.gid],
    );
    return {
      id: input.memoryId, storeId: input.storeId, path: input.path, content: input.content,
      contentSha256: sha, contentSizeBytes: size, versionId: input.versionId,
      createdAt: input.now, updatedAt: input.now, expiresAt, ...kept,
    };
  }

  async function update(q: Q, store: StoreState | null, input: port.UpdateMemoryInput): Promise<port.WriteResult> {
    const current = toMemory(await mustGet(q, input.storeId, input.memoryId));
    const plan = planUpdate(current, input);
    const expiresAt = input.expiresAt === undefined ? current.expiresAt : input.expiresAt;
    // Before the no-op check: an update sent to an archived store is refused even if it would change nothing.
    assertStoreWritable(input.storeId, store);
    if (plan.kind === 'noop') {
      // A TTL is not versioned (like mode): renewing it changes the row but appends no version.
      let memory = current;
      if (expiresAt !== current.expiresAt) {
        await run(q, 'UPDATE memories SET expires_at = $1 WHERE id = $2', [expiresAt, current.id]);
        memory = { ...memory, expiresAt };
      }
      return { memory: input.attrs ? await keepAttrs(q, store, memory, input.attrs, input.now, false) : memory, changed: false };
    }
    if (plan.content !== current.content) assertStorable(plan.content);
    if (plan.renamed) await checkOverlap(q, input.storeId, plan.path, current.id);
    await appendVersion(q, input, input.storeId, current.id, 'modified', plan.path, { content: plan.content, sha: plan.sha256, size: plan.size });
    const kept = attrsAfterVersion(current, plan.content !== current.content, input.attrs);
    await run(
      q,
      `UPDATE memories SET path = $1, content = $2, content_sha256 = $3, content_size_bytes = $4, version_id = $5, updated_at = $6,
                           mode = $7, atime_us = $8, mtime_us = $9, ctime_us = NULL, uid = $10, gid = $11, expires_at = $12
       WHERE id = $13`,
      [plan.path, plan.content, plan.sha256, plan.size, input.versionId, input.now, kept.mode, us(kept.atimeMs), us(kept.mtimeMs), kept.uid, kept.gid,
        expiresAt, current.id],
    );
    const memory: Memory = {
      ...current, path: plan.path, content: plan.content, contentSha256: plan.sha256,
      contentSizeBytes: plan.size, versionId: input.versionId, updatedAt: input.now, expiresAt, ...kept,
    };
    return { memory, changed: true };
  }

  /** Sets attributes without a version (src/domain/memory-attrs.ts decides what they become). */
  async function keepAttrs(q: Q, store: StoreState | null, m: Memory, a: KeptAttrs, now: string, always: boolean): Promise<Memory> {
    const next = attrsAfterSet(m, a, now, always);
    if (!next) return m;
    assertStoreWritable(m.storeId, store);
    await run(q, 'UPDATE memories SET mode = $1, atime_us = $2, mtime_us = $3, ctime_us = $4, uid = $5, gid = $6 WHERE id = $7', [
      next.mode, us(next.atimeMs), us(next.mtimeMs), us(next.ctimeMs), next.uid, next.gid, m.id,
    ]);
    return { ...m, ...next };
  }

  async function remove(q: Q, stamp: port.WriteStamp, row: MemoryRow): Promise<void> {
    await appendVersion(q, stamp, row.store_id, row.id, 'deleted', row.path, null);
    await run(q, 'DELETE FROM memories WHERE id = $1', [row.id]);
  }

  /** The store locked, then its expired memories purged: how every memory write begins. */
  async function begin(q: Q, storeId: string, now: string): Promise<StoreState | null> {
    const store = await lockStore(q, storeId);
    if (store) await purgeExpired(q, storeId, now);
    return store;
  }

  const writes = {
    async createMemory(q: Q, input: port.CreateMemoryInput): Promise<Memory> {
      return insert(q, await begin(q, input.storeId, input.now), input);
    },
    async updateMemory(q: Q, input: port.UpdateMemoryInput): Promise<port.WriteResult> {
      return update(q, await begin(q, input.storeId, input.now), input);
    },
    async deleteMemory(q: Q, input: port.DeleteMemoryInput): Promise<void> {
      await begin(q, input.storeId, input.now);
      const row = await mustGet(q, input.storeId, input.memoryId);
      assertDeletePrecondition(toMemory(row), input.expectedSha256);
      await remove(q, input, row);
    },
    async saveMemoryAt(q: Q, input: port.SaveMemoryAtInput): Promise<port.WriteResult> {
      const store = await begin(q, input.storeId, input.now);
      const row = await byPath(q, input.storeId, input.path);
      if (!row) return { memory: await insert(q, store, input), changed: true };
      const attrs = input.mode === undefined ? input.attrs : { ...input.attrs, mode: input.mode };
      return update(q, store, { ...input, memoryId: row.id, ...(attrs ? { attrs } : {}) });
    },
    async moveMemory(q: Q, input: port.MoveMemoryInput): Promise<Memory> {
      const store = await begin(q, input.storeId, input.now);
      const current = await mustGet(q, input.storeId, input.memoryId);
      if (current.path === input.path) return toMemory(current);
      assertStoreWritable(input.storeId, store);
      const replaced = await first<{ id: string }>(q, 'SELECT id FROM memories WHERE store_id = $1 AND path = $2 AND id <> $3 LIMIT 1', [
        input.storeId, input.path, input.memoryId,
      ]);
      if (replaced) await remove(q, { ...input, versionId: input.replacedVersionId }, await mustGet(q, input.storeId, replaced.id));
      return (await update(q, store, { ...input, path: input.path })).memory;
    },
    async moveTree(q: Q, input: port.MoveTreeInput): Promise<number> {
      const store = await begin(q, input.storeId, input.now);
      assertStoreWritable(input.storeId, store);
      const prefix = input.from + '/';
      const rows = await all<MemoryRow>(q, `SELECT ${META} FROM memories WHERE store_id = $1 AND path > $2 AND path < $3 AND ${live(4)} ORDER BY path`, [
        input.storeId, prefix, subtreeEnd(prefix), ctx.clock(),
      ]);
      for (const row of rows) {
        const path = movedPath(input.from, input.to, row.path);
        await update(q, store, { actor: input.actor, now: input.now, versionId: input.versionIds(), storeId: input.storeId, memoryId: row.id, path });
      }
      return rows.length;
    },
    async setMemoryAttrs(q: Q, storeId: string, id: string, attrs: KeptAttrs, now: string): Promise<void> {
      const store = await lockStore(q, storeId);
      await keepAttrs(q, store, toMemory(await mustGet(q, storeId, id)), attrs, now, true);
    },
  };

  const reads = {
    async getMemory(q: Q, storeId: string, id: string): Promise<Memory | null> {
      const r = await byId(q, storeId, id);
      return r ? toMemory(r) : null;
    },
    async getMemoryByPath(q: Q, storeId: string, path: string): Promise<Memory | null> {
      const r = await byPath(q, storeId, path);
      return r ? toMemory(r) : null;
    },
    async listMemories(q: Q, storeId: string, lq: MemoryListQuery): Promise<Page<MemoryListItem>> {
      const now = ctx.clock();
      const c = decodeCursor(lq.page);
      if (lq.depth === 0) {
        // A cursor taken from another query must not lead the range out of the prefix.
        const k = c ? cursorString(c, 'k') : null;
        const after = k !== null && k > lq.pathPrefix ? k : lq.pathPrefix;
        const rows = await all<MemoryRow>(
          q,
          `SELECT ${lq.view === 'full' ? FULL : META} FROM memories WHERE store_id = $1 AND path > $2 AND path < $3 AND ${live(5)} ORDER BY path LIMIT $4`,
          [storeId, after, subtreeEnd(lq.pathPrefix), lq.limit + 1, now],
        );
        const page = rows.slice(0, lq.limit);
        const data = page.map((r): MemoryListItem => ({ type: 'memory', memory: lq.view === 'full' ? toMemory(r) : toMemoryMeta(r) }));
        return { data, nextPage: rows.length > lq.limit ? encodeCursor({ k: page[page.length - 1]!.path }) : null };
      }
      const resumeAt = c ? { key: cursorString(c, 'k'), inclusive: cursorNumber(c, 'x') === 1 } : null;
      const start = resumeAt && resumeAt.key > lq.pathPrefix ? resumeAt : { key: lq.pathPrefix, inclusive: false };
      const data: MemoryListItem[] = [];
      let resume: { k: string; x: number } | null = null;
      let more = false;
      for await (const child of children(q, storeId, lq.pathPrefix, start, now)) {
        if (data.length === lq.limit) {
          more = true;
          break;
        }
        if (child.item.type === 'memory') {
          const row = child.item.row;
          const full = lq.view === 'full' ? await byId(q, storeId, row.id) : row;
          if (full) data.push({ type: 'memory', memory: lq.view === 'full' ? toMemory(full) : toMemoryMeta(full) });
        } else {
          data.push(child.item);
        }
        resume = child.resume;
      }
      return { data, nextPage: more && resume ? encodeCursor(resume) : null };
    },
  };

  return { writes, reads };
}

/** A kept time in the row's unit (integer microseconds), or NULL. */
function us(ms: number | null): number | null {
  return ms === null ? null : msToUs(ms);
}
