/**
 * @module PostgreSQL operations for the history role (port/history.ts), a port of sqlite/history.ts
 * with the same results and bounds: a path's versions by their number there (versions_by_path), the
 * names of paths that ever held a memory below a directory (a walk of that index, one
 * `path > $k AND path < $end ORDER BY path LIMIT 1` step per name), and the store as it was at an
 * instant (each memory's latest version created at or before it, by versions_by_memory_time).
 * See postgres/schema/v4.ts.
 */
import { subtreeEnd } from '../../domain/paths.js';
import { AT_COLUMNS, metaOf, prefixOf, toPathVersion, type AtRow, type PathVersionRow, type StateAt } from '../common/history-rows.js';
import { stepBelow } from '../common/tree.js';
import type { HistoryListing, MetaAsOf, PathVersion } from '../port.js';
import { versionContent } from './contents.js';
import { all, first, type Q } from './db.js';

const PV_COLUMNS = 'id, memory_id, operation, path_seq, content_size_bytes, created_at';

/** Every statement of the history role; each is answered from an index, never a scan of the store. */
export const PG_HISTORY_SQL = {
  pathVersions: `SELECT ${PV_COLUMNS} FROM versions WHERE store_id = $1 AND path = $2 ORDER BY path_seq LIMIT $3`,
  pathVersionMeta: `SELECT ${PV_COLUMNS} FROM versions WHERE store_id = $1 AND path = $2 AND path_seq = $3`,
  pathVersion: `SELECT ${PV_COLUMNS}, ${versionContent('versions', true)} AS bytes FROM versions WHERE store_id = $1 AND path = $2 AND path_seq = $3`,
  nextGt: 'SELECT path FROM versions WHERE store_id = $1 AND path > $2 AND path < $3 ORDER BY path LIMIT 1',
  nextGte: 'SELECT path FROM versions WHERE store_id = $1 AND path >= $2 AND path < $3 ORDER BY path LIMIT 1',
  // The memories that ever had this path: the one there at that instant is among them (at any
  // time, since a version redacted since names no path, and a later one may be the only one left).
  atPath: 'SELECT DISTINCT memory_id FROM versions WHERE store_id = $1 AND path = $2 ORDER BY memory_id',
  // Some memory stood below the directory then (stateAt in one statement, stopping at the first; as
  // sqlite/history.ts): one round trip for the walk of the versions below, not several per memory.
  liveUnder: `SELECT 1 AS x FROM versions v
     WHERE v.store_id = $1 AND v.path > $2 AND v.path < $3
       AND (SELECT l.operation FROM versions l WHERE l.store_id = v.store_id AND l.memory_id = v.memory_id AND l.created_at <= $4
              ORDER BY l.created_at DESC, l.seq DESC LIMIT 1) <> 'deleted'
       AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = v.memory_id AND m.expires_at IS NOT NULL AND m.expires_at <= $4)
       AND v.seq = coalesce(
         (SELECT k.seq FROM versions k WHERE k.store_id = v.store_id AND k.memory_id = v.memory_id AND k.created_at <= $4 AND k.redacted_at IS NULL
            ORDER BY k.created_at DESC, k.seq DESC LIMIT 1),
         (SELECT k.seq FROM versions k WHERE k.store_id = v.store_id AND k.memory_id = v.memory_id AND k.created_at > $4 AND k.redacted_at IS NULL
            ORDER BY k.created_at, k.seq LIMIT 1))
     LIMIT 1`,
  latestAt: `SELECT ${AT_COLUMNS} FROM versions
     WHERE store_id = $1 AND memory_id = $2 AND created_at <= $3 ORDER BY created_at DESC, seq DESC LIMIT 1`,
  latestKeptAt: `SELECT ${AT_COLUMNS} FROM versions
     WHERE store_id = $1 AND memory_id = $2 AND created_at <= $3 AND redacted_at IS NULL ORDER BY created_at DESC, seq DESC LIMIT 1`,
  firstKeptAfter: `SELECT ${AT_COLUMNS} FROM versions
     WHERE store_id = $1 AND memory_id = $2 AND created_at > $3 AND redacted_at IS NULL ORDER BY created_at, seq LIMIT 1`,
  bytes: `SELECT ${versionContent('versions', true)} AS bytes FROM versions WHERE id = $1`,
  // Expired at that instant but not swept yet: the sweep's deleted version, dated at the expiry, is still to come.
  expiredBy: 'SELECT 1 AS x FROM memories WHERE id = $1 AND expires_at IS NOT NULL AND expires_at <= $2',
} as const;

/** Direct child names of `prefix` over every path that ever held a memory; a name may come twice (file, then directory). */
async function* everChildren(q: Q, storeId: string, prefix: string): AsyncGenerator<{ name: string; dir: boolean }> {
  const end = subtreeEnd(prefix);
  let key = prefix;
  let inclusive = false;
  for (;;) {
    const row: { path: string } | undefined = await first<{ path: string }>(q, inclusive ? PG_HISTORY_SQL.nextGte : PG_HISTORY_SQL.nextGt, [storeId, key, end]);
    if (!row) return;
    const s = stepBelow(prefix, row.path);
    yield { name: s.name, dir: s.dir };
    [key, inclusive] = [s.key, s.inclusive];
  }
}

