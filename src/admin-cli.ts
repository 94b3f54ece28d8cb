/**
 * @module The operator's commands: `mnemo keys`, `mnemo workspaces`, `mnemo check`, `mnemo backup`,
 * `mnemo restore`. Each opens the database itself, so keys and checks work beside a running server.
 */
import { resolve } from 'node:path';
import type { Config } from './config.js';
import { createService, type Service } from './service.js';
import { backupDatabase, restoreDatabase } from './storage/sqlite-backup.js';
import { openSqliteStorage } from './storage/sqlite.js';
import { runningServerPid } from './pidfile.js';
import type { ApiKey, Role } from './types.js';

type Flags = Record<string, string | boolean>;
type Log = (line: string) => void;
const out = (line: string) => process.stdout.write(`${line}\n`);
const ROLES: readonly string[] = ['admin', 'read_write', 'read_only'];

export const KEYS_USAGE =
  'usage: mnemo keys create [--name N] [--role admin|read_write|read_only] [--workspace ID] [--stores ID,ID] [--all-workspaces]\n' +
  '       mnemo keys list [--workspace ID] [--json]\n' +
  '       mnemo keys revoke <apikey_id> [--workspace ID]';

function withService<T>(config: Config, fn: (service: Service) => T): T {
  const service = createService({ storage: openSqliteStorage(config.dbFile) });
  try {
    return fn(service);
  } finally {
    service.storage.close();
  }
}

function workspaceOf(service: Service, flags: Flags): string {
  return typeof flags['workspace'] === 'string' ? flags['workspace'] : service.keys.defaultWorkspace().id;
}

export function runKeys(config: Config, args: string[], flags: Flags, log: Log): number {
  const [sub, id] = args;
  if (sub === 'create') {
    const role = typeof flags['role'] === 'string' ? flags['role'] : 'admin';
    if (!ROLES.includes(role)) {
      log(`invalid role: ${role}`);
      return 2;
    }
    const storeIds = typeof flags['stores'] === 'string' ? flags['stores'].split(',').filter(Boolean) : null;
    return withService(config, (service) => {
      const ws = workspaceOf(service, flags);
      for (const s of storeIds ?? []) {
        if (service.storage.getStore(ws, s) === null) throw new Error(`no memory store ${s} in workspace ${ws}`);
      }
      const minted = service.keys.createKey(typeof flags['name'] === 'string' ? flags['name'] : 'cli', role as Role, ws, {
        storeIds,
        allWorkspaces: flags['all-workspaces'] === true,
      });
      out(minted.secret);
      log(`created ${minted.key.id} (${role}) in workspace ${ws}${storeIds ? ` for stores ${storeIds.join(', ')}` : ''}`);
      return 0;
    });
  }
  if (sub === 'list') {
    return withService(config, (service) => {
      const keys = service.storage.listApiKeys(workspaceOf(service, flags));
      if (flags['json'] === true) out(JSON.stringify(keys));
      else for (const k of keys) out(describeKey(k));
      return 0;
    });
  }
  if (sub === 'revoke' && id) {
    return withService(config, (service) => {
      const key = service.storage.revokeApiKey(workspaceOf(service, flags), id, service.clock());
      log(`revoked ${key.id} at ${key.revokedAt}`);
      return 0;
    });
  }
  log(KEYS_USAGE);
  return 2;
}

function describeKey(k: ApiKey): string {
  const scope = k.allWorkspaces ? 'all workspaces' : k.storeIds ? `stores ${k.storeIds.join(',')}` : 'all stores';
  return [k.id, k.role, scope, k.revokedAt ? `revoked ${k.revokedAt}` : 'active', k.name].join('\t');
}

export function runWorkspaces(config: Config, args: string[], log: Log): number {
  const [sub, name] = args;
  if (sub === 'create' && name) {
    return withService(config, (service) => {
      const ws = service.keys.createWorkspace(name);
      out(ws.id);
      log(`created workspace ${ws.id} (${name}); mint its first key with: mnemo keys create --workspace ${ws.id}`);
      return 0;
    });
  }
  if (sub === 'list') {
    return withService(config, (service) => {
      service.keys.defaultWorkspace();
      for (const w of service.storage.listWorkspaces()) out(`${w.id}\t${w.name}`);
      return 0;
    });
  }
  log('usage: mnemo workspaces create <name> | mnemo workspaces list');
  return 2;
}

/** SQLite's integrity check, then the domain's invariants; prints each problem, exits 1 if any. */
export function runCheck(config: Config, log: Log): number {
  return withService(config, (service) => {
    const problems = [...service.storage.integrityCheck().map((p) => `sqlite: ${p}`), ...service.storage.domainCheck()];
    if (problems.length === 0) {
      out(`ok: ${config.dbFile} passed the integrity check and every domain invariant`);
      return 0;
    }
    for (const p of problems) out(`problem: ${p}`);
    log(`mnemo check: ${problems.length} problem(s) in ${config.dbFile}`);
    return 1;
  });
}

export async function runBackup(config: Config, args: string[], log: Log): Promise<number> {
  if (!args[0]) {
    log('usage: mnemo backup <file> [--data-dir D]');
    return 2;
  }
  const dest = resolve(args[0]);
  await backupDatabase(config.dbFile, dest);
  out(dest);
  log(`backed up ${config.dbFile} to ${dest}`);
  return 0;
}

export function runRestore(config: Config, args: string[], log: Log): number {
  if (!args[0]) {
    log('usage: mnemo restore <backup file> [--data-dir D]   (stop the server first)');
    return 2;
  }
  const pid = runningServerPid(config.dataDir);
  if (pid !== null) {
    log(`refusing to restore: a mnemo server (pid ${pid}) is running on ${config.dataDir}; stop it first`);
    return 1;
  }
  restoreDatabase(resolve(args[0]), config.dbFile);
  log(`restored ${config.dbFile} from ${resolve(args[0])}`);
  return 0;
}
