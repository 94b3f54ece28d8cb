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
 *
 * Every such stat is kept (the last NOTES_PER_PATH), each with the inode number it gave the
 * kernel, and an open gets the newest one of its inode. Only the newest of all was kept at first:
 * then another process's stat of the same name (`sed -i` reading the file it replaces) landing
 * between the retry's lookup and its open hid the retry's own, and the open failed with ESTALE
 * (about 1 append in 32,000 under load, test/fs/mount-truth.test.ts). The kernel's size for the
 * node may be the later stat's file's, but an open of a file that is not at the name any more
 * drops the node's attributes in its reply (ops.ts freshReply), so that size never bounds a read.
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
export const KEPT_MS = 1000;
/** Stats of one name noted at once, at most: a retry's own and those of other processes in its moment. */
const NOTES_PER_PATH = 8;

/** A file a stat found, with the inode number that stat gave the kernel (a working copy's id can change later). */
interface Note {
  file: FileNode;
  ino: number;
  at: number;
}

export class Reopens {
  /** For each path an open found gone: when it last did, and the files the stats of it found since, oldest first. */
  private readonly seen = new Map<string, { missedAt: number; notes: Note[] }>();

  private onMissed: (path: string) => void = () => {};

  constructor(private readonly now: () => number = Date.now) {}

  /** Calls `fn` with each path `missed` notes (its stats are the handler's then: kernel-stats.ts). */
  watch(fn: (path: string) => void): this {
    this.onMissed = fn;
    return this;
  }

  /** An open of `path` found no file and is answered ESTALE: its retry's lookup is noted from now on. */
  missed(path: string): void {
    this.onMissed(path);
    const entry = this.seen.get(path);
    if (entry) {
      entry.missedAt = this.now();
      return;
    }
    if (this.seen.size >= MAX_NOTED) this.seen.clear();
    this.seen.set(path, { missedAt: this.now(), notes: [] });
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

  /** A stat of `path` found `file` (a stat that found nothing changes nothing). */
  noted(path: string, file: FileNode): void {
    const entry = this.seen.get(path);
    if (!entry) return;
    entry.notes.push({ file, ino: inoOfFile(file), at: this.now() });
    if (entry.notes.length > NOTES_PER_PATH) entry.notes.shift();
  }

  /**
   * What an open of `path` that found no file may open: the newest file a stat there found since
   * an open of it met ESTALE that gave the kernel `ino`, seen within KEPT_MS. Kept for every open
   * that asks (two processes may be retrying their opens of one name).
   */
  found(path: string, ino: number): FileNode | undefined {
    const notes = this.seen.get(path)?.notes;
    if (!notes) return undefined;
    const since = this.now() - KEPT_MS;
    for (let i = notes.length - 1; i >= 0 && notes[i]!.at >= since; i--) {
      if (notes[i]!.ino === ino) return notes[i]!.file;
    }
    return undefined;
  }
}

/** The inode number the kernel was given for a file. */
export function inoOfFile(file: FileNode): number {
  return inoOf(file.draft?.memoryId ?? file.meta!.id);
}
