/**
 * @module Sentences for the operating system's errors at the CLI: "ENOENT: no such file or
 * directory, open '/x/y'" becomes one that says what was missing and where.
 */
import { isMnemoError } from '../domain/errors.js';

export { reasonOf } from '../storage/common/file-reasons.js';

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
