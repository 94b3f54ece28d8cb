/**
 * @module The composition root and CLI: the only file in src/ that imports fs/ and api/.
 * loadConfig → openSqliteStorage (or openPostgresStorage with MNEMO_DATABASE_URL) → createService →
 * mount manager → createApp → serve.
 */
import { readdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { runBackup, runCheck, runKeys, runRestore, runWorkspaces } from './cli/admin.js';
import { parseArgs, usageOf } from './cli/args.js';
import { packageVersion } from './cli/version.js';
import { ConfigError, loadConfig, type Config } from './cli/config.js';
import { mountAccess, type Mounter } from './service/mounts.js';
import { createService, type Service } from './service/service.js';
import { openSqliteStorage, type SqliteOptions, type SqliteStorage } from './storage/sqlite/open.js';
import { SCHEMA_VERSION } from './storage/sqlite/schema/migrations.js';
import { mountLocks, type MountLocks } from './storage/sqlite/lock.js';
import { PG_SCHEMA_VERSION } from './storage/postgres/schema/migrations.js';
import type { PostgresOptions, PostgresStorage } from './storage/postgres/open.js';
import type { Storage } from './storage/port.js';
import { isMnemoError } from './domain/errors.js';
import { removePidFile, runningServerPid, writePidFile } from './cli/pidfile.js';
import { claimLeftJournal, migrateUnlessServed, ownDataDir, prepareMountRoot, useDatabase } from './cli/data-dir.js';
import { describeError } from './cli/system-errors.js';
import { startSearchUpkeep } from './service/search-upkeep.js';
import { createLogger, lineLog, type Logger, type ProcessLogger } from './cli/log.js';
import { waitForDatabase } from './cli/wait-for-database.js';

/** Plain lines for one-shot commands; serve, mount and mcp log through pino (set in main). */
let log: (line: string) => void = (line) => void process.stderr.write(`${line}\n`);
let warn = log;
/** Why a command cannot go on (it exits non-zero after): at error level in serve's, mount's and mcp's log. */
let fatal = log;
let logger: Logger | null = null;
let processLog: ProcessLogger | null = null;
/** The commands that run until stopped: their stderr is a log, in JSON lines (pretty on a TTY). */
const LOGGED_COMMANDS = new Set(['serve', 'mount', 'mcp']);

/**
 * Every process that writes (serve, mount, mcp) indexes its own writes for search; returns the stop.
 * Both engines keep a backlog (on PostgreSQL every server indexes from the one shared queue). Once
 * the queue is empty, the same turns remove deleted stores' rows (SQLite: sqlite/store-purge.ts),
 * and then tidy what the writes left (PostgreSQL: vacuums, postgres/vacuum.ts).
 */
function indexInBackground(service: Service, storage: Storage, standBy?: () => boolean): () => void {
  if (!storage.keepsSearchBacklog()) return () => {};
  const tidy = async (): Promise<number> => {
    const tables = await service.tidyStorage();
    if (tables.length > 0) log(`mnemo: vacuumed ${tables.join(', ')}: a burst of writes left many dead rows there`);
    return 0;
  };
  const index = async (max: number): Promise<number> => (await service.indexSearchBacklog(max)) || Number(await service.purgeDeletedStores()) || tidy();
  return startSearchUpkeep({ index, changeMark: storage.changeMark, log, ...(standBy ? { standBy } : {}) });
}

/**
 * For `mnemo mount` and `mnemo mcp` on SQLite: the upkeep stands by while a server owns the data
 * directory, which indexes and purges for every process writing the file. Run here too, each of its
 * transactions (a batch of up to 500 memories) held the file's one write lock, and the server's
 * next save waited for it on its serving thread: every mount and request of the server with it.
 * Logged when it changes, so a user sees which process keeps search current.
 */
function besideServer(config: Config): (() => boolean) | undefined {
  if (config.databaseUrl !== null) return undefined;
  let last: number | null | undefined;
  return () => {
    const pid = runningServerPid(config.dataDir, 'sqlite');
    if (pid !== last) {
      log(pid === null
        ? 'mnemo: no server runs on this data directory: this process indexes writes for search'
        : `mnemo: the server on this data directory (pid ${pid}) indexes writes for search; this process stands by`);
      last = pid;
    }
    return pid !== null;
  };
}

/**
 * The configured engine: PostgreSQL when MNEMO_DATABASE_URL is set (migrated under its advisory
 * lock, or refused when its schema is newer than this code), else SQLite in the data directory.
 * `wait`: a PostgreSQL that cannot be reached is waited for (serve) rather than an exit.
 */
/** One line when a migration ran (an upgrade is never silent): which database, from which schema version to which, how long. */
function migrated(what: string): (from: number, to: number, seconds: number) => void {
  return (from, to, seconds) => log(`mnemo: migrated ${what} from schema ${from} to ${to} in ${seconds.toFixed(2)} s`);
}

async function openStorage(config: Config, sqlite: () => SqliteStorage, pg: PostgresOptions = {}, wait = false): Promise<Storage> {
  if (config.databaseUrl === null) return sqlite();
  const url = config.databaseUrl;
  // Loaded only on PostgreSQL (as the HTTP face and the mount are only by the commands that use them): a
  // one-shot command on SQLite starts in a fraction of the time.
  const { openPostgresStorage } = await import('./storage/postgres/open.js');
  const open = () => openPostgresStorage(url, { log: (line) => warn(line), onMigrated: migrated('the PostgreSQL database'), ...pg });
  return wait ? waitForDatabase(open, (line) => warn(line)) : open();
}

/**
 * On PostgreSQL, other servers' commits, redactions and session ends reach this process through one
 * LISTEN connection (storage/postgres/listener.ts): their stores' mount caches drop (changeMark
 * moves), change feed followers read at once, a redacted version's bytes leave this server's mounts,
 * and a session of this node ended elsewhere is unmounted.
 * SQLite has one server per file: nothing to hear.
 */
async function hearOtherServers(storage: Storage, service: Service): Promise<void> {
  if (!('listen' in storage)) return;
  const failed = (err: unknown) => warn(`mnemo: could not unmount a session ended elsewhere: ${describeError(err)}`);
  await (storage as PostgresStorage).listen({
    change: (storeId) => service.outsideCommit(storeId),
    versionRedacted: (storeId, versionId, erasedSha256) => service.outsideRedaction(storeId, versionId, erasedSha256),
    sessionEnded: (_workspaceId, sessionId) => void service.sessions.endedElsewhere(sessionId).catch(failed),
    resync: () => {
      service.outsideResync();
      void service.sessions.reconcile().catch(failed);
    },
  });
}

/**
 * For `mnemo mount` and `mnemo mcp` on SQLite: opens the file replaying the mount writes a crashed
 * server left in its journal, under the server lock, before this process writes anything (else it
 * writes over what it cannot see, and the next server's replay over its writes). The lock is let
 * go once the file is open. An older file is migrated only under that lock (cli/data-dir.ts).
 */
function replayingLeftJournal(config: Config, open: (replay: Pick<SqliteOptions, 'replayJournal' | 'claimMigration'>) => SqliteStorage): () => SqliteStorage {
  return () => {
    const claim = claimLeftJournal(config);
    try {
      // Holding the server lock for the replay, this process may migrate; else only while no server runs.
      return open(claim === null ? { claimMigration: migrateUnlessServed(config) } : { replayJournal: { log: (line) => warn(line) } });
    } finally {
      claim?.release();
    }
  };
}

/** SQLite's data-dir lock (a restore must not replace the file under us); PostgreSQL has no file to hold. */
function holdDatabase(config: Config): { release(): void } {
  return config.databaseUrl === null ? useDatabase(config) : { release() {} };
}

async function main(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv);
  if (parsed.kind === 'help') {
    process.stdout.write(parsed.text);
    return 0;
  }
  if (parsed.kind === 'version') {
    // The package version alone on the first line (scripts read it), then the schemas this code reads and writes.
    process.stdout.write(`${packageVersion()}\nschema versions: SQLite ${SCHEMA_VERSION}, PostgreSQL ${PG_SCHEMA_VERSION} (mnemo check shows a database's)\n`);
    return 0;
  }
  if (parsed.kind === 'error') {
    log(`${parsed.message}\n${parsed.usage.trimEnd()}`);
    return 2;
  }
  const { command, sub, args, flags } = parsed;
  const name = sub === null ? command : `${command} ${sub}`;
  let config: Config;
  try {
    config = loadConfig(process.env, flags, { alternatives: command !== 'serve' });
  } catch (err) {
    // A bad flag value is a usage error, like a bad flag (exit 2 with the usage); a bad environment value exits 1.
    if (!(err instanceof ConfigError) || err.flag === null) throw err;
    log(`mnemo ${name}: ${err.message}\n${usageOf(name).trimEnd()}`);
    return 2;
  }
  if (LOGGED_COMMANDS.has(command ?? '')) {
    processLog = createLogger({ level: config.logLevel });
    const l = (logger = processLog.logger);
    log = lineLog(l);
    warn = (line) => l.warn(line);
    // Why it cannot start or go on reaches stderr whatever the level (`silent` and `fatal` included): at error.
    const last = l.isLevelEnabled('error') ? l : l.child({}, { level: 'error' });
    fatal = (line) => last.error(line);
  }
  if (config.databaseUrl !== null && (command === 'backup' || command === 'restore')) return refuseOnPostgres(command);
  switch (command) {
    case 'serve':
      return runServe(config);
    case 'keys':
      return runKeys(config, sub!, args, flags, log);
    case 'workspaces':
      return runWorkspaces(config, sub!, args, flags, log);
    case 'check':
      return runCheck(config, log);
    case 'backup':
      return runBackup(config, args, log);
    case 'restore':
      return runRestore(config, args, log);
    case 'mount':
      return runMount(config, args, flags);
    case 'mcp':
      return runMcp(config);
    default:
      throw new Error(`no handler for command ${command}`);
  }
}

