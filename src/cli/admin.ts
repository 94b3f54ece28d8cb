/**
 * @module The operator's commands: `mnemo keys`, `mnemo workspaces`, `mnemo check`, `mnemo backup`,
 * `mnemo restore`. Each opens the database itself, so keys and checks work beside a running server.
 */
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { apiKeyJson, workspaceJson } from './key-wire.js';
import type { Config } from './config.js';
import { giveRestoredFilesToDataDirOwner, leftJournalWrites, lockForRestore, prepareRestoreTarget, refuseMigration, useDatabase } from './data-dir.js';
import { journalFileOf } from '../storage/sqlite/journal.js';
import { createService, type Service } from '../service/service.js';
import { backupDatabase, requireBackupFile, restoreDatabase } from '../storage/sqlite/backup.js';
import { openSqliteStorage } from '../storage/sqlite/open.js';
import { damaged, isDamage } from '../storage/sqlite/check.js';
import { SCHEMA_VERSION } from '../storage/sqlite/schema/migrations.js';
import { PG_SCHEMA_VERSION } from '../storage/postgres/schema/migrations.js';
import { parseKeyCreate, parseWorkspaceCreate } from '../validate/index.js';
import { isMnemoError } from '../domain/errors.js';
import type { ApiKey } from '../domain/types.js';

type Flags = Record<string, string | boolean>;
type Log = (line: string) => void;
const out = (line: string) => process.stdout.write(`${line}\n`);
const ROLES: readonly string[] = ['admin', 'read_write', 'read_only'];

/**
 * Opens the existing database (never creates one, never migrates an older SQLite file) under the data dir's shared lock; on PostgreSQL
 * (MNEMO_DATABASE_URL) the configured database, migrated as a server would if it holds mnemo's
 * schema, else refused as SQLite refuses a data directory without mnemo.db.
 */
async function withService<T>(config: Config, fn: (service: Service) => T | Promise<T>, { readOnly = false } = {}): Promise<T> {
  const lock = config.databaseUrl === null ? useDatabase(config, { readOnly }) : { release() {} };
  try {
    // A command that only reads opens the file read-only (no migration, no pragma written): it works
    // on a file this user may not write, and cannot change one it should not.
    // None migrates an older file, writing or not (`mnemo serve` does): one refusal for all of them.
    const storage = config.databaseUrl === null
      ? openSqliteStorage(config.dbFile, { readOnly, readers: readOnly ? 0 : undefined, claimMigration: refuseMigration(config) })
      : await (await import('../storage/postgres/open.js')).openPostgresStorage(config.databaseUrl, { create: false });
    try {
      return await fn(createService({ storage }));
    } finally {
      await storage.close();
    }
  } finally {
    lock.release();
  }
}

async function workspaceOf(service: Service, flags: Flags): Promise<string> {
  return typeof flags['workspace'] === 'string' ? flags['workspace'] : (await service.keys.defaultWorkspace()).id;
}

/** `mnemo keys <sub>`; cli/args.ts has already checked the subcommand, its arguments and its flags. */
export async function runKeys(config: Config, sub: string, args: string[], flags: Flags, log: Log): Promise<number> {
  if (sub === 'create') {
    const role = String(flags['role']);
    if (!ROLES.includes(role)) {
      log(`mnemo keys create: invalid role: ${role} (admin, read_write or read_only)`);
      return 2;
    }
    // The API's rules for a new key's body, applied to the flags: `--stores ,` names no store, as [] does.
    const stores = typeof flags['stores'] === 'string' ? flags['stores'].split(',').filter(Boolean) : null;
    const input = byApiRules('keys create', { name: '--name', memory_store_ids: '--stores' }, log, () =>
      parseKeyCreate({ name: typeof flags['name'] === 'string' ? flags['name'] : 'cli', role, memory_store_ids: stores }),
    );
    if (input === null) return 2;
    const { storeIds } = input;
    return withService(config, async (service) => {
      const ws = await workspaceOf(service, flags);
      for (const s of storeIds ?? []) {
        if (!(await service.operator.storeExists(ws, s))) throw new Error(`no memory store ${s} in workspace ${ws}`);
      }
      const minted = await service.keys.createKey(input.name, input.role, ws, {
        storeIds,
        allWorkspaces: flags['all-workspaces'] === true,
      });
      out(minted.secret);
      log(`created ${minted.key.id} (${role}) in workspace ${ws}${storeIds ? ` for stores ${storeIds.join(', ')}` : ''}`);
      return 0;
    });
  }
  if (sub === 'list') {
    return withService(config, async (service) => {
      const keys = await service.operator.listKeys(await workspaceOf(service, flags));
      if (flags['json'] === true) out(JSON.stringify(keys.map(apiKeyJson)));
      else for (const k of keys) out(describeKey(k));
      return 0;
    }, { readOnly: true });
  }
  return withService(config, async (service) => {
    const key = await service.operator.revokeKey(await workspaceOf(service, flags), args[0]!);
    log(`revoked ${key.id} at ${key.revokedAt}`);
    return 0;
  });
}

/**
 * Runs the API's parser of a request body (src/validate) on what the command line gave, so the CLI
 * refuses exactly what the API refuses, by the one rule. A refusal names the flag or argument
 * (`fields`: the body's field → how the command line spells it) and is a bad argument: exit 2.
 */
