/**
 * @module SQLite statements for the mount's read model: a memory's metadata or bytes by path and a
 * directory's children, each one indexed lookup or a short keyset walk (the change marks that tell
 * a mount its answers went stale are sqlite/changes.ts). A directory of more than
 * INLINE_LISTING_MAX entries is listed on a reader thread (`listBigDirectoriesElsewhere`).
 */
import type { Synchronous } from './reads.js';
import { subtreeEnd } from '../../domain/paths.js';
import type { MemoryMeta } from '../../domain/types.js';
import type { DirectoryListing, MountViewStorage } from '../port.js';
import { META, toMemoryMeta, type MemoryRow } from '../common/rows.js';
import { textOf } from './contents.js';
import { LIVE } from './expiry.js';
import type { ChildWalk } from './tree.js';
import type { Db } from './tx.js';

/**
 * A live directory's listing is read on the serving connection up to this many entries; a bigger
 * one again, whole, on a reader thread (one snapshot, not a head from here and a tail from there).
 * Read on the serving connection, an `ls` of a 20,000-entry directory held every mount and request
 * of the server for 0.15–1.5 s on a loaded 2-core host. Small directories keep their inline answer
 * (the benchmarked listings hold 1,000 entries); a big one pays this many rows here first, a bounded
 * cost, then the hop and the copy of its answer back (test/fs/isolation.test.ts).
 */
export const INLINE_LISTING_MAX = 1024;

type MountViewStatements = Pick<Synchronous<MountViewStorage>, 'getMemoryMetaByPath' | 'getMemoryBytesByPath' | 'listDirectory' | 'hasMemoriesUnder'>;

export function createMountViewStatements(db: Db, children: ChildWalk): MountViewStatements {
  const q = {
    // The planner would take the unique (store_id, path) index and read the row past its content.
    metaByPath: db.prepare(`SELECT ${META} FROM memories INDEXED BY memories_meta_by_path WHERE store_id = ? AND path = ? AND ${LIVE}`),
    // The text as UTF-8 bytes straight from its `contents` row: no decode to a JS string and encode back.
    bytesByPath: db.prepare(`SELECT ${META}, ${textOf('memories', true)} AS bytes FROM memories WHERE store_id = ? AND path = ? AND ${LIVE}`),
    anyUnder: db.prepare(`SELECT 1 FROM memories WHERE store_id = ? AND path > ? AND path < ? AND ${LIVE} LIMIT 1`),
  };

  return {
    getMemoryMetaByPath(storeId, path): MemoryMeta | null {
      const r = q.metaByPath.get(storeId, path) as MemoryRow | undefined;
      return r ? toMemoryMeta(r) : null;
    },
    getMemoryBytesByPath(storeId, path) {
      const r = q.bytesByPath.get(storeId, path) as (MemoryRow & { bytes: Buffer | null }) | undefined;
      return r ? { ...toMemoryMeta(r), bytes: r.bytes ?? Buffer.alloc(0) } : null;
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

/**
 * `listDirectory` for the port: the first INLINE_LISTING_MAX + 1 entries on the serving connection
 * (all of a small directory: its answer, as before), and a bigger directory's whole listing from
 * `elsewhere`, a reader thread, called after `beforeElsewhere` (which commits a held batch of mount
 * writes, so the thread sees them). Without reader threads (`elsewhere` null) all of it inline.
 */
export function listBigDirectoriesElsewhere(
  inline: MountViewStatements['listDirectory'],
  elsewhere: ((storeId: string, dir: string, limit: number) => Promise<DirectoryListing>) | null,
  beforeElsewhere: () => void,
): (storeId: string, dir: string, limit?: number) => DirectoryListing | Promise<DirectoryListing> {
  if (!elsewhere) return inline;
  return (storeId, dir, limit = Infinity) => {
    if (limit <= INLINE_LISTING_MAX) return inline(storeId, dir, limit);
    const head = inline(storeId, dir, INLINE_LISTING_MAX);
    if (!head.truncated) return head;
    beforeElsewhere();
    return elsewhere(storeId, dir, limit);
  };
}
