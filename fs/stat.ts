/** @module Stat objects for files and directories: stable inode numbers, stored sizes, modes, times and owners. */
import type { FuseStat, FuseStatfs } from './binding/fuse.js';
import type { MemoryMeta, StoreRoom } from '../src/index.js';

const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
export const ROOT_INO = 1;

/** Who owns what no chown has given an owner: the serving process. */
export const PROCESS_UID = process.getuid?.() ?? 0;
export const PROCESS_GID = process.getgid?.() ?? 0;

/** What a stat shows besides size and inode number; times in milliseconds since the epoch. */
export interface Attrs {
  mode: number;
  uid: number;
  gid: number;
  atimeMs: number;
  mtimeMs: number;
  ctimeMs: number;
}

/**
 * Inode numbers are a 53-bit hash (cyrb53) of a stable key (a memory id, or a directory path), kept
 * clear of 0 and the root's 1; the binding passes st_ino as two words. 53 bits, the most a double
 * holds exactly, so that files do not share an inode number: a 32-bit hash gave two of a store's
 * 100,000 memories one number about once, and `cp`, `mv` and `shutil.copy` refused them as "the same
 * file". With `use_ino` they survive remounts, so git's index does not see every file as changed.
 */
export function inoOf(key: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return ((2097151 & h2) * 4294967296 + (h1 >>> 0)) % (Number.MAX_SAFE_INTEGER - 1) + 2;
}

/** A stored memory's times as a stat shows them: kept ones, else derived (sqlite/schema/attrs.ts). */
export function metaTimes(m: Pick<MemoryMeta, 'atimeMs' | 'mtimeMs' | 'ctimeMs' | 'updatedAt'>): { atimeMs: number; mtimeMs: number; ctimeMs: number } {
  const updated = m.mtimeMs === null || m.ctimeMs === null ? Date.parse(m.updatedAt) : 0;
  const mtimeMs = m.mtimeMs ?? updated;
  return { atimeMs: m.atimeMs ?? mtimeMs, mtimeMs, ctimeMs: m.ctimeMs ?? updated };
}

export function metaAttrs(m: MemoryMeta): Attrs {
  return { mode: m.mode, uid: m.uid ?? PROCESS_UID, gid: m.gid ?? PROCESS_GID, ...metaTimes(m) };
}

export function fileStat(ino: number, size: number, a: Attrs): FuseStat {
  return {
    mode: S_IFREG | (a.mode & 0o7777),
    uid: a.uid,
    gid: a.gid,
    size,
    nlink: 1,
    ino,
    blksize: 65536,
    blocks: Math.ceil(size / 512),
    atime: a.atimeMs,
    mtime: a.mtimeMs,
    ctime: a.ctimeMs,
  };
}

/** `nlink` is 2 + the number of subdirectories, as on a disk (find's leaf optimisation relies on it). */
export function dirStat(ino: number, nlink: number, a: Attrs): FuseStat {
  return {
    mode: S_IFDIR | (a.mode & 0o7777),
    uid: a.uid,
    gid: a.gid,
    size: 4096,
    nlink,
    ino,
    blksize: 65536,
    blocks: 8,
    atime: a.atimeMs,
    mtime: a.mtimeMs,
    ctime: a.ctimeMs,
  };
}

/**
 * The store's limits as a file system's size (MNEMO_STORE_MAX_BYTES in 4 KiB blocks, and
 * MNEMO_STORE_MAX_MEMORIES files) and what it holds as their use, so `df` and a tool that checks
 * the free space before it writes see the room a save really has.
 */
export function storeStatfs(room: StoreRoom, readOnly: boolean): FuseStatfs {
  const free = Math.max(0, Math.floor((room.maxBytes - room.bytes) / STATFS_BLOCK));
  const freeFiles = Math.max(0, room.maxMemories - room.memories);
  return {
    bsize: STATFS_BLOCK,
    frsize: STATFS_BLOCK,
    blocks: Math.ceil(room.maxBytes / STATFS_BLOCK),
    bfree: free,
    bavail: free,
    files: room.maxMemories,
    ffree: freeFiles,
    favail: freeFiles,
    fsid: 0x6d6e656d,
    flag: readOnly ? 1 : 0,
    namemax: 255,
  };
}

const STATFS_BLOCK = 4096;
