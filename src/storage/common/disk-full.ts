/**
 * @module The one place the adapters decide "the disk holding the database is full": SQLite's
 * SQLITE_FULL (and its extended codes), PostgreSQL's disk_full (SQLSTATE 53100), and the operating
 * system's ENOSPC (a write-behind journal, a WAL sync) become MnemoError `storage_full` (507 over
 * HTTP, ENOSPC on a mount), never a bare 500 or EIO. Nothing was written: SQLite rolled the
 * transaction back, PostgreSQL aborted it. Once space is freed the same request succeeds.
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

/** `err` as the caller should see it: a full disk's failure as `storage_full`, anything else unchanged. */
export function asDiskFull(err: unknown): unknown {
  return isDiskFull(err) ? diskFull(err) : err;
}

type AnyFn = (...args: unknown[]) => unknown;

/**
 * The same object with every method's failure (thrown or rejected) passed through `asDiskFull`;
 * `onFull` hears each full-disk failure (the adapter logs the first of a run). Values stay as they are.
 */
export function mapDiskFull<T extends object>(port: T, onFull: (err: unknown) => void = () => {}): T {
  const mapped: Record<string, unknown> = {};
  const fail = (err: unknown): never => {
    if (!isDiskFull(err)) throw err;
    onFull(err);
    throw diskFull(err);
  };
  for (const [name, value] of Object.entries(port)) {
    if (typeof value !== 'function') {
      mapped[name] = value;
      continue;
    }
    const fn = value as AnyFn;
    mapped[name] = function mappedForDiskFull(this: unknown, ...args: unknown[]): unknown {
      let result: unknown;
      try {
        result = fn.apply(this, args);
      } catch (err) {
        return fail(err);
      }
      if (result instanceof Promise) return result.catch(fail);
      return result;
    };
  }
  return mapped as T;
}
