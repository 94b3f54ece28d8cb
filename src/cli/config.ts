/** @module Configuration: the only reader of process.env. Flags override environment variables. */
import { hostname } from 'node:os';
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { whyNotWritable } from '../storage/common/file-reasons.js';
import { MOUNT_SYNC_MODES, type MountSync } from '../service/durability.js';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  dbFile: string;
  /**
   * MNEMO_DATABASE_URL / --database-url: a `postgres://` (or `postgresql://`) URL selects the
   * PostgreSQL adapter (TLS from `sslmode=…` in it); null: SQLite in `dbFile`, as without it.
   */
  databaseUrl: string | null;
  /**
   * MNEMO_NODE_ID / --node-id: this host's name among the servers sharing one database (default
   * the hostname). Sessions record it; on start a server remounts only its own node's sessions.
   */
  nodeId: string;
  mountRoot: string;
  /** MNEMO_ADMIN_KEY: seeds the default workspace's admin key when set. */
  adminKey: string | null;
  /** Largest request body accepted, in bytes (413 request_too_large above it). */
  maxBodyBytes: number;
  /** Largest checkpoint bundle accepted, in bytes (1 KiB to 1 MiB; default 1 MiB). */
  checkpointMaxBytes: number;
  /** MNEMO_API_KEY: the key `mnemo mcp` acts as (its role and store grants apply). */
  apiKey: string | null;
  /** How long Idempotency-Key receipts are replayed before they are purged, in seconds. */
  idempotencyTtlSeconds: number;
  /** MNEMO_STORE_MAX_MEMORIES, MNEMO_STORE_MAX_BYTES, MNEMO_WORKSPACE_MAX_SESSIONS, MNEMO_WORKSPACE_MAX_MOUNTS, MNEMO_WORKSPACE_MAX_FEED_STREAMS (src/service/limits.ts). */
  storeLimits: { maxMemories: number; maxBytes: number; maxSessions: number; maxMounts: number; maxFeedStreams: number };
  /** Bytes of mount-local state (fs/local-budget.ts) one mount may hold (MNEMO_MOUNT_LOCAL_MAX_BYTES) and all mounts together (MNEMO_LOCAL_MAX_BYTES). */
  localLimits: { mountMaxBytes: number; serverMaxBytes: number };
  /** --rotate-admin-key: `serve` replaces the seeded admin key with MNEMO_ADMIN_KEY (flag only). */
  rotateAdminKey: boolean;
  /** MNEMO_LOG_LEVEL / --log-level: the lowest level logged (pino's names; default info). */
  logLevel: LogLevel;
  /** MNEMO_METRICS_PUBLIC=1: GET /metrics needs no key (otherwise an operator key). */
  metricsPublic: boolean;
  /** MNEMO_MAX_INFLIGHT_BODIES: request bodies read at once; past it 503 overloaded_error (default 64). */
  maxInflightBodies: number;
  /** MNEMO_BODY_TIMEOUT_SECONDS: a request body that goes this long without a byte, or six times this in all, is answered 408 (default 10). */
  bodyTimeoutSeconds: number;
  /** MNEMO_MOUNT_SYNC / --mount-sync: `fsync` (POSIX: close() is crash-safe, fsync() durable) or `close` (every close durable). */
  mountSync: MountSync;
  /**
   * MNEMO_MOUNT_CACHE_SECONDS / --mount-cache-seconds: how long the kernel keeps a mount's names and
   * attributes (its entry and attribute timeouts; default 1). Writes elsewhere drop what they make
   * stale sooner (fs/writes-elsewhere.ts); this bounds what that misses.
   */
  mountCacheSeconds: number;
  /** MNEMO_READER_THREADS: worker threads for searches, listing pages, checks and directory moves (default 2; 0 runs them on the event loop); serve, mount and mcp. */
  readerThreads: number;
  /**
   * MNEMO_MOUNT_SPIN_US: how long, in µs, the event loop keeps turning after a burst's mount request instead
   * of sleeping (fs/binding/stay-awake.ts): lower latency for CPU (default 0: off; at most 10,000).
   */
  mountSpinUs: number;
}

/** MNEMO_ADMIN_KEY must be at least this long: it is the operator key of every workspace. */
export const MIN_ADMIN_KEY_LENGTH = 32;

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type Flags = Record<string, string | boolean | undefined>;

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/**
 * A setting with a value it cannot take. `flag`: it came from that flag (`--port`), a usage error
 * (the command exits 2 with its usage line); null: from the environment (exit 1). The message names
 * whichever was given: `invalid --port: abc (…)` or `invalid MNEMO_PORT: abc (…)`.
 */