/**
 * Where memory `memoryId` was at `asOf`, or null (not yet created, or deleted). A version redacted
 * since has lost its path: it stands where the memory's nearest unredacted version was, the last
 * one before it, else the first one after (as sqlite/history.ts). A memory whose expiry had passed
 * is gone at that instant, swept or not.
 */
async function stateAt(q: Q, storeId: string, memoryId: string, asOf: string): Promise<StateAt | null> {
  const latest = await first<AtRow>(q, PG_HISTORY_SQL.latestAt, [storeId, memoryId, asOf]);
  if (!latest || latest.operation === 'deleted') return null;
  if (await first(q, PG_HISTORY_SQL.expiredBy, [memoryId, asOf])) return null;
  if (latest.redacted_at === null) return { row: latest, path: latest.path!, redacted: false };
  const before = await first<AtRow>(q, PG_HISTORY_SQL.latestKeptAt, [storeId, memoryId, asOf]);
  const kept = before ?? (await first<AtRow>(q, PG_HISTORY_SQL.firstKeptAfter, [storeId, memoryId, asOf]));
  if (!kept) return null;
  return { row: latest, path: kept.path!, redacted: true };
}

async function metaAsOf(q: Q, storeId: string, path: string, asOf: string): Promise<MetaAsOf | null> {
  for (const { memory_id } of await all<{ memory_id: string }>(q, PG_HISTORY_SQL.atPath, [storeId, path])) {
    const s = await stateAt(q, storeId, memory_id, asOf);
    if (s && s.path === path) return metaOf(storeId, s);
  }
  return null;
}

async function anyUnderAsOf(q: Q, storeId: string, dir: string, asOf: string): Promise<boolean> {
  const prefix = prefixOf(dir);
  return (await first(q, PG_HISTORY_SQL.liveUnder, [storeId, prefix, subtreeEnd(prefix), asOf])) !== undefined;
}

/** LIMIT NULL is no limit in PostgreSQL (a caller may pass Infinity). */
function limitOf(limit: number): number | null {
  return Number.isFinite(limit) ? limit : null;
}

export const historyReads = {
  async listPathVersions(q: Q, storeId: string, path: string, limit: number): Promise<PathVersion[]> {
    return (await all<PathVersionRow>(q, PG_HISTORY_SQL.pathVersions, [storeId, path, limitOf(limit)])).map(toPathVersion);
  },

  async getPathVersion(q: Q, storeId: string, path: string, number: number): Promise<PathVersion | null> {
    const r = await first<PathVersionRow>(q, PG_HISTORY_SQL.pathVersionMeta, [storeId, path, number]);
    return r ? toPathVersion(r) : null;
  },

  async getPathVersionBytes(q: Q, storeId: string, path: string, number: number): Promise<(PathVersion & { bytes: Buffer }) | null> {
    const r = await first<PathVersionRow & { bytes: Buffer | null }>(q, PG_HISTORY_SQL.pathVersion, [storeId, path, number]);
    return r ? { ...toPathVersion(r), bytes: r.bytes ?? Buffer.alloc(0) } : null;
  },

  async listHistoryDirectory(q: Q, storeId: string, dir: string, limit: number): Promise<HistoryListing> {
    const files: string[] = [];
    const dirs: string[] = [];
    for await (const child of everChildren(q, storeId, prefixOf(dir))) {
      if (files.length + dirs.length === limit) return { files, dirs, truncated: true };
      (child.dir ? dirs : files).push(child.name);
    }
    return { files, dirs };
  },

  async hasHistoryUnder(q: Q, storeId: string, dir: string): Promise<boolean> {
    const prefix = prefixOf(dir);
    return (await first(q, PG_HISTORY_SQL.nextGt, [storeId, prefix, subtreeEnd(prefix)])) !== undefined;
  },

  getMemoryMetaAsOf: metaAsOf,

  async getMemoryBytesAsOf(q: Q, storeId: string, path: string, asOf: string): Promise<(MetaAsOf & { bytes: Buffer }) | null> {
    const meta = await metaAsOf(q, storeId, path, asOf);
    if (!meta || meta.redacted) return null;
    const r = await first<{ bytes: Buffer | null }>(q, PG_HISTORY_SQL.bytes, [meta.versionId]);
    return { ...meta, bytes: r?.bytes ?? Buffer.alloc(0) };
  },

  async listDirectoryAsOf(q: Q, storeId: string, dir: string, asOf: string, limit: number): Promise<{ files: MetaAsOf[]; dirs: string[]; truncated?: boolean }> {
    const prefix = prefixOf(dir);
    const files: MetaAsOf[] = [];
    const dirs: string[] = [];
    for await (const child of everChildren(q, storeId, prefix)) {
      if (files.length + dirs.length === limit) return { files, dirs, truncated: true };
      if (child.dir) {
        if (await anyUnderAsOf(q, storeId, prefix + child.name, asOf)) dirs.push(child.name);
      } else {
        const meta = await metaAsOf(q, storeId, prefix + child.name, asOf);
        if (meta) files.push(meta);
      }
    }
    return { files, dirs };
  },

  hasMemoriesUnderAsOf: anyUnderAsOf,
};