/** backup and restore copy SQLite's file; on PostgreSQL they are PostgreSQL's own tools. */
function refuseOnPostgres(command: 'backup' | 'restore'): number {
  const tool = command === 'backup' ? 'pg_dump -Fc -f FILE "$MNEMO_DATABASE_URL"' : 'pg_restore --clean --if-exists -d "$MNEMO_DATABASE_URL" FILE';
  log(`mnemo ${command}: the database is PostgreSQL (MNEMO_DATABASE_URL); use PostgreSQL's own tools: ${tool}`);
  return 2;
}

async function runServe(config: Config): Promise<number> {
  // One server per data dir, decided before anything is opened or any mount is touched.
  const owned = ownDataDir(config);
  try {
    prepareMountRoot(config.mountRoot);
  } catch (err) {
    owned.release();
    throw err;
  }
  const [{ createApp }, { createMetrics }, { serve }, { createMountManager }] = await Promise.all([
    import('../api/app.js'), import('../api/metrics.js'), import('../api/server.js'), import('../fs/index.js'),
  ]);
  const metrics = createMetrics();
  // Checkpoints run on a thread of their own: the event loop serves every mount's saves.
  const storage = await openStorage(
    config,
    () => openSqliteStorage(config.dbFile, {
      onMigrated: migrated(config.dbFile),
      onCommit: metrics.commit, onSync: metrics.walSync, onLockWait: metrics.lockWait, backgroundCheckpoints: { log: (line) => warn(line) }, readers: config.readerThreads,
      // This process owns the data dir (ownDataDir above): its mounts' closes may commit in batches.
      writeBehind: { log: (line) => warn(line) },
    }),
    { onCommit: metrics.commit },
    true,
  );
  const mounter = createMountManager({ log, localLimits: config.localLimits, cacheSeconds: config.mountCacheSeconds, spinUs: config.mountSpinUs });
  const service = createService({
    storage,
    mounter,
    mountRoot: config.mountRoot,
    nodeId: config.nodeId,
    // SQLite: this server owns the data directory (ownDataDir above), so every session is its own.
    soleServer: config.databaseUrl === null,
    ...localMountLocks(config),
    log,
    idempotencyTtlSeconds: config.idempotencyTtlSeconds,
    checkpointMaxBytes: config.checkpointMaxBytes,
    limits: config.storeLimits,
    observer: metrics.observer,
    mountSync: config.mountSync,
    onSyncError: syncFailed,
  });
  const { minted, revoked } = await service.keys.bootstrapAdminKey(config.adminKey, config.rotateAdminKey);
  if (revoked) log(`mnemo: admin key rotated: ${revoked.id} is revoked, MNEMO_ADMIN_KEY is the admin key now`);
  await service.idempotency.purge();
  metrics.watch({
    activeSessions: service.countMountedSessions,
    mounts: async () => (await mounter.mounted?.())?.length ?? 0,
    unsyncedCommits: () => service.durability.unsynced(),
    feedStreams: () => service.feed.following(),
    droppedLogLines: () => processLog?.droppedLines() ?? 0,
    searchBacklog: () => storage.searchBacklog(),
    statsAnsweredByBinding: () => mounter.statsAnswered(),
  });
  const app = createApp({
    service, maxBodyBytes: config.maxBodyBytes, log,
    ...(logger ? { logger } : {}),
    maxInflightBodies: config.maxInflightBodies, bodyTimeoutMs: config.bodyTimeoutSeconds * 1000, metrics, metricsPublic: config.metricsPublic,
  });
  // The port is bound before stale mounts are cleared or sessions remounted, so a serve that cannot
  // listen (EADDRINUSE) exits having touched no mount. The URL is printed once sessions are back.
  const served = await serve(app, { host: config.host, port: config.port }).catch((err: unknown) => {
    throw new Error(`cannot listen on ${config.host}:${config.port}: ${listenError(err)}`);
  });
  writePidFile(config.dataDir, config.databaseUrl === null ? 'sqlite' : 'postgres');
  // Listening before the remount: a session ended elsewhere from here on is heard, one ended before is not remounted.
  await hearOtherServers(storage, service);
  await service.sessions.restore();
  // Scripts read the URL from the first line; keep it first and alone.
  // A caller may stop us as soon as it reads the URL: be ready for the signal before printing it.
  const stopped = untilSignal();
  process.stdout.write(`${served.url}\n`);
  if (minted && config.adminKey === null) {
    process.stdout.write(`admin key (shown once, store it now): ${minted.secret}\n`);
  }
  log(`mnemo: data in ${config.databaseUrl === null ? config.dataDir : 'PostgreSQL'}, mounts under ${config.mountRoot}`);
  const sweep = sweepExpired(service, mounter);
  const stopIndexing = indexInBackground(service, storage);
  await stopped;
  log('mnemo: shutting down');
  clearInterval(sweep);
  stopIndexing();
  // Change feed streams never end by themselves: end them, so the server's close need not wait for them.
  service.feed.stop();
  await served.close();
  await mounter.unmountAll();
  // The last sync after the unmount's final saves; the close's checkpoint (at FULL) syncs again anyway.
  await service.durability.stop().catch(syncFailed);
  await storage.close();
  removePidFile(config.dataDir);
  owned.release();
  return 0;
}