function byApiRules<T>(command: string, fields: Record<string, string>, log: Log, parse: () => T): T | null {
  try {
    return parse();
  } catch (err) {
    if (!isMnemoError(err) || (err.code !== 'invalid_request' && err.code !== 'invalid_utf8')) throw err;
    const field = err.details.field;
    const named = field !== undefined && fields[field] !== undefined && err.message.startsWith(field) ? `${fields[field]}${err.message.slice(field.length)}` : err.message;
    log(`mnemo ${command}: ${named}`);
    return null;
  }
}

function describeKey(k: ApiKey): string {
  const scope = k.allWorkspaces ? 'all workspaces' : k.storeIds ? `stores ${k.storeIds.join(',')}` : 'all stores';
  return [k.id, k.role, scope, k.revokedAt ? `revoked ${k.revokedAt}` : 'active', k.name].join('\t');
}

export async function runWorkspaces(config: Config, sub: string, args: string[], flags: Flags, log: Log): Promise<number> {
  if (sub === 'create') {
    const input = byApiRules('workspaces create', { name: '<name>' }, log, () => parseWorkspaceCreate({ name: args[0] }));
    if (input === null) return 2;
    const { name } = input;
    return withService(config, async (service) => {
      const ws = await service.keys.createWorkspace(name);
      out(ws.id);
      log(`created workspace ${ws.id} (${name}); mint its first key with: mnemo keys create --workspace ${ws.id} --role admin`);
      return 0;
    });
  }
  return withService(config, async (service) => {
    await service.keys.defaultWorkspace();
    const all = await service.operator.listWorkspaces();
    if (flags['json'] === true) out(JSON.stringify(all.map(workspaceJson)));
    else for (const w of all) out(`${w.id}\t${w.name}`);
    return 0;
  }, { readOnly: true });
}

/** SQLite's integrity check, then the domain's invariants; prints each problem, exits 1 if any. */
export async function runCheck(config: Config, log: Log): Promise<number> {
  try {
    return await checkDatabase(config, log);
  } catch (err) {
    // A file SQLite cannot even open as a database is a finding too, in the same form.
    if (config.databaseUrl !== null || !isDamage(err)) throw err;
    out(`problem: ${damaged(config.dbFile, err)}`);
    log(`mnemo check: 1 problem(s) in ${config.dbFile}`);
    return 1;
  }
}

function checkDatabase(config: Config, log: Log): Promise<number> {
  return withService(config, async (service) => {
    // The same damage may stop both the engine's check and the domain's: said once.
    const problems = [...new Set(await service.operator.check())];
    const left = config.databaseUrl === null ? leftJournalWrites(config) : 0;
    if (left > 0) problems.push(leftJournalSentence(config, left));
    // Never the URL: it may carry a password.
    const where = config.databaseUrl === null ? config.dbFile : 'the PostgreSQL database';
    // The file was refused unless at this code's schema; the PostgreSQL database was brought to it.
    const schema = `schema version ${config.databaseUrl === null ? SCHEMA_VERSION : PG_SCHEMA_VERSION}`;
    if (problems.length === 0) {
      out(`ok: ${where} (${schema}) passed the integrity check and every domain invariant`);
      return 0;
    }
    for (const p of problems) out(`problem: ${p}`);
    log(`mnemo check: ${problems.length} problem(s) in ${where} (${schema})`);
    return 1;
  }, { readOnly: true });
}

export async function runBackup(config: Config, args: string[], log: Log): Promise<number> {
  const dest = resolve(args[0]!);
  // A backup only reads the database (backup.ts opens it read-only).
  const lock = useDatabase(config, { readOnly: true });
  try {
    await backupDatabase(config.dbFile, dest);
  } finally {
    lock.release();
  }
  out(dest);
  log(`backed up ${config.dbFile} to ${dest}`);
  const left = leftJournalWrites(config);
  if (left > 0) log(`mnemo: warn: the backup lacks ${left} mount write(s): ${leftJournalSentence(config, left)}; back up again after that`);
  return 0;
}

/** A crashed server's journal of mount writes (cli/data-dir.ts `leftJournalWrites`), said for `check` and `backup`. */
function leftJournalSentence(config: Config, writes: number): string {
  return `${journalFileOf(config.dbFile)} holds ${writes} mount write(s) a server acknowledged but had not committed when it stopped (a crash); the next mnemo serve, mount or mcp on ${config.dataDir} applies them`;
}

/** Into a data dir that has a database, or an empty or new one; never while anything else uses it. */
export function runRestore(config: Config, args: string[], log: Log): number {
  const file = resolve(args[0]!);
  requireBackupFile(file);
  const created = prepareRestoreTarget(config);
  try {
    const lock = lockForRestore(config);
    try {
      restoreDatabase(file, config.dbFile);
    } finally {
      lock.release();
    }
    giveRestoredFilesToDataDirOwner(config);
  } catch (err) {
    // A refused restore into a new directory leaves no directory behind.
    if (created) rmSync(config.dataDir, { recursive: true, force: true });
    throw err;
  }
  log(`restored ${config.dbFile} from ${file}`);
  return 0;
}
