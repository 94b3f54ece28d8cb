/**
 * @module Opens that found their file gone: deleted elsewhere (the API, another session or host)
 * between the kernel's lookup of the name and its OPEN. Such an open is answered ESTALE, and the
 * kernel looks the name up again and retries the open once; a writer deleting and making the name
 * again in a loop can remove it between that second lookup and that second open too, and the
 * program got ESTALE (a quarter of the appends in that storm). The retry's lookup is a stat of the
 * name here, made after the first open started and while the file was there: on a disk, that open
 * opened the file then, and the delete that came after unlinked it under the open descriptor. So
 * the retried open, finding the file gone again, opens what that stat found (ops.ts openGone): a
 * working copy here wherever it is now, a stored file where the store has it now (moved), or, if
 * it was deleted, a copy with no name, whose reads are that text and whose writes go nowhere, as
 * an unlinked file's.
 *
 * Only a stat made after an open of the name met ESTALE counts, only for the inode the kernel
 * resolved the name to (the binding passes it with each OPEN), and only for a second (KEPT_MS):
 * any other open of a gone file is answered ESTALE as before, so one that started after the
 * delete looks again. Another process's open of that name, with the same inode, in that second is
 * answered the same way: it may have started after the delete (as a stat in the kernel's entry
 * cache may show a file deleted elsewhere), and it opens the file as it was just before.
 */
import { inoOf } from './stat.js';
import type { Node } from './tree.js';

/** A file as a stat found it: stored (meta), or a working copy here (draft). */
export type FileNode = Extract<Node, { kind: 'file' }>;

/** Paths noted at once, at most: an open that meets a cleared note retries as before. */
const MAX_NOTED = 1024;
/**
 * How long a stat's note serves, in ms. A retried open follows its lookup at once; a second covers
 * a loaded host, and is no longer than the kernel's default entry timeout (fs/mounts.ts), for
 * which it may show a name deleted elsewhere anyway.
 */
const KEPT_MS = 1000;

export class Reopens {
  /** For each path an open found gone: when it last did, and the file the newest stat of it found since. */
  private readonly seen = new Map<string, { missedAt: number; file: { file: FileNode; at: number } | null }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** An open of `path` found no file and is answered ESTALE: its retry's lookup is noted from now on. */
  missed(path: string): void {
    const entry = this.seen.get(path);
    if (entry) {
      entry.missedAt = this.now();
      return;
    }
    if (this.seen.size >= MAX_NOTED) this.seen.clear();
    this.seen.set(path, { missedAt: this.now(), file: null });
  }

  /**
   * Whether a stat of `path` must be noted: an open of it met ESTALE within KEPT_MS (checked on
   * every stat: one size test while nothing waits; a path whose retries are over is let go here).
   */
  waiting(path: string): boolean {
    if (this.seen.size === 0) return false;
    const entry = this.seen.get(path);
    if (!entry) return false;
    if (entry.missedAt >= this.now() - KEPT_MS) return true;
    this.seen.delete(path);
    return false;
  }

  /**
   * A stat of `path` found `file`. Only the newest counts: libfuse's high-level API has one node
   * per name, so the kernel's inode for the path has the attributes (the size that bounds every
   * read) of the last file a stat of it found. A stat that found nothing changes none of them.
   */
  noted(path: string, file: FileNode): void {
    const entry = this.seen.get(path);
    if (entry) entry.file = { file, at: this.now() };
  }

  /**
   * What an open of `path` that found no file may open: the file the newest stat there found since
   * an open of it met ESTALE, if it is the kernel's `ino` and was seen within KEPT_MS. Kept for
   * every open that asks (two processes may be retrying their opens of one name).
   */
  found(path: string, ino: number): FileNode | undefined {
    const seen = this.seen.get(path)?.file;
    return seen && seen.at >= this.now() - KEPT_MS && inoOfFile(seen.file) === ino ? seen.file : undefined;
  }
}

/** The inode number the kernel was given for a file. */
export function inoOfFile(file: FileNode): number {
  return inoOf(file.draft?.memoryId ?? file.meta!.id);
}