function listenError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') return 'the address is already in use (another server on this port?)';
  if (code === 'EACCES') return 'permission denied (ports below 1024 need privileges)';
  if (code === 'EADDRNOTAVAIL') return 'no such address on this machine';
  return err instanceof Error ? err.message : String(err);
}

/** MCP over stdio for one API key (MNEMO_API_KEY): stdout is the protocol, logs go to stderr. */
async function runMcp(config: Config): Promise<number> {
  if (config.apiKey === null) {
    fatal('mnemo mcp needs MNEMO_API_KEY: the API key whose role and store grants the tools act with');
    return 2;
  }
  const lock = holdDatabase(config);
  const storage = await openStorage(config, withReadersLogged(replayingLeftJournal(config, (replay) => openSqliteStorage(config.dbFile, { readers: config.readerThreads, onMigrated: migrated(config.dbFile), ...replay }))));
  const service = createService({ storage, checkpointMaxBytes: config.checkpointMaxBytes, limits: config.storeLimits });
  const stopIndexing = indexInBackground(service, storage, besideServer(config));
  try {
    const { serveMcpStdio } = await import('../api/mcp/stdio.js');
    await serveMcpStdio({ service, apiKey: config.apiKey, log });
  } finally {
    stopIndexing();
    await storage.close();
    lock.release();
  }
  return 0;
}

