/**
 * @module SQLite's "database is locked" (SQLITE_BUSY and its extended codes): another process (an
 * operator's sqlite3 shell, a backup or replication tool) held the file's write lock for the 5 s a
 * write waits for it (sqlite/lock-wait.ts). A temporary condition, not a fault of ours: MnemoError
 * `database_locked` (503 with Retry-After over HTTP, EBUSY on a mount, a retryable MCP tool error),
 * mapped where the faces answer, as disk-full is.
 */
import { MnemoError } from '../../domain/errors.js';

export function isDatabaseBusy(err: unknown): boolean {
  if (!(err instanceof Error) || err instanceof MnemoError) return false;
  const code = (err as Error & { code?: unknown }).code;
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_'));
}

export function databaseBusy(cause: unknown): MnemoError {
  return new MnemoError('database_locked', 'the database is locked by another process (a write transaction held open on mnemo.db): nothing was written; retry shortly', {}, { cause });
}
