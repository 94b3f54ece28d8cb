/** @module Stat objects for files and directories: stable inode numbers, stored sizes, modes, times and owners. */
import type { FuseStat, FuseStatfs } from './binding/fuse.js';
import type { MemoryMeta } from '../src/index.js';

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
 * fuse-native passes st_ino as a Uint32, so inode numbers are a 32-bit FNV-1a hash of a stable key
 * (a memory id, or a directory path), kept clear of 0 and the root's 1. With `use_ino` they survive
 * remounts, so git's index does not see every file as changed.
 */
export function inoOf(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return (h % 0xfffffffd) + 2;
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

/** A generous, constant picture: the store's real limits are per file (102,400 bytes). */
export function storeStatfs(): FuseStatfs {
  return {
    bsize: 4096,
    frsize: 4096,
    blocks: 1 << 24,
    bfree: 1 << 23,
    bavail: 1 << 23,
    files: 1 << 20,
    ffree: 1 << 19,
    favail: 1 << 19,
    fsid: 0x6d6e656d,
    flag: 0,
    namemax: 255,
  };
}