/**
 * For `mnemo mount` and `mnemo mcp` on SQLite: opens the file and says where the reads that grow
 * with the store (searches, listing pages, directory moves, heavy search-index turns) run, as MNEMO_READER_THREADS set it.
 */
function withReadersLogged(open: () => SqliteStorage): () => SqliteStorage {
  return () => {
    const storage = open();
    const n = storage.readerThreads;
    log(n === 0
      ? 'mnemo: searches, listing pages, directory moves, heavy index turns and store removals run on the serving thread (MNEMO_READER_THREADS=0)'
      : `mnemo: searches, listing pages, directory moves, heavy index turns and store removals run on up to ${n} reader thread${n === 1 ? '' : 's'} (MNEMO_READER_THREADS)`);
    return storage;
  };
}

/** Mounts one store at a directory for local use until SIGINT/SIGTERM. */
async function runMount(config: Config, args: string[], flags: Record<string, string | boolean>): Promise<number> {
  const [storeId, dir] = args as [string, string];
  const lock = holdDatabase(config);
  // Checkpoints run on a thread of their own: the event loop serves the mount's saves.
  const storage = await openStorage(config, withReadersLogged(replayingLeftJournal(config, (replay) => openSqliteStorage(config.dbFile, { backgroundCheckpoints: { log: (line) => warn(line) }, readers: config.readerThreads, onMigrated: migrated(config.dbFile), ...replay }))));
  const { createMountManager } = await import('../fs/index.js');
  const mounter = createMountManager({ log, localLimits: config.localLimits, cacheSeconds: config.mountCacheSeconds, spinUs: config.mountSpinUs });
  const locks = config.databaseUrl === null ? mountLocks(config.dataDir) : null;
  const service = createService({
    storage, mounter, log, nodeId: config.nodeId, limits: config.storeLimits, mountSync: config.mountSync, onSyncError: syncFailed,
    // SQLite: every process on the file is on this host, whatever node id it was given.
    oneHost: config.databaseUrl === null, ...localMountLocks(config),
  });
  try {
    return await mountUntilSignal(config, { service, storage, mounter, locks }, storeId, resolve(dir), flags['read-only'] === true);
  } finally {
    await service.durability.stop().catch(syncFailed);
    await storage.close();
    lock.release();
  }
}

