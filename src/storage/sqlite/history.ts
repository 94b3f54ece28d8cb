/**
 * @module SQLite statements for the history role (port/history.ts): a path's versions by their
 * number there, the names of paths that ever held a memory below a directory (a walk of the
 * versions_by_path index, one step per name), and the store as it was at an instant (each memory's
 * latest version created at or before it, by versions_by_memory_time). See sqlite/schema/history.ts.
 */
import { subtreeEnd } from '../../domain/paths.js';
import { AT_COLUMNS, metaOf, toPathVersion, type AtRow, type PathVersionRow, type StateAt } from '../common/history-rows.js';
import { stepBelow } from '../common/tree.js';
import type { HistoryListing, HistoryStorage, MetaAsOf, PathVersion } from '../port.js';
import type { Synchronous } from './reads.js';
import { versionContent } from './contents.js';
import type { Db, Statement } from './tx.js';


/** Every statement of the history role (a test checks that each is an index search, never a scan). */
export const HISTORY_SQL = {
  pathVersions: 'SELECT id, memory_id, operation, path_seq, content_size_bytes, created_at FROM versions WHERE store_id = ? AND path = ? ORDER BY path_seq LIMIT +?',
  pathVersionMeta: 'SELECT id, memory_id, operation, path_seq, content_size_bytes, created_at FROM versions WHERE store_id = ? AND path = ? AND path_seq = ?',
  pathVersion: `SELECT id, memory_id, operation, path_seq, content_size_bytes, created_at, ${versionContent('versions', true)} AS bytes
     FROM versions WHERE store_id = ? AND path = ? AND path_seq = ?`,
  nextGt: 'SELECT path FROM versions WHERE store_id = ? AND path > ? AND path < ? ORDER BY path LIMIT 1',
  nextGte: 'SELECT path FROM versions WHERE store_id = ? AND path >= ? AND path < ? ORDER BY path LIMIT 1',
  // The memories that ever had this path: the one there at that instant is among them (at any
  // time, since a version redacted since names no path, and a later one may be the only one left).
  // By the path index: left to itself the planner took versions_by_memory for DISTINCT's order and read
  // every version of the store (112 ms a stat at 20,000 memories).
  atPath: 'SELECT DISTINCT memory_id FROM versions INDEXED BY versions_by_path WHERE store_id = ? AND path = ? ORDER BY memory_id',
  // Some memory stood below the directory then (stateAt in one statement, stopping at the first):
  // a version there that was its last unredacted one by the instant, else its first after it, of a
  // memory neither deleted nor expired by then. Each version below costs a few index seeks.
  liveUnder: `SELECT 1 FROM versions INDEXED BY versions_by_path
     WHERE store_id = @store AND path > @prefix AND path < @end
       AND (SELECT l.operation FROM versions l INDEXED BY versions_by_memory_time WHERE l.store_id = versions.store_id
              AND l.memory_id = versions.memory_id AND l.created_at <= @asOf ORDER BY l.created_at DESC, l.seq DESC LIMIT 1) <> 'deleted'
       AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = versions.memory_id AND m.expires_at IS NOT NULL AND m.expires_at <= @asOf)
       AND seq = coalesce(
         (SELECT k.seq FROM versions k INDEXED BY versions_by_memory_time WHERE k.store_id = versions.store_id AND k.memory_id = versions.memory_id
            AND k.created_at <= @asOf AND k.redacted_at IS NULL ORDER BY k.created_at DESC, k.seq DESC LIMIT 1),
         (SELECT k.seq FROM versions k INDEXED BY versions_by_memory_time WHERE k.store_id = versions.store_id AND k.memory_id = versions.memory_id
            AND k.created_at > @asOf AND k.redacted_at IS NULL ORDER BY k.created_at, k.seq LIMIT 1))
     LIMIT 1`,
  latestAt: `SELECT ${AT_COLUMNS} FROM versions INDEXED BY versions_by_memory_time
     WHERE store_id = ? AND memory_id = ? AND created_at <= ? ORDER BY created_at DESC, seq DESC LIMIT 1`,
  latestKeptAt: `SELECT ${AT_COLUMNS} FROM versions INDEXED BY versions_by_memory_time
     WHERE store_id = ? AND memory_id = ? AND created_at <= ? AND redacted_at IS NULL ORDER BY created_at DESC, seq DESC LIMIT 1`,
  firstKeptAfter: `SELECT ${AT_COLUMNS} FROM versions INDEXED BY versions_by_memory_time
     WHERE store_id = ? AND memory_id = ? AND created_at > ? AND redacted_at IS NULL ORDER BY created_at, seq LIMIT 1`,
  bytes: `SELECT ${versionContent('versions', true)} AS bytes FROM versions WHERE id = ?`,
  // Expired at that instant but not swept yet: the sweep's deleted version, dated at the expiry, is still to come.
  expiredBy: 'SELECT 1 AS x FROM memories WHERE id = ? AND expires_at IS NOT NULL AND expires_at <= ?',
} as const;

