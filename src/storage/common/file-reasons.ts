/**
 * @module Why a file cannot be opened, read or written, in words: the operating system's reason
 * (`read-only file system (EROFS)`), learned by asking it directly, since SQLite says only "unable to
 * open database file" or "attempt to write a readonly database" whatever the cause.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { dirname } from 'node:path';

const REASONS: Record<string, string> = {
  ENOENT: 'it does not exist (or a directory above it does not)',
  ENOTDIR: 'a part of the path is a file, not a directory (ENOTDIR)',
  EISDIR: 'it is a directory (EISDIR)',
  EACCES: 'permission denied (EACCES)',
  EPERM: 'operation not permitted (EPERM)',
  EROFS: 'read-only file system (EROFS)',
  ENOSPC: 'no space left on the device (ENOSPC)',
  EEXIST: 'it already exists (EEXIST)',
  ENAMETOOLONG: 'a name is too long (ENAMETOOLONG)',
  ELOOP: 'too many symbolic links (ELOOP)',
  EIO: 'an I/O error (EIO)',
};

/** The reason part of a sentence about a path: the errno's words, or the error's own message. */
export function reasonOf(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (typeof code === 'string' && REASONS[code]) return REASONS[code]!;
  return err instanceof Error ? err.message : String(err);
}

function tryAccess(path: string, mode: number): unknown {
  try {
    accessSync(path, mode);
    return null;
  } catch (err) {
    return err;
  }
}

/** The nearest directory at or above `path` that exists (a new path is made there). */
export function nearestExisting(path: string): string {
  let p = path;
  while (!existsSync(p) && dirname(p) !== p) p = dirname(p);
  return p;
}

/**
 * Why `path` (a file, or a directory to be made) cannot be written, or null when the system lets us:
 * the file itself, else the directory that would hold it (or its nearest existing ancestor).
 */
export function whyNotWritable(path: string): string | null {
  const target = existsSync(path) ? path : nearestExisting(dirname(path));
  const err = tryAccess(target, constants.W_OK);
  if (err === null) return null;
  return target === path ? reasonOf(err) : `cannot write in ${target}: ${reasonOf(err)}`;
}

/** Why `file` cannot be read, or null. */
export function whyNotReadable(file: string): string | null {
  const err = tryAccess(file, constants.R_OK);
  return err === null ? null : reasonOf(err);
}
