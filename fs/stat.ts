/** @module Stat objects for files and directories: stable inode numbers, stored sizes, modes and times. */
import type { FuseStat, FuseStatfs } from './binding/fuse.js';

const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
export const ROOT_INO = 1;

/** Who owns everything in the mount: the serving process (ownership is not stored). */
const UID = process.getuid?.() ?? 0;
const GID = process.getgid?.() ?? 0;

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

export function fileStat(ino: number, size: number, mode: number, mtimeMs: number): FuseStat {
  return {
    mode: S_IFREG | (mode & 0o7777),
    uid: UID,
    gid: GID,
    size,
    nlink: 1,
    ino,
    blksize: 65536,
    blocks: Math.ceil(size / 512),
    atime: mtimeMs,
    mtime: mtimeMs,
    ctime: mtimeMs,
  };
}

/** nlink 1 means "unknown" to find and friends, which then do not use the leaf optimisation. */
export function dirStat(ino: number, mode: number, mtimeMs: number): FuseStat {
  return {
    mode: S_IFDIR | (mode & 0o7777),
    uid: UID,
    gid: GID,
    size: 4096,
    nlink: 1,
    ino,
    blksize: 65536,
    blocks: 8,
    atime: mtimeMs,
    mtime: mtimeMs,
    ctime: mtimeMs,
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
