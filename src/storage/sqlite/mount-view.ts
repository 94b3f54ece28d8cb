/**
 * @module SQLite statements for the mount's read model: a memory's metadata or bytes by path and a
 * directory's children, each one indexed lookup or a short keyset walk (the change marks that tell
 * a mount its answers went stale are sqlite/changes.ts). A directory of more than
 * INLINE_LISTING_MAX entries is listed on a reader thread (`listBigDirectoriesElsewhere`, and
 * `namesOfBigDirectoriesElsewhere` for a listing of names alone).
 */
import type { Synchronous } from './reads.js';
import { subtreeEnd } from '../../domain/paths.js';
import type { MemoryMeta } from '../../domain/types.js';
import type { DirectoryListing, DirectoryNames, MountViewStorage } from '../port.js';
import { META, toMemoryMeta, type MemoryRow } from '../common/rows.js';
import { childName, resumeAfter, sortedNames, type Child, type PathRow } from '../common/tree.js';
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

type MountViewStatements = Pick<Synchronous<MountViewStorage>, 'getMemoryMetaByPath' | 'getMemoryMetaById' | 'getMemoryBytesByPath' | 'listDirectory' | 'listDirectoryNames' | 'hasMemoriesUnder'>;

/** `names`: the same walk reading paths alone, for the names of a directory past `listingUpTo` entries. */
export function createMountViewStatements(db: Db, children: ChildWalk, names: ChildWalk<PathRow>): MountViewStatements {
  const q = {
    // The planner would take the unique (store_id, path) index and read the row past its content.
    metaByPath: db.prepare(`SELECT ${META} FROM memories INDEXED BY memories_meta_by_path WHERE store_id = ? AND path = ? AND ${LIVE}`),
    // The row alone: its text is in `contents`, which this does not join.
    metaById: db.prepare(`SELECT ${META} FROM memories WHERE store_id = ? AND id = ? AND ${LIVE}`),
    // The text as UTF-8 bytes straight from its `contents` row: no decode to a JS string and encode back.
    bytesByPath: db.prepare(`SELECT ${META}, ${textOf('memories', true)} AS bytes FROM memories WHERE store_id = ? AND path = ? AND ${LIVE}`),
    anyUnder: db.prepare(`SELECT 1 FROM memories WHERE store_id = ? AND path > ? AND path < ? AND ${LIVE} LIMIT 1`),
  };

  return {
    getMemoryMetaByPath(storeId, path): MemoryMeta | null {
      const r = q.metaByPath.get(storeId, path) as MemoryRow | undefined;
      return r ? toMemoryMeta(r) : null;
    },
    getMemoryMetaById(storeId, id): MemoryMeta | null {
      const r = q.metaById.get(storeId, id) as MemoryRow | undefined;
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

    listDirectoryNames(storeId, dir, listingUpTo = -1): DirectoryNames | DirectoryListing {
      const prefix = dir === '/' ? '/' : dir + '/';
      let start = { key: prefix, inclusive: false };
      const fileNames: string[] = [];
      const dirs: string[] = [];
      // Whole rows while the directory may still be small enough for its listing; paths alone past that.
      if (listingUpTo >= 0) {
        const head = smallListing(children(storeId, prefix, start), prefix, listingUpTo);
        if (!('next' in head)) return head;
        for (const f of head.files) fileNames.push(f.path.slice(prefix.length));
        dirs.push(...head.dirs);
        start = head.next;
      }
      for (const child of names(storeId, prefix, start)) {
        const { name, dir: sub } = childName(prefix, child);
        (sub ? dirs : fileNames).push(name);
      }
      return sortedNames(fileNames, dirs);
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

/**
 * The listing of a directory of at most `max` entries, or (more) its first `max` + 1 entries and
 * where the walk goes on after them.
 */
function smallListing(walk: Iterable<Child>, prefix: string, max: number): DirectoryListing | { files: MemoryMeta[]; dirs: string[]; next: { key: string; inclusive: boolean } } {
  const files: MemoryMeta[] = [];
  const dirs: string[] = [];
  for (const child of walk) {
    if (child.item.type === 'memory') files.push(toMemoryMeta(child.item.row));
    else dirs.push(child.item.path.slice(prefix.length, -1));
    if (files.length + dirs.length > max) return { files, dirs, next: resumeAfter(child) };
  }
  return { files, dirs };
}

/**
 * `listDirectoryNames` for the port, as `listBigDirectoriesElsewhere` splits `listDirectory`: the
 * first INLINE_LISTING_MAX entries on the serving connection, a small directory's answer made from
 * them, and a bigger one's whole answer from a reader thread, where its names are sorted too: the
 * serving thread gets them ready for readdir, and only them. Names alone (no `listingUpTo`) go to
 * the thread at once: their caller (the mount) asks so for a directory it found big, and those first
 * entries' rows cost the serving thread more than the rest of the listing does.
 */
export function namesOfBigDirectoriesElsewhere(
  inline: Pick<MountViewStatements, 'listDirectory' | 'listDirectoryNames'>,
  elsewhere: ((storeId: string, dir: string, listingUpTo: number) => Promise<DirectoryNames | DirectoryListing>) | null,
  beforeElsewhere: () => void,
): (storeId: string, dir: string, listingUpTo?: number) => DirectoryNames | DirectoryListing | Promise<DirectoryNames | DirectoryListing> {
  if (!elsewhere) return inline.listDirectoryNames;
  return (storeId, dir, listingUpTo = -1) => {
    if (listingUpTo < 0) {
      beforeElsewhere();
      return elsewhere(storeId, dir, listingUpTo);
    }
    const head = inline.listDirectory(storeId, dir, INLINE_LISTING_MAX);
    if (head.truncated) {
      beforeElsewhere();
      return elsewhere(storeId, dir, listingUpTo);
    }
    if (head.files.length + head.dirs.length <= listingUpTo) return head;
    const prefix = dir === '/' ? '/' : dir + '/';
    return sortedNames(head.files.map((f) => f.path.slice(prefix.length)), head.dirs);
  };
}
