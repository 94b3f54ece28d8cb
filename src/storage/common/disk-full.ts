/**
 * @module The one place the adapters decide "the disk holding the database is full": SQLite's
 * SQLITE_FULL (and its extended codes), PostgreSQL's disk_full (SQLSTATE 53100), and the operating
 * system's ENOSPC (a write-behind journal, a WAL sync) become MnemoError `storage_full` (507 over
 * HTTP, ENOSPC on a mount), never a bare 500 or EIO. Nothing was written: SQLite rolled the
 * transaction back, PostgreSQL aborted it. Once space is freed the same request succeeds.
 * PostgreSQL's adapter maps its error as it classifies outages; SQLite's reach the faces as thrown
 * and are mapped where they are answered (api/errors.ts, api/mcp/server.ts, fs/errno.ts): a
 * wrapper around every storage method made mount reads twice as slow.
 */
import { MnemoError } from '../../domain/errors.js';

export function isDiskFull(err: unknown): boolean {
  if (!(err instanceof Error) || err instanceof MnemoError) return false;
  const code = (err as Error & { code?: unknown }).code;
  if (typeof code !== 'string') return false;
  return code === 'SQLITE_FULL' || code.startsWith('SQLITE_FULL_') || code === '53100' || code === 'ENOSPC';
}

export const DISK_FULL_MESSAGE = 'the disk holding the database is full: nothing was written; free space on it, then try again';

export function diskFull(cause: unknown): MnemoError {
  return new MnemoError('storage_full', DISK_FULL_MESSAGE, {}, { cause });
}