interface MountProcess {
  service: Service;
  storage: Storage;
  mounter: Mounter;
  /** SQLite: the session's lock, held while this process runs (null on PostgreSQL: its pid tells). */
  locks: MountLocks | null;
}

/**
 * SQLite: the `mnemo mount` sessions' locks in the data directory say whether their processes run
 * (storage/sqlite/lock.ts); on PostgreSQL each host has its own directory, so their pids tell.
 */
function localMountLocks(config: Config): { localMountLocks?: MountLocks } {
  if (config.databaseUrl !== null) return {};
  return { localMountLocks: mountLocks(config.dataDir) };
}

async function mountUntilSignal(config: Config, { service, storage, mounter, locks }: MountProcess, storeId: string, hostPath: string, readOnly: boolean): Promise<number> {
  const store = await storage.getStoreById(storeId);
  if (!store) {
    fatal(`mnemo mount: no memory store ${storeId} in ${config.databaseUrl === null ? config.dbFile : 'the PostgreSQL database'}`);
    return 1;
  }
  // Sessions mount over files left in their own mount points (logged); a directory the user names
  // is theirs, and mounting over its files would hide them, so that is refused instead.
  const present = await readdir(hostPath).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOTDIR' ? null : ([] as string[])));
  if (present === null) {
    fatal(`mnemo mount: ${hostPath} is a file, not a directory; mount on an empty or new directory`);
    return 1;
  }
  if (present.length > 0) {
    fatal(`mnemo mount: ${hostPath} is not empty (${present.length} entr${present.length === 1 ? 'y' : 'ies'}); mount on an empty or new directory`);
    return 1;
  }
  const local = service.localSessions;
  await local.endStaleMounts(mounter, (line) => log(`mnemo: ${line}`));
  // Writes are attributed to a session of their own, recorded (with this pid) so the API shows it.
  const session = local.start({ store, hostPath, readOnly });
  // Held until the session has ended: while it is, every process on the file knows this one runs.
  // Released (its file removed) however this process gets to its end; a kill leaves the file, free,
  // for the next start's check of sessions to remove.
  const lock = locks?.hold(session.id) ?? null;
  let mounted = false;
  try {
    const access = mountAccess(store, readOnly);
    await hearOtherServers(storage, service);
    await mounter.mount({ storeId, hostPath, readOnly: access !== 'writable', actor: { type: 'session_actor', sessionId: session.id }, service: service });
    mounted = true;
    await local.record(session);
  } catch (err) {
    // Mounted but not recorded: this process is the mount's only owner (no session says it runs),
    // so it unmounts before it goes, rather than leave a live mount nobody answers for.
    const unmounted = mounted ? await mounter.unmountAll().then(() => null, (e: unknown) => e) : null;
    lock?.release();
    if (!mounted) throw err;
    const left = unmounted === null ? 'unmounted it' : `and could not unmount it: ${describeError(unmounted)} (fusermount3 -uz ${hostPath} does)`;
    fatal(`mnemo mount: could not record the session of the mount at ${hostPath}: ${describeError(err)}; ${left}`);
    return 1;
  }
  try {
    const stopped = untilSignal();
    process.stdout.write(`${hostPath}\n`);
    log(`mnemo: ${store.name} (${storeId}) mounted at ${hostPath} as ${session.id}; Ctrl-C unmounts`);
    // Without a server beside it, nothing else would index this mount's writes for search.
    const stopIndexing = indexInBackground(service, storage, besideServer(config));
    await stopped;
    stopIndexing();
    await mounter.unmountAll();
    await local.end(session);
  } finally {
    lock?.release();
  }
  return 0;
}

