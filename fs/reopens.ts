/**
 * @module Opens that found their file gone: deleted elsewhere (the API, another session or host)
 * between the kernel's lookup of the name and its OPEN. Such an open is answered ESTALE, and the
 * kernel looks the name up again and retries the open once; a writer deleting and making the name
 * again in a loop can remove it between that second lookup and that second open too, and the
 * program got ESTALE (a quarter of the appends in that storm). The retry's lookup is a stat of the
 * name here, made after the first open started and while the file was there: on a disk, that open
 * opened the file then, and the delete that came after unlinked it under the open descriptor. So
 * the retried open, finding the file gone again, opens a copy of what that stat answered, with no
 * name: its reads are that text, its writes go nowhere, as an unlinked file's (ops.ts openGone).
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
/** Files noted per path, at most (a name made and deleted again and again between two requests). */
const MAX_FILES = 4;
/**
 * How long a stat's note serves, in ms. A retried open follows its lookup at once; a second covers
 * a loaded host, and is no longer than the kernel's default entry timeout (fs/mounts.ts), for
 * which it may show a name deleted elsewhere anyway.
 */
const KEPT_MS = 1000;

export class Reopens {
  /** For each path an open found gone: when it last did, and the files stats of it found since (one per inode number, newest last). */
  private readonly seen = new Map<string, { missedAt: number; files: { file: FileNode; at: number }[] }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** An open of `path` found no file and is answered ESTALE: its retry's lookup is noted from now on. */
  missed(path: string): void {
    const entry = this.seen.get(path);
    if (entry) {
      entry.missedAt = this.now();
      return;
    }
    if (this.seen.size >= MAX_NOTED) this.seen.clear();
    this.seen.set(path, { missedAt: this.now(), files: [] });
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
   * A stat of `path` found `file`. Each inode number keeps its newest (the kernel's attributes of
   * that inode are the last a stat gave); a stat that found nothing, or another file, keeps the
   * others: the retry's own lookup may have come before it.
   */
  noted(path: string, file: FileNode): void {
    const entry = this.seen.get(path);
    if (!entry) return;
    const ino = inoOfFile(file);
    entry.files = [...entry.files.filter((f) => inoOfFile(f.file) !== ino).slice(-(MAX_FILES - 1)), { file, at: this.now() }];
  }

  /**
   * What an open of `path` that found no file may open: the file a stat saw there since an open of
   * it met ESTALE, if it is the kernel's `ino` and was seen within KEPT_MS. Kept for every open
   * that asks (two processes may be retrying their opens of one name).
   */
  take(path: string, ino: number): FileNode | undefined {
    const since = this.now() - KEPT_MS;
    return this.seen.get(path)?.files.find((f) => f.at >= since && inoOfFile(f.file) === ino)?.file;
  }
}

/** The inode number the kernel was given for a file. */
export function inoOfFile(file: FileNode): number {
  return inoOf(file.draft?.memoryId ?? file.meta!.id);
}
