/**
 * @module Directory attributes, kept by the mount for its life: directories are implied by memory
 * paths and have no row of their own, so their inode numbers, times and owners live here.
 *
 * - Inode numbers: a directory first seen at a path gets the hash of that path (stable across
 *   remounts, for git's index), or the next free hash if a renamed directory holds it; a rename
 *   carries the numbers of the directory and everything below it to the new paths.
 * - Times start at the mount's start (nothing better is known: storage keeps no directory times)
 *   and move as a disk's do for changes made through this mount: mtime and ctime when an entry is
 *   added, removed or renamed in it, ctime on chmod, chown and its own rename, atime and mtime on
 *   utimens. Changes made elsewhere (the API, another session) do not move them.
 * - Owner: the serving process's until a chown.
 */
import { parentOf } from '../src/index.js';
import { ROOT_INO, inoOf } from './stat.js';

export interface DirAttrs {
  readonly ino: number;
  atimeMs: number;
  mtimeMs: number;
  ctimeMs: number;
  /** null: the serving process's. */
  uid: number | null;
  gid: number | null;
}

export class DirTable {
  private readonly byPath = new Map<string, DirAttrs>();
  private readonly inos = new Set<number>();

  constructor(private readonly startedMs: number) {}

  /** The attributes of the directory at `path` (which the caller knows exists). */
  get(path: string): DirAttrs {
    return this.byPath.get(path) ?? this.add(path, this.startedMs);
  }

  /** The inode number the directory at `path` was shown with, if this mount has shown one there. */
  inoAt(path: string): number | undefined {
    return this.byPath.get(path)?.ino;
  }

  /**
   * The inode number of the directory holding `path`, if this mount has shown it (the root always):
   * what the binding needs to drop the kernel's entry for `path`'s name in that directory alone.
   */
  parentIno(path: string): number | undefined {
    const dir = parentOf(path);
    return dir === '/' ? ROOT_INO : this.inoAt(dir);
  }

  /** mkdir: a new directory's times are its creation time. */
  made(path: string, nowMs: number): void {
    this.forget(path);
    this.add(path, nowMs);
  }

  /** An entry was added, removed or renamed in `dir`. */
  entryChanged(dir: string, nowMs: number): void {
    const a = this.get(dir);
    a.mtimeMs = a.ctimeMs = nowMs;
  }

  /** chmod, chown, utimens and a rename of the directory itself: what is given is set; the ctime moves. */
  set(path: string, a: { atimeMs?: number; mtimeMs?: number; uid?: number; gid?: number }, nowMs: number): void {
    const d = this.get(path);
    if (a.atimeMs !== undefined) d.atimeMs = a.atimeMs;
    if (a.mtimeMs !== undefined) d.mtimeMs = a.mtimeMs;
    if (a.uid !== undefined) d.uid = a.uid;
    if (a.gid !== undefined) d.gid = a.gid;
    d.ctimeMs = nowMs;
  }

  /** rmdir: the path is free; a directory made there later is a new one. */
  removed(path: string): void {
    this.forget(path);
  }

  /** A directory rename: it and everything below keep their attributes at the new paths. */
  moved(src: string, dst: string, nowMs: number): void {
    this.get(src);
    for (const p of [...this.byPath.keys()]) if (p === dst || p.startsWith(dst + '/')) this.forget(p);
    const moving = [...this.byPath].filter(([p]) => p === src || p.startsWith(src + '/'));
    for (const [p] of moving) this.byPath.delete(p);
    for (const [p, a] of moving) this.byPath.set(dst + p.slice(src.length), a);
    this.set(dst, {}, nowMs);
  }

  private add(path: string, timeMs: number): DirAttrs {
    const a: DirAttrs = { ino: this.freeIno(path), atimeMs: timeMs, mtimeMs: timeMs, ctimeMs: timeMs, uid: null, gid: null };
    this.byPath.set(path, a);
    this.inos.add(a.ino);
    return a;
  }

  private forget(path: string): void {
    const a = this.byPath.get(path);
    if (!a) return;
    this.byPath.delete(path);
    this.inos.delete(a.ino);
  }

  private freeIno(path: string): number {
    if (path === '/') return ROOT_INO;
    let ino = inoOf('dir:' + path);
    for (let n = 1; this.inos.has(ino); n++) ino = inoOf(`dir:${path}#${n}`);
    return ino;
  }
}
