/**
 * @module The composition root and CLI: the only file in src/ that imports fs/ and api/.
 * loadConfig → openSqliteStorage → createService → mount manager → createApp → serve.
 */
import { createApp } from '../api/app.js';
import { serve } from '../api/server.js';
import { parseArgs, USAGE } from './cli.js';
import { loadConfig, type Config } from './config.js';
import { createService, type Service } from './service.js';
import { openSqliteStorage } from './storage/sqlite.js';
import type { Role } from './types.js';

const log = (line: string) => process.stderr.write(`${line}\n`);

async function main(argv: string[]): Promise<number> {
  const { command, args, flags } = parseArgs(argv);
  if (flags['help'] || command === 'help' || command === '--help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const config = loadConfig(process.env, flags);
  switch (command) {
    case 'serve':
      return runServe(config);
    case 'keys':
      return runKeys(config, args, flags);
    default:
      log(`unknown command: ${command}\n\n${USAGE}`);
      return 2;
  }
}

async function runServe(config: Config): Promise<number> {
  const storage = openSqliteStorage(config.dbFile);
  const service = createService({ storage });
  const minted = service.keys.bootstrapAdminKey(config.adminKey);
  const app = createApp({ service, maxBodyBytes: config.maxBodyBytes, log });
  const served = await serve(app, { host: config.host, port: config.port });
  // Scripts read the URL from the first line; keep it first and alone.
  process.stdout.write(`${served.url}\n`);
  if (minted && config.adminKey === null) {
    process.stdout.write(`admin key (shown once, store it now): ${minted.secret}\n`);
  }
  log(`mnemo: data in ${config.dataDir}`);
  await untilSignal();
  await served.close();
  storage.close();
  return 0;
}

function runKeys(config: Config, args: string[], flags: Record<string, string | boolean>): number {
  if (args[0] !== 'create') {
    log('usage: mnemo keys create [--name N] [--role admin|read_write|read_only]');
    return 2;
  }
  const role = (flags['role'] ?? 'admin') as string;
  if (!['admin', 'read_write', 'read_only'].includes(role)) {
    log(`invalid role: ${role}`);
    return 2;
  }
  const service = openService(config);
  const minted = service.keys.createKey(typeof flags['name'] === 'string' ? flags['name'] : 'cli', role as Role);
  process.stdout.write(`${minted.secret}\n`);
  log(`created ${minted.key.id} (${role}) in workspace ${minted.key.workspaceId}`);
  service.storage.close();
  return 0;
}

function openService(config: Config): Service {
  return createService({ storage: openSqliteStorage(config.dbFile) });
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => resolve();
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(`mnemo: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
