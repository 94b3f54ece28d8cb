/**
 * @module Online backups and restores of the SQLite file. A backup uses SQLite's backup API, so it is
 * a consistent copy even while the server writes; a restore checks the copy before it replaces the file.
 */
import { copyFileSync, existsSync, fsyncSync, openSync, closeSync, renameSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { SCHEMA_VERSION } from './schema.js';

export async function backupDatabase(dbFile: string, dest: string): Promise<void> {
  if (!existsSync(dbFile)) throw new Error(`no database at ${dbFile}`);
  if (existsSync(dest)) throw new Error(`${dest} already exists; choose a new file`);
  const db = new Database(dbFile, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    await db.backup(dest);
  } finally {
    db.close();
  }
}

/** Problems that make `file` unfit to restore (not SQLite, damaged, or from a newer mnemo). */
export function inspectBackup(file: string): string[] {
  if (!existsSync(file)) return [`no such file: ${file}`];
  let db: Database.Database | null = null;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version < 1) return [`${file} is not a mnemo database (schema version ${version})`];
    if (version > SCHEMA_VERSION) return [`${file} has schema version ${version}, newer than this mnemo (${SCHEMA_VERSION})`];
    const rows = db.pragma('integrity_check') as { integrity_check: string }[];
    return rows.map((r) => r.integrity_check).filter((m) => m !== 'ok');
  } catch (err) {
    return [`${file} cannot be read as SQLite: ${(err as Error).message}`];
  } finally {
    db?.close();
  }
}

/** Replaces `dbFile` with a checked copy of `backup`. The server must not be running on it. */
export function restoreDatabase(backup: string, dbFile: string): void {
  const problems = inspectBackup(backup);
  if (problems.length > 0) throw new Error(`refusing to restore: ${problems.join('; ')}`);
  const tmp = `${dbFile}.restoring`;
  copyFileSync(backup, tmp);
  const fd = openSync(tmp, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  // The old file's WAL must not be replayed onto the restored one.
  rmSync(`${dbFile}-wal`, { force: true });
  rmSync(`${dbFile}-shm`, { force: true });
  renameSync(tmp, dbFile);
}