export class ConfigError extends Error {
  constructor(message: string, readonly flag: string | null) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * `alternatives`: --data-dir and --database-url name one database or the other (every command but
 * serve), so a flag naming one wins over the environment naming the other.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, flags: Flags = {}, { alternatives = false } = {}): Readonly<Config> {
  /** Where each setting came from, so a refusal names what the user typed. */
  const given = new Map<string, string>();
  const pick = (flag: string, name: string): string | undefined => {
    const f = flags[flag];
    if (typeof f === 'string') {
      given.set(name, `--${flag}`);
      return f;
    }
    const e = env[name];
    return e === undefined || e === '' ? undefined : e;
  };
  /** The one place a bad setting becomes an error: the flag's name (a usage error) or the variable's. */
  const invalid = (name: string, value: string, hint: string): ConfigError => {
    const flag = given.get(name) ?? null;
    return new ConfigError(`invalid ${flag ?? name}: ${value} (${hint})`, flag);
  };
  const dataDir = resolve(pick('data-dir', 'MNEMO_DATA_DIR') ?? './data');
  const portRaw = pick('port', 'MNEMO_PORT') ?? '7474';
  const port = Number(portRaw);
  if (!/^\d{1,5}$/.test(portRaw) || port > 65535) throw invalid('MNEMO_PORT', portRaw, 'a port number, 0 to 65535');
  const maxBodyRaw = pick('max-body-bytes', 'MNEMO_MAX_BODY_BYTES') ?? String(1024 * 1024);
  const maxBodyBytes = Number(maxBodyRaw);
  if (!/^\d+$/.test(maxBodyRaw) || !Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 1024) throw invalid('MNEMO_MAX_BODY_BYTES', maxBodyRaw, 'whole bytes, at least 1024');
  const ttlRaw = pick('idempotency-ttl-seconds', 'MNEMO_IDEMPOTENCY_TTL_SECONDS') ?? String(24 * 60 * 60);
  const idempotencyTtlSeconds = Number(ttlRaw);
  if (!/^\d+$/.test(ttlRaw) || idempotencyTtlSeconds < 1 || !Number.isSafeInteger(idempotencyTtlSeconds)) {
    throw invalid('MNEMO_IDEMPOTENCY_TTL_SECONDS', ttlRaw, 'whole seconds, at least 1');
  }
  const ckptRaw = pick('checkpoint-max-bytes', 'MNEMO_CHECKPOINT_MAX_BYTES') ?? String(1024 * 1024);
  const checkpointMaxBytes = Number(ckptRaw);
  if (!/^\d+$/.test(ckptRaw) || checkpointMaxBytes < 1024 || checkpointMaxBytes > 1024 * 1024) {
    throw invalid('MNEMO_CHECKPOINT_MAX_BYTES', ckptRaw, '1024 to 1048576');
  }
  /** A limit from the environment: a whole number of at least 1, or the default. */
  const limit = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < 1) throw new Error(`invalid ${name}: ${raw} (a whole number, at least 1)`);
    return n;
  };
  const MiB = 1024 * 1024;
  const storeLimits = Object.freeze({
    maxMemories: limit('MNEMO_STORE_MAX_MEMORIES', 1_000_000),
    maxBytes: limit('MNEMO_STORE_MAX_BYTES', 1024 * MiB),
    maxSessions: limit('MNEMO_WORKSPACE_MAX_SESSIONS', 256),
    maxMounts: limit('MNEMO_WORKSPACE_MAX_MOUNTS', 256),
    maxFeedStreams: limit('MNEMO_WORKSPACE_MAX_FEED_STREAMS', 256),
  });
  const localLimits = Object.freeze({
    mountMaxBytes: limit('MNEMO_MOUNT_LOCAL_MAX_BYTES', 64 * MiB),
    serverMaxBytes: limit('MNEMO_LOCAL_MAX_BYTES', 512 * MiB),
  });
  const adminKey = env['MNEMO_ADMIN_KEY'] ? env['MNEMO_ADMIN_KEY'] : null;
  if (adminKey !== null && adminKey.length < MIN_ADMIN_KEY_LENGTH) {
    throw new Error(`MNEMO_ADMIN_KEY is ${adminKey.length} characters long; it must have at least ${MIN_ADMIN_KEY_LENGTH} (e.g. openssl rand -hex 24)`);
  }
  // A header value loses its outer blanks on the way (and cannot carry control characters): a key
  // holding any could be seeded and then never sent, locking the operator out.
  if (adminKey !== null && !/^[\x21-\x7e]+$/.test(adminKey)) {
    throw new Error('MNEMO_ADMIN_KEY holds a blank, a control character or a non-ASCII one, which an x-api-key header cannot carry whole; use printable ASCII (e.g. openssl rand -hex 24)');
  }
  const logLevel = pick('log-level', 'MNEMO_LOG_LEVEL') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) throw invalid('MNEMO_LOG_LEVEL', logLevel, `one of ${LOG_LEVELS.join(', ')}`);
  const metricsRaw = env['MNEMO_METRICS_PUBLIC'] ?? '';
  if (!['', '0', '1'].includes(metricsRaw)) throw new Error(`invalid MNEMO_METRICS_PUBLIC: ${metricsRaw} (1 or 0)`);
  const maxInflightBodies = limit('MNEMO_MAX_INFLIGHT_BODIES', 64);
  const bodyTimeoutSeconds = limit('MNEMO_BODY_TIMEOUT_SECONDS', 10);
  const mountSync = pick('mount-sync', 'MNEMO_MOUNT_SYNC') ?? 'fsync';
  if (!(MOUNT_SYNC_MODES as readonly string[]).includes(mountSync)) {
    throw invalid('MNEMO_MOUNT_SYNC', mountSync, 'fsync or close');
  }
  // An explicit --data-dir names the SQLite file: it wins over MNEMO_DATABASE_URL from the environment.
  const dataDirFlag = alternatives && typeof flags['data-dir'] === 'string' && typeof flags['database-url'] !== 'string';
  const databaseUrl = dataDirFlag ? null : (pick('database-url', 'MNEMO_DATABASE_URL') ?? null);
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    // Never echo the URL: it may carry a password.
    const named = given.get('MNEMO_DATABASE_URL') ?? 'MNEMO_DATABASE_URL';
    throw new ConfigError(`invalid ${named}: only postgres:// or postgresql:// URLs are supported (leave it unset for SQLite in the data directory)`, given.get('MNEMO_DATABASE_URL') ?? null);
  }
  const nodeId = pick('node-id', 'MNEMO_NODE_ID') ?? hostname();
  if (!/^[\x21-\x7e]{1,128}$/.test(nodeId)) throw invalid('MNEMO_NODE_ID', JSON.stringify(nodeId), '1 to 128 printable ASCII characters, no spaces');
  const cacheRaw = pick('mount-cache-seconds', 'MNEMO_MOUNT_CACHE_SECONDS') ?? '1';
  const mountCacheSeconds = Number(cacheRaw);
  if (!/^\d{1,4}$/.test(cacheRaw) || mountCacheSeconds > 3600) throw invalid('MNEMO_MOUNT_CACHE_SECONDS', cacheRaw, 'whole seconds, 0 to 3600');
  const spinRaw = env['MNEMO_MOUNT_SPIN_US'] ?? '';
  if (spinRaw !== '' && (!/^\d{1,5}$/.test(spinRaw) || Number(spinRaw) > 10_000)) throw new Error(`invalid MNEMO_MOUNT_SPIN_US: ${spinRaw} (whole microseconds, 0 to 10000)`);
  // Read by the FUSE binding itself (fs/binding/trace.ts); checked here so a file it cannot write stops the start, not a later SIGUSR2.
  const trace = env['MNEMO_FUSE_TRACE'] ?? '';
  const traceRefusal = trace === '' ? null : whyNoTraceFile(trace);
  if (traceRefusal !== null) throw invalid('MNEMO_FUSE_TRACE', trace, `${traceRefusal}; a file this process can write, or unset`);
  const readersRaw = env['MNEMO_READER_THREADS'] ?? '';
  if (readersRaw !== '' && !/^\d{1,2}$/.test(readersRaw)) throw new Error(`invalid MNEMO_READER_THREADS: ${readersRaw} (a whole number from 0 to 99, 0 for none)`);
  return Object.freeze({
    host: pick('host', 'MNEMO_HOST') ?? '127.0.0.1',
    port,
    dataDir,
    dbFile: join(dataDir, 'mnemo.db'),
    databaseUrl,
    nodeId,
    mountRoot: resolve(pick('mount-root', 'MNEMO_MOUNT_ROOT') ?? (isRoot() ? '/mnt/memory' : join(dataDir, 'mnt'))),
    adminKey,
    maxBodyBytes,
    checkpointMaxBytes,
    apiKey: env['MNEMO_API_KEY'] ? env['MNEMO_API_KEY'] : null,
    idempotencyTtlSeconds,
    storeLimits,
    localLimits,
    rotateAdminKey: flags['rotate-admin-key'] === true,
    logLevel: logLevel as LogLevel,
    metricsPublic: metricsRaw === '1',
    maxInflightBodies,
    bodyTimeoutSeconds,
    mountSync: mountSync as MountSync,
    mountCacheSeconds,
    readerThreads: readersRaw === '' ? 2 : Number(readersRaw),
    mountSpinUs: spinRaw === '' ? 0 : Number(spinRaw),
  });
}

/** Why the FUSE trace summary could not be written to `file` (its directory is not made), or null. */
function whyNoTraceFile(file: string): string | null {
  const path = resolve(file);
  if (existsSync(path)) return statSync(path).isDirectory() ? 'it is a directory' : whyNotWritable(path);
  const dir = dirname(path);
  if (!existsSync(dir)) return `the directory ${dir} does not exist`;
  if (!statSync(dir).isDirectory()) return `${dir} is not a directory`;
  return whyNotWritable(path);
}
