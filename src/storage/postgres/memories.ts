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
import { newMemory, saveAsUpdate, treeMoveOf, treeMoveUpdate, updatedMemory, us } from '../common/memory-writes.js';
import { WRITE_PURGE_MAX, deletionVersionRow, writeVersionRow } from '../common/version-rows.js';
import type * as port from '../port.js';
import { appendGuardedCreate, appendMovedVersions, appendVersionRow, type MovedRow } from './commit-order.js';
import { all, first, lookup, mayGuard, run, runWithNext, type Q } from './db.js';
import { purgeExpired } from './expiry.js';
import { liveUsageReads } from './stores.js';
import { FULL, META, actorColumns, byUniqueId, live, toMemory, type MemoryRow } from './rows.js';
import { children } from './tree.js';

/** Memories a directory move reads, and then appends versions for, per round trip. */
const MOVE_PAGE = 500;

/** What memory operations need beyond the statements: the clock readers hide expired memories by. */
export interface MemoryContext {
  clock: () => string;
}

/** Locks the store for this write and returns its state (null: no such store). */
export async function lockStore(q: Q, storeId: string): Promise<StoreState | null> {
  const s = await first<{ archived_at: string | null }>(q, 'SELECT archived_at FROM stores WHERE id = $1 AND deleted_at IS NULL FOR NO KEY UPDATE', [storeId]);
  return s ? { archivedAt: s.archived_at } : null;
}

/** PostgreSQL text cannot hold U+0000; SQLite can. Refused as invalid input rather than a 500. */
function assertStorable(content: string): void {
  if (content.includes('\0')) {
    throw new MnemoError('invalid_request', 'content: contains U+0000 (NUL), which a PostgreSQL-backed store cannot hold', { field: 'content' });
  }
}

/** What a write decides on, read under the store's lock in one round trip (`mnemo_write_probe`, postgres/schema/v11.ts). */
interface Probe {
  store: StoreState | null;
  /** The live memory asked for (by id, or else by path), or null. */
  row: MemoryRow | null;
  /** Another live memory overlapping the path asked about (invariant 2), or null. */
  hit: { id: string; path: string } | null;
}

/** The probe's row (postgres/schema/v11.ts; it also returns the store's columns, which no one reads now). */
type ProbeRow = Partial<Omit<MemoryRow, 'id'>> & {
  store_found: boolean;
  archived_at: string | null;
  expired: boolean;
  visible: boolean;
  u_memories: number | null;
  u_bytes: number | null;
  id: string | null;
  hit_id: string | null;
  hit_path: string | null;
};

/**
 * The probe's answer when no row can match: an id or path holding a NUL (PostgreSQL text cannot hold
 * one, so `first` answers nothing without asking). The write then finds no store, as for an unknown id.
 */
const NOTHING_FOUND: ProbeRow = {
  store_found: false, visible: false, expired: false, archived_at: null, u_memories: null, u_bytes: null,
  id: null, hit_id: null, hit_path: null,
};

/** Which memory a write reads, and the path whose overlap it must rule out. */
interface ProbeTarget {
  id?: string;
  path?: string;
  overlapOf?: string;
  /** false: leave expired memories for the next versioned write (setting attributes appends no version). */
  purge?: boolean;
  /** The service's admission: shown the store, its usage and the target as the probe found them, before anything changes. */
  admission?: port.Admission | undefined;
  /** The path the write takes, if the probe does not name it (a move's): expired memories in its way are purged first. */
  near?: string;
}

/** What the probe shows an admission: whether the store is the workspace's (the probe says so), as getStore finds it. */
function foundBy(r: ProbeRow): port.WriteFound {
  return {
    storeFound: r.visible,
    usage: { memories: r.u_memories ?? 0, bytes: r.u_bytes ?? 0 },
    target: r.id === null ? null : { contentSizeBytes: r.content_size_bytes! },
  };
}

