/**
 * @module PostgreSQL operations for memories: writes that append versions, and path-ordered reads.
 * Every write first locks its store's row (FOR NO KEY UPDATE): writes to one store are ordered, so
 * the overlap probe, the preconditions (read after the lock, newest committed row) and the expiry
 * purge decide on what the write will change, whichever server runs them. The rules are the pure
 * functions the SQLite adapter applies (src/domain/), and what both compute around their SQL is
 * shared (storage/common/memory-writes.ts, memory-pages.ts).
 */
import { attrsAfterSet } from '../../domain/memory-attrs.js';
import { assertNoOverlap, assertStoreWritable, overlapProbe, type StoreState } from '../../domain/memory-rules.js';
import { MnemoError, notFound } from '../../domain/errors.js';
import { assertDeletePrecondition, planUpdate } from '../../domain/memory-updates.js';
import { subtreeEnd } from '../../domain/paths.js';
import type { KeptAttrs, Memory, MemoryListItem, MemoryListQuery, Page } from '../../domain/types.js';
import { ChildPage, memoryItem, rangeAfter, rangePage, walkStart } from '../common/memory-pages.js';
import { newMemory, saveAsUpdate, treeMoveUpdate, updatedMemory, us } from '../common/memory-writes.js';
import { deletionVersionRow, writeVersionRow } from '../common/version-rows.js';
import type * as port from '../port.js';
import { appendVersionRow } from './commit-order.js';
import { all, first, run, type Q } from './db.js';
import { purgeExpired } from './expiry.js';
import { FULL, META, live, toMemory, type MemoryRow } from './rows.js';
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

  async function insert(q: Q, store: StoreState | null, input: port.CreateMemoryInput & { attrs?: KeptAttrs }): Promise<Memory> {
    assertStoreWritable(input.storeId, store);
    assertStorable(input.content);
    await checkOverlap(q, input.storeId, input.path, '');
    const m = newMemory(input);
    await appendVersionRow(q, writeVersionRow(input, 'created', m));
    await run(
      q,
      // The text itself is stored once, with the version (postgres/schema/v9.ts); the row keeps its words.
      `INSERT INTO memories (id, store_id, path, search, content_sha256, content_size_bytes, version_id, mode, created_at, updated_at, expires_at,
                             atime_us, mtime_us, uid, gid)
       VALUES ($1, $2, $3, mnemo_search($3, $4), $5, $6, $7, $8, $9, $9, $10, $11, $12, $13, $14)`,
      [m.id, m.storeId, m.path, m.content, m.contentSha256, m.contentSizeBytes, m.versionId, m.mode, m.createdAt, m.expiresAt,
        us(m.atimeMs), us(m.mtimeMs), m.uid, m.gid],
    );
    return m;
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
    const m = updatedMemory(current, plan, input, expiresAt);
    await appendVersionRow(q, writeVersionRow(input, 'modified', m));
    await run(
      q,
      `UPDATE memories SET path = $1, search = mnemo_search($1, $2), content_sha256 = $3, content_size_bytes = $4, version_id = $5, updated_at = $6,
                           mode = $7, atime_us = $8, mtime_us = $9, ctime_us = NULL, uid = $10, gid = $11, expires_at = $12
       WHERE id = $13`,
      [m.path, m.content, m.contentSha256, m.contentSizeBytes, m.versionId, m.updatedAt, m.mode, us(m.atimeMs), us(m.mtimeMs), m.uid, m.gid,
        m.expiresAt, m.id],
    );
    return { memory: m, changed: true };
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
    await appendVersionRow(q, deletionVersionRow(stamp, row));
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
      return update(q, store, saveAsUpdate(input, row.id));
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
      for (const row of rows) await update(q, store, treeMoveUpdate(input, row));
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
      if (lq.depth === 0) {
        const rows = await all<MemoryRow>(
          q,
          `SELECT ${lq.view === 'full' ? FULL : META} FROM memories WHERE store_id = $1 AND path > $2 AND path < $3 AND ${live(5)} ORDER BY path LIMIT $4`,
          [storeId, rangeAfter(lq), subtreeEnd(lq.pathPrefix), lq.limit + 1, now],
        );
        return rangePage(rows, lq);
      }
      const page = new ChildPage(lq.limit);
      for await (const child of children(q, storeId, lq.pathPrefix, walkStart(lq), now)) {
        if (!page.wants()) break;
        if (child.item.type === 'memory') {
          const row = child.item.row;
          const full = lq.view === 'full' ? await byId(q, storeId, row.id) : row;
          page.add(full ? memoryItem(full, lq.view) : null, child.resume);
        } else {
          page.add(child.item, child.resume);
        }
      }
      return page.result();
    },
  };

  return { writes, reads };
}
