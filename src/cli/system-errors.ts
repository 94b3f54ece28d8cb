/**
 * @module Sentences for the operating system's errors at the CLI: "ENOENT: no such file or
 * directory, open '/x/y'" becomes one that says what was missing and where.
 */
import { isMnemoError } from '../domain/errors.js';

/** What an errno means, in a few words with its name: `read-only file system (EROFS)`. */
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

export function describeError(err: unknown): string {
  // "database unavailable" and why: a CLI user is the operator, who needs the driver's reason.
  if (isMnemoError(err)) return err.code === 'unavailable' && err.cause instanceof Error ? `${err.message} (${err.cause.message})` : err.message;
  const e = err as NodeJS.ErrnoException;
  if (!(err instanceof Error) || typeof e.code !== 'string' || typeof e.path !== 'string') {
    return err instanceof Error ? err.message : String(err);
  }
  const path = e.path;
  switch (e.code) {
    case 'ENOENT':
      return `${path} does not exist (or a directory above it does not)`;
    case 'EEXIST':
      return `${path} already exists`;
    case 'ENOTDIR':
      return `${path}: a part of this path is a file, not a directory`;
    case 'EISDIR':
      return `${path} is a directory`;
    case 'EACCES':
    case 'EPERM':
      return `permission denied: ${path}`;
    case 'ENOSPC':
      return `no space left on the device holding ${path}`;
    default:
      return `${path}: ${e.message}`;
  }
}