export function createHistoryStatements(db: Db): Synchronous<HistoryStorage> {
  const q = Object.fromEntries(Object.entries(HISTORY_SQL).map(([name, sql]) => [name, db.prepare(sql)])) as Record<keyof typeof HISTORY_SQL, Statement>;

  /** Direct child names of `prefix` over every path that ever held a memory; a name may come twice (file, then directory). */
  function* everChildren(storeId: string, prefix: string): Generator<{ name: string; dir: boolean }> {
    const end = subtreeEnd(prefix);
    let key = prefix;
    let inclusive = false;
    for (;;) {
      const row = (inclusive ? q.nextGte : q.nextGt).get(storeId, key, end) as { path: string } | undefined;
      if (!row) return;
      const s = stepBelow(prefix, row.path);
      yield { name: s.name, dir: s.dir };
      [key, inclusive] = [s.key, s.inclusive];
    }
  }

  /**
   * Where memory `memoryId` was at `asOf`, or null (not yet created, or deleted). A version redacted
   * since has lost its path: it stands where the memory's nearest unredacted version was, the last
   * one before it, else the first one after (a rename in the redacted version itself is not known).
   * A memory whose expiry had passed is gone at that instant, swept or not.
   */
  function stateAt(storeId: string, memoryId: string, asOf: string): StateAt | null {
    const latest = q.latestAt.get(storeId, memoryId, asOf) as AtRow | undefined;
    if (!latest || latest.operation === 'deleted') return null;
    if (q.expiredBy.get(memoryId, asOf)) return null;
    if (latest.redacted_at === null) return { row: latest, path: latest.path!, redacted: false };
    const before = q.latestKeptAt.get(storeId, memoryId, asOf) as AtRow | undefined;
    const kept = before ?? (q.firstKeptAfter.get(storeId, memoryId, asOf) as AtRow | undefined);
    if (!kept) return null;
    return { row: latest, path: kept.path!, redacted: true };
  }

  function metaAsOf(storeId: string, path: string, asOf: string): MetaAsOf | null {
    for (const { memory_id } of q.atPath.iterate(storeId, path) as Iterable<{ memory_id: string }>) {
      const s = stateAt(storeId, memory_id, asOf);
      if (s && s.path === path) return metaOf(storeId, s);
    }
    return null;
  }

  /** As stateAt over every memory that ever had a path below `dir`, in SQLite, stopping at the first standing there. */
  function anyUnderAsOf(storeId: string, dir: string, asOf: string): boolean {
    const prefix = dir === '/' ? '/' : dir + '/';
    return q.liveUnder.get({ store: storeId, prefix, end: subtreeEnd(prefix), asOf }) !== undefined;
  }

  return {
    listPathVersions(storeId, path, limit) {
      return (q.pathVersions.all(storeId, path, limit) as PathVersionRow[]).map(toPathVersion);
    },

    getPathVersion(storeId, path, number) {
      const r = q.pathVersionMeta.get(storeId, path, number) as PathVersionRow | undefined;
      return r ? toPathVersion(r) : null;
    },

    getPathVersionBytes(storeId, path, number) {
      const r = q.pathVersion.get(storeId, path, number) as (PathVersionRow & { bytes: Buffer | null }) | undefined;
      return r ? { ...toPathVersion(r), bytes: r.bytes ?? Buffer.alloc(0) } : null;
    },

    listHistoryDirectory(storeId, dir, limit): HistoryListing {
      const prefix = dir === '/' ? '/' : dir + '/';
      const files: string[] = [];
      const dirs: string[] = [];
      for (const child of everChildren(storeId, prefix)) {
        if (files.length + dirs.length === limit) return { files, dirs, truncated: true };
        (child.dir ? dirs : files).push(child.name);
      }
      return { files, dirs };
    },

    hasHistoryUnder(storeId, dir) {
      const prefix = dir === '/' ? '/' : dir + '/';
      return q.nextGt.get(storeId, prefix, subtreeEnd(prefix)) !== undefined;
    },

    getMemoryMetaAsOf: metaAsOf,

    getMemoryBytesAsOf(storeId, path, asOf) {
      const meta = metaAsOf(storeId, path, asOf);
      if (!meta || meta.redacted) return null;
      const r = q.bytes.get(meta.versionId) as { bytes: Buffer | null } | undefined;
      return { ...meta, bytes: r?.bytes ?? Buffer.alloc(0) };
    },

    listDirectoryAsOf(storeId, dir, asOf, limit) {
      const prefix = dir === '/' ? '/' : dir + '/';
      const files: MetaAsOf[] = [];
      const dirs: string[] = [];
      for (const child of everChildren(storeId, prefix)) {
        if (files.length + dirs.length === limit) return { files, dirs, truncated: true };
        if (child.dir) {
          if (anyUnderAsOf(storeId, prefix + child.name, asOf)) dirs.push(child.name);
        } else {
          const meta = metaAsOf(storeId, prefix + child.name, asOf);
          if (meta) files.push(meta);
        }
      }
      return { files, dirs };
    },

    hasMemoriesUnderAsOf: anyUnderAsOf,
  };
}
