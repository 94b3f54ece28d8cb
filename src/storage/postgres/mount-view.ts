/**
 * @module PostgreSQL operations for the mount's read model: a memory's metadata or bytes by path
 * and a directory's children (the change marks are postgres/changes.ts).
 */
import { subtreeEnd } from '../../domain/paths.js';
import type { MemoryMeta } from '../../domain/types.js';
import type { DirectoryListing, DirectoryNames } from '../port.js';
import { childName, resumeAfter, sortedNames } from '../common/tree.js';
import { versionContent } from './contents.js';
import { first, lookup, type Q } from './db.js';
import type { MemoryContext } from './memories.js';
import { META, byUniqueId, live, toMemoryMeta, type MemoryRow } from './rows.js';
import { childNames, children } from './tree.js';

export function mountViewOps(ctx: MemoryContext) {
  return {
    async getMemoryMetaByPath(q: Q, storeId: string, path: string): Promise<MemoryMeta | null> {
      const r = await lookup<MemoryRow>(q, `SELECT ${META} FROM memories WHERE store_id = $1 AND path = $2 AND ${live(3)}`, [storeId, path, ctx.clock()]);
      return r ? toMemoryMeta(r) : null;
    },
    async getMemoryMetaById(q: Q, storeId: string, id: string): Promise<MemoryMeta | null> {
      // The row by its id's unique index (rows.ts byUniqueId), without the text getMemory reads from `contents`.
      const r = await lookup<MemoryRow>(q, `SELECT ${META} FROM ${byUniqueId('memories', 2)} WHERE store_id = $1 AND ${live(3)}`, [storeId, id, ctx.clock()]);
      return r ? toMemoryMeta(r) : null;
    },
    async getMemoryBytesByPath(q: Q, storeId: string, path: string): Promise<(MemoryMeta & { bytes: Buffer }) | null> {
      // The content as UTF-8 bytes (bytea), not a JS string decoded and encoded back.
      const r = await lookup<MemoryRow & { bytes: Buffer | null }>(
        q,
        `SELECT ${META}, ${versionContent('memories', true)} AS bytes FROM memories WHERE store_id = $1 AND path = $2 AND ${live(3)}`,
        [storeId, path, ctx.clock()],
      );
      return r ? { ...toMemoryMeta(r), bytes: r.bytes ?? Buffer.alloc(0) } : null;
    },
    async listDirectory(q: Q, storeId: string, dir: string, limit = Infinity): Promise<DirectoryListing> {
      const prefix = dir === '/' ? '/' : dir + '/';
      const files: MemoryMeta[] = [];
      const dirs: string[] = [];
      for await (const child of children(q, storeId, prefix, { key: prefix, inclusive: false }, ctx.clock())) {
        if (files.length + dirs.length === limit) return { files, dirs, truncated: true };
        if (child.item.type === 'memory') files.push(toMemoryMeta(child.item.row));
        else dirs.push(child.item.path.slice(prefix.length, -1));
      }
      return { files, dirs };
    },
    /**
     * Whole rows while the directory may still be small enough for its listing, paths alone past
     * that, each page an `await` (the event loop gets its turns between them); the names are sorted
     * here, on an order the walk nearly gives already (common/tree.ts `sortedNames`).
     */
    async listDirectoryNames(q: Q, storeId: string, dir: string, listingUpTo = -1): Promise<DirectoryNames | DirectoryListing> {
      const prefix = dir === '/' ? '/' : dir + '/';
      const now = ctx.clock();
      let start = { key: prefix, inclusive: false };
      const fileNames: string[] = [];
      const dirs: string[] = [];
      if (listingUpTo >= 0) {
        const files: MemoryMeta[] = [];
        let past = false;
        for await (const child of children(q, storeId, prefix, start, now)) {
          if (child.item.type === 'memory') files.push(toMemoryMeta(child.item.row));
          else dirs.push(child.item.path.slice(prefix.length, -1));
          if (files.length + dirs.length > listingUpTo) {
            [start, past] = [resumeAfter(child), true];
            break;
          }
        }
        if (!past) return { files, dirs };
        for (const f of files) fileNames.push(f.path.slice(prefix.length));
      }
      for await (const child of childNames(q, storeId, prefix, start, now)) {
        const { name, dir: sub } = childName(prefix, child);
        (sub ? dirs : fileNames).push(name);
      }
      return sortedNames(fileNames, dirs);
    },
    async hasMemoriesUnder(q: Q, storeId: string, dir: string): Promise<boolean> {
      const prefix = dir === '/' ? '/' : dir + '/';
      return (await first(q, `SELECT 1 FROM memories WHERE store_id = $1 AND path > $2 AND path < $3 AND ${live(4)} LIMIT 1`, [
        storeId, prefix, subtreeEnd(prefix), ctx.clock(),
      ])) !== undefined;
    },
    async nextExpiry(q: Q, storeId: string, after: string): Promise<string | null> {
      const r = await first<{ at: string | null }>(
        q,
        'SELECT MIN(expires_at) AS at FROM memories WHERE store_id = $1 AND expires_at IS NOT NULL AND expires_at > $2',
        [storeId, after],
      );
      return r?.at ?? null;
    },
  };
}