/**
 * Expired memories are hidden at once; this deletes them every minute without waiting for a write to
 * their store, and prunes what the stores' retention lets go.
 */
function sweepExpired(service: Service, mounter: Mounter): NodeJS.Timeout {
  const failed = (err: unknown) => warn(`mnemo: expiry sweep failed: ${err instanceof Error ? err.message : String(err)}`);
  const timer = setInterval(() => {
    service
      .purgeExpiredMemories()
      .then((n) => {
        if (n > 0) log(`mnemo: deleted ${n} expired memor${n === 1 ? 'y' : 'ies'}`);
      })
      .catch(failed);
    service
      .pruneHistory()
      .then((n) => {
        if (n > 0) log(`mnemo: retention pruned ${n} version${n === 1 ? '' : 's'}`);
      })
      .catch((err: unknown) => warn(`mnemo: retention failed: ${err instanceof Error ? err.message : String(err)}`));
    service.localSessions.endStaleMounts(mounter, (line) => log(`mnemo: ${line}`)).catch(failed);
    // A session ended by another server whose notice this one missed.
    service.sessions.reconcile().catch(failed);
    service
      .purgeAbandonedForks()
      .then((n) => {
        if (n > 0) log(`mnemo: deleted ${n} fork${n === 1 ? '' : 's'} a crash cut short`);
      })
      .catch((err: unknown) => warn(`mnemo: abandoned-fork sweep failed: ${err instanceof Error ? err.message : String(err)}`));
  }, 60_000);
  timer.unref();
  return timer;
}

/** A WAL sync the disk refused: closed versions may not be durable yet (the next sync retries). */
function syncFailed(err: unknown): void {
  // PostgreSQL out of reach: the adapter logged the outage once; a line per retry (every 100 ms) says nothing more.
  if (isMnemoError(err) && err.code === 'unavailable') return;
  warn(`mnemo: WAL sync failed: ${describeError(err)}`);
}

/**
 * Resolves at the first SIGINT, SIGTERM or SIGHUP (a closed terminal: an SSH drop). A signal after
 * that is logged and ignored: Node's default would kill the process half way through its unmounts
 * (a second Ctrl-C, a supervisor that repeats SIGTERM), leaving the mounts torn and the pid file behind.
 */
function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const on = (signal: NodeJS.Signals) => {
      if (stopping) return log(`mnemo: warn: ${signal} while shutting down; ignored (the unmounts and the last sync finish first; SIGKILL stops at once)`);
      stopping = true;
      resolve();
    };
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, on);
  });
}

/** Exits once the log's buffered lines are written (a stalled stderr is not waited for long). */
function exit(code: number): never {
  processLog?.flush();
  process.exit(code);
}

main(process.argv.slice(2)).then(
  (code) => exit(code),
  (err: unknown) => {
    fatal(`mnemo: ${describeError(err)}`);
    exit(1);
  },
);