export function memoryOps(ctx: MemoryContext) {
  const { liveStoreUsage } = liveUsageReads(ctx);
  const byId = (q: Q, storeId: string, id: string) =>
    lookup<MemoryRow>(q, `SELECT ${FULL} FROM ${byUniqueId('memories', 2)} WHERE store_id = $1 AND ${live(3)}`, [storeId, id, ctx.clock()]);
  const byPath = (q: Q, storeId: string, path: string) =>
    lookup<MemoryRow>(q, `SELECT ${FULL} FROM memories WHERE store_id = $1 AND path = $2 AND ${live(3)}`, [storeId, path, ctx.clock()]);

  async function mustGet(q: Q, storeId: string, id: string): Promise<MemoryRow> {
    const row = await byId(q, storeId, id);
    if (!row) throw notFound('memory', id);
    return row;
  }

  /**
   * How every memory write begins: the store locked, then what it decides on read. A store with
   * expired memories has them purged first (the probe says so) and is read again, so an expired
   * memory's path is free for the write (invariant 10).
   */
  async function probe(q: Q, storeId: string, now: string, t: ProbeTarget): Promise<Probe> {
    const o = t.overlapOf === undefined ? null : overlapProbe(t.overlapOf);
    const ws = t.admission?.workspaceId ?? null;
    const read = async () =>
      (await first<ProbeRow>(q, 'SELECT * FROM mnemo_write_probe($1, $2, $3, $4, $5, $6, $7, $8, $9)', [
        ws, storeId, now, ctx.clock(), t.id ?? null, t.path ?? null, o?.atOrAbove ?? null, o?.below ?? null, o ? subtreeEnd(o.below) : null,
      ])) ?? NOTHING_FOUND;
    let r = await read();
    // The service's rules first, on what the write found before it changes anything (the purge included).
    const found = foundBy(r);
    // Near a limit, with expired memories waiting (still in the usage counter): the usage without
    // them, under the store's lock, so no number of them refuses a write that fits.
    if (r.store_found && r.expired && t.admission?.nearLimit?.(found.usage)) found.usage = await liveStoreUsage(q, storeId);
    t.admission?.admit(found);
    if (r.store_found && r.expired && t.purge !== false) {
      await purgeExpired(q, storeId, now, WRITE_PURGE_MAX, t.near ?? t.overlapOf ?? t.path);
      r = await read();
    }
    return {
      store: r.store_found ? { archivedAt: r.archived_at } : null,
      row: r.id === null ? null : (r as MemoryRow),
      hit: r.hit_id === null ? null : { id: r.hit_id, path: r.hit_path! },
    };
  }

  /** Another memory than `selfId` at `path`, at one of its ancestors or below it, or null: one round trip. */
  async function overlapAt(q: Q, storeId: string, path: string, selfId: string): Promise<Probe['hit']> {
    const p = overlapProbe(path);
    // The path and its ancestors first, then anything below (Append runs its branches in order).
    const hit = await first<{ id: string; path: string }>(
      q,
      `(SELECT id, path FROM memories WHERE store_id = $1 AND path = ANY($2::text[]) AND id <> $3 LIMIT 1)
       UNION ALL
       (SELECT id, path FROM memories WHERE store_id = $1 AND path > $4 AND path < $5 AND id <> $3 LIMIT 1)
       LIMIT 1`,
      [storeId, p.atOrAbove, selfId, p.below, subtreeEnd(p.below)],
    );
    return hit ?? null;
  }

  /** Invariant 2 on its own round trip: for the writes the probe could not check (a move after it freed its path, a tree's memories). */
  async function checkOverlap(q: Q, storeId: string, path: string, selfId: string): Promise<void> {
    assertNoOverlap(path, await overlapAt(q, storeId, path, selfId));
  }

  /** One memory of a directory move whose destination is clear, as `mnemo_append_moves` takes it. */
  function movedRow(row: MemoryRow, input: port.MoveTreeInput): MovedRow {
    const { memory: m } = treeMoveOf(input, row);
    return {
      versionId: m.versionId, memoryId: m.id, path: m.path, sha: m.contentSha256, size: m.contentSizeBytes, mode: m.mode,
      expiresAt: m.expiresAt, atimeUs: us(m.atimeMs), mtimeUs: us(m.mtimeMs), uid: m.uid, gid: m.gid,
    };
  }

  const rowOf = (kind: 'insert' | 'update', m: Memory) => ({
    kind, mode: m.mode, updatedAt: m.updatedAt, expiresAt: m.expiresAt, atimeUs: us(m.atimeMs), mtimeUs: us(m.mtimeMs), uid: m.uid, gid: m.gid,
  });

  /** `hit`: the probe's overlap for `input.path`. */
  async function insert(q: Q, store: StoreState | null, hit: Probe['hit'], input: port.CreateMemoryInput & { attrs?: KeptAttrs }): Promise<Memory> {
    assertStoreWritable(input.storeId, store);
    assertStorable(input.content);
    assertNoOverlap(input.path, hit);
    const m = newMemory(input);
    await appendVersionRow(q, writeVersionRow(input, 'created', m), rowOf('insert', m));
    return m;
  }

  /** The usage a write that adds a memory may go out guarded below (`Admission.clearBelow`), or null: probe first. */
  function guardable(q: Q, input: { storeId: string; path: string; admission?: port.Admission | undefined }): { memories: number; bytes: number } | null {
    // An id or path with a NUL finds nothing (PostgreSQL text cannot hold one): the probe's path answers it without asking.
    if (!mayGuard(q) || input.storeId.includes('\0') || input.path.includes('\0')) return null;
    return input.admission?.clearBelow?.() ?? null;
  }

  /**
   * A create with nothing to wait for: probed, checked and appended by one held statement, which
   * refuses unless the store is the workspace's and writable, nothing expired waits in it, nothing
   * overlaps the path and the usage is at or below `clear` (postgres/schema/v17.ts). A refusal runs
   * the whole transaction again on the probe's path (db.ts), where the rules answer.
   */
  async function guardedInsert(q: Q, input: port.CreateMemoryInput & { attrs?: KeptAttrs }, workspaceId: string, clear: { memories: number; bytes: number }): Promise<Memory> {
    assertStorable(input.content);
    const o = overlapProbe(input.path);
    const m = newMemory(input);
    const guard = { workspaceId, clock: ctx.clock(), above: o.atOrAbove, below: o.below, belowEnd: subtreeEnd(o.below), clearBelow: clear };
    await appendGuardedCreate(q, guard, writeVersionRow(input, 'created', m), rowOf('insert', m));
    return m;
  }

  /** `hit`: the probe's overlap for `input.path` (undefined: checked here if the update renames). */
  async function update(
    q: Q, store: StoreState | null, row: MemoryRow | null, input: port.UpdateMemoryInput, hit?: Probe['hit'],
  ): Promise<port.WriteResult> {
    if (!row) throw notFound('memory', input.memoryId);
    const current = toMemory(row);
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
    if (plan.renamed) {
      if (hit === undefined) await checkOverlap(q, input.storeId, plan.path, current.id);
      else assertNoOverlap(plan.path, hit);
    }
    const m = updatedMemory(current, plan, input, expiresAt);
    await appendVersionRow(q, writeVersionRow(input, 'modified', m), rowOf('update', m));
    return { memory: m, changed: true };
  }

  /** Sets attributes without a version (src/domain/memory-attrs.ts decides what they become). */
  async function keepAttrs(q: Q, store: StoreState | null, m: Memory, a: KeptAttrs, now: string, always: boolean): Promise<Memory> {
    const next = attrsAfterSet(m, a, now, always);
    if (!next) return m;
    assertStoreWritable(m.storeId, store);
    // Nothing reads its result: in a mount's write (chmod, touch, chown) it rides with the COMMIT (db.ts).
    await runWithNext(q, 'UPDATE memories SET mode = $1, atime_us = $2, mtime_us = $3, ctime_us = $4, uid = $5, gid = $6 WHERE id = $7', [
      next.mode, us(next.atimeMs), us(next.mtimeMs), us(next.ctimeMs), next.uid, next.gid, m.id,
    ]);
    return { ...m, ...next };
  }

  async function remove(q: Q, stamp: port.WriteStamp, row: MemoryRow): Promise<void> {
    await appendVersionRow(q, deletionVersionRow(stamp, row), { kind: 'delete' });
  }

  const writes = {
    async createMemory(q: Q, input: port.CreateMemoryInput): Promise<Memory> {
      const clear = guardable(q, input);
      if (clear) return guardedInsert(q, input, input.admission!.workspaceId, clear);
      const p = await probe(q, input.storeId, input.now, { overlapOf: input.path, admission: input.admission });
      return insert(q, p.store, p.hit, input);
    },
    async updateMemory(q: Q, input: port.UpdateMemoryInput): Promise<port.WriteResult> {
      const p = await probe(q, input.storeId, input.now, {
        id: input.memoryId, admission: input.admission, ...(input.path === undefined ? {} : { overlapOf: input.path }),
      });
      return update(q, p.store, p.row, input, input.path === undefined ? undefined : p.hit);
    },
    async deleteMemory(q: Q, input: port.DeleteMemoryInput): Promise<void> {
      const p = await probe(q, input.storeId, input.now, { id: input.memoryId, admission: input.admission });
      if (!p.row) throw notFound('memory', input.memoryId);
      assertDeletePrecondition(toMemory(p.row), input.expectedSha256);
      await remove(q, input, p.row);
    },
    async saveMemoryAt(q: Q, input: port.SaveMemoryAtInput): Promise<port.WriteResult> {
      // A file the mount made: added without asking first, as an API create is; refused back here if the path is taken.
      const clear = input.adds ? guardable(q, input) : null;
      if (clear) return { memory: await guardedInsert(q, input, input.admission!.workspaceId, clear), changed: true };
      // The overlap is probed only when no memory is at the path (a create); the admission's target is the memory there.
      const p = await probe(q, input.storeId, input.now, { path: input.path, overlapOf: input.path, admission: input.admission });
      if (!p.row) return { memory: await insert(q, p.store, p.hit, input), changed: true };
      return update(q, p.store, p.row, saveAsUpdate(input, p.row.id), null);
    },
    async moveMemory(q: Q, input: port.MoveMemoryInput): Promise<Memory> {
      const p = await probe(q, input.storeId, input.now, { id: input.memoryId, admission: input.admission, near: input.path });
      if (!p.row) throw notFound('memory', input.memoryId);
      if (p.row.path === input.path) return toMemory(p.row);
      assertStoreWritable(input.storeId, p.store);
      const replaced = await first<MemoryRow>(q, `SELECT ${META} FROM memories WHERE store_id = $1 AND path = $2 AND id <> $3 LIMIT 1`, [
        input.storeId, input.path, input.memoryId,
      ]);
      if (replaced) await remove(q, { ...input, versionId: input.replacedVersionId }, replaced);
      return (await update(q, p.store, p.row, { ...input, path: input.path })).memory;
    },
    /**
     * A directory move, in the write's one transaction. When nothing is at the destination, at its
     * ancestors or below it (what a mount's rename leaves to move), no moved path can meet another
     * memory: the memories are read a page at a time without their text, and each page's versions
     * and rows go in one call that takes its commit numbers at once (postgres/schema/v16.ts, v19.ts).
     * Otherwise each memory is checked on its way, as any rename is, and the first that meets
     * another memory fails the move.
     */
    async moveTree(q: Q, input: port.MoveTreeInput): Promise<number> {
      const { store } = await probe(q, input.storeId, input.now, { near: input.to });
      assertStoreWritable(input.storeId, store);
      const prefix = input.from + '/';
      const end = subtreeEnd(prefix);
      if ((await overlapAt(q, input.storeId, input.to, '')) !== null) {
        const rows = await all<MemoryRow>(q, `SELECT ${FULL} FROM memories WHERE store_id = $1 AND path > $2 AND path < $3 AND ${live(4)} ORDER BY path`, [
          input.storeId, prefix, end, ctx.clock(),
        ]);
        for (const row of rows) await update(q, store, row, treeMoveUpdate(input, row));
        return rows.length;
      }
      const a = actorColumns(input.actor);
      const stamp = { createdAt: input.now, actorType: a.type, actorId: a.id };
      let moved = 0;
      for (let after = prefix; ; ) {
        const rows = await all<MemoryRow>(
          q,
          `SELECT ${META} FROM memories WHERE store_id = $1 AND path > $2 AND path < $3 AND ${live(4)} ORDER BY path LIMIT ${MOVE_PAGE}`,
          [input.storeId, after, end, ctx.clock()],
        );
        await appendMovedVersions(q, input.storeId, stamp, rows.map((r) => movedRow(r, input)));
        moved += rows.length;
        if (rows.length < MOVE_PAGE) return moved;
        after = rows[rows.length - 1]!.path;
      }
    },
    async setMemoryAttrs(q: Q, storeId: string, id: string, attrs: KeptAttrs, now: string, admission?: port.Admission): Promise<void> {
      // The store locked, the admission shown it and the memory read in one round trip; attributes purge nothing (no version).
      const p = await probe(q, storeId, now, { id, purge: false, admission });
      if (!p.row) throw notFound('memory', id);
      await keepAttrs(q, p.store, toMemory(p.row), attrs, now, true);
    },
  };

  const reads = {
    async getMemory(q: Q, storeId: string, id: string): Promise<Memory | null> {
      const r = await byId(q, storeId, id);
      return r ? toMemory(r) : null;
    },
    /** Whether the store is there (as getStore finds it) and its memory, in one statement: a retrieve's one round trip after its key's. */
    async getMemoryInStore(q: Q, workspaceId: string, storeId: string, id: string): Promise<{ storeFound: boolean; memory: Memory | null }> {
      const r = await lookup<Partial<MemoryRow> & { id: string | null }>(
        q,
        `SELECT m.*
         FROM ${byUniqueId('stores', 1, 's')} LEFT JOIN (SELECT ${FULL} FROM ${byUniqueId('memories', 3)} WHERE ${live(4)}) m ON m.store_id = s.id
         WHERE s.workspace_id = $2 AND s.forking_since IS NULL AND s.deleted_at IS NULL`,
        [storeId, workspaceId, id, ctx.clock()],
      );
      if (!r) return { storeFound: false, memory: null };
      return { storeFound: true, memory: r.id === null ? null : toMemory(r as MemoryRow) };
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
