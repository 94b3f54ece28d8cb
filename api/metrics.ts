/**
 * @module Prometheus metrics (prom-client) and GET /metrics. Request series are labelled by the
 * route template, never the raw URL, so their number is bounded by the routes. The core knows no
 * metrics library: it reports writes, searches and commits through callbacks this module supplies.
 */
import type { MiddlewareHandler } from 'hono';
import { Hono } from 'hono';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { MnemoError, type Face, type Keys, type ServiceObserver } from '../src/index.js';
import { auth } from './auth.js';
import type { AppEnv } from './env.js';
import { routeTemplate } from './log.js';
import { registerLoopDelay } from './loop-delay.js';

/** What the live gauges read at scrape time. */
export interface GaugeSource {
  activeSessions(): number | Promise<number>;
  mounts(): number | Promise<number>;
  /** Mount commits not on disk yet (MNEMO_MOUNT_SYNC=fsync); absent: 0. */
  unsyncedCommits?(): number;
  /** Change feed event streams open now; absent: 0. */
  feedStreams?(): number;
  /** Log lines dropped so far because stderr's reader fell behind (src/cli/log.ts); absent: 0. */
  droppedLogLines?(): number;
  /** Memories (and PostgreSQL's new texts) waiting for the search upkeep; absent: 0. */
  searchBacklog?(): Promise<number>;
  /** Stats of mounted files the FUSE binding answered itself, so far (fs/kernel-stats.ts); absent: 0. */
  statsAnsweredByBinding?(): number;
}

export interface Metrics {
  registry: Registry;
  /** For createService: saves, versions and search latency. */
  observer: ServiceObserver;
  /** For openSqliteStorage: write transaction (commit) latency. */
  commit(seconds: number): void;
  /** For openSqliteStorage: a write starts (+1) or stops (-1) waiting for another process's write lock. */
  lockWait(delta: 1 | -1): void;
  /** For openSqliteStorage: how long each WAL sync (fdatasync) took. */
  walSync(seconds: number): void;
  /** Counts and times every request (the app's first middleware after the request id). */
  requests(): MiddlewareHandler<AppEnv>;
  /** Sets where the session and mount gauges read from (the sessions exist after the storage). */
  watch(source: GaugeSource): void;
}

/** Latency buckets in seconds: sub-millisecond reads up to multi-second uploads. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  registerLoopDelay(registry);
  let source: GaugeSource = { activeSessions: () => 0, mounts: () => 0 };

  const requests = new Counter({
    name: 'mnemo_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const requestSeconds = new Histogram({
    name: 'mnemo_http_request_duration_seconds',
    help: 'HTTP request latency in seconds, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const saves = new Counter({
    name: 'mnemo_saves_total',
    help: 'Memory writes (create, update, save, move, delete), by face: api, mount, mcp',
    labelNames: ['face'] as const,
    registers: [registry],
  });
  const versions = new Counter({
    name: 'mnemo_versions_total',
    help: 'Memory versions created, by face: api, mount, mcp',
    labelNames: ['face'] as const,
    registers: [registry],
  });
  const commitSeconds = new Histogram({
    name: 'mnemo_commit_duration_seconds',
    help: 'Write transactions from BEGIN to COMMIT (the fsync included where the commit is durable), in seconds',
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const walSyncSeconds = new Histogram({
    name: 'mnemo_wal_sync_duration_seconds',
    help: "WAL syncs (fdatasync of the -wal file) that made mount commits durable: fsync() on a mount and the background sync, in seconds",
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  new Gauge({
    name: 'mnemo_unsynced_commits',
    help: 'Mount commits that may not be on disk yet (safe from a crash of mnemo, not from a power loss)',
    registers: [registry],
    collect() {
      this.set(source.unsyncedCommits?.() ?? 0);
    },
  });
  const lockWaits = new Gauge({
    name: 'mnemo_sqlite_lock_waits',
    help: "Writes waiting for another process's write lock on mnemo.db (a sqlite3 shell's open transaction), off the serving thread; past 5 s each fails 503",
    registers: [registry],
  });
  const searchSeconds = new Histogram({
    name: 'mnemo_search_duration_seconds',
    help: 'Memory searches, in seconds',
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  new Gauge({
    name: 'mnemo_feed_streams',
    help: 'Change feed event streams (server-sent events) open now',
    registers: [registry],
    collect() {
      this.set(source.feedStreams?.() ?? 0);
    },
  });
  new Gauge({
    name: 'mnemo_search_backlog',
    help: 'Memory writes (and, on PostgreSQL, new texts) the search upkeep has not indexed yet',
    registers: [registry],
    async collect() {
      try {
        this.set((await source.searchBacklog?.()) ?? 0);
      } catch {
        // Storage unreachable (PostgreSQL down): the scrape still answers, with the last count.
      }
    },
  });
  countedFrom(registry, 'mnemo_log_lines_dropped_total', "Log lines dropped rather than waited for, because stderr's reader fell 8 MiB behind", () => source.droppedLogLines?.() ?? 0);
  countedFrom(
    registry, 'mnemo_mount_stats_answered_by_binding_total',
    "Stats of mounted files answered by the FUSE binding on libfuse's threads, without the serving thread (kept stats)",
    () => source.statsAnsweredByBinding?.() ?? 0,
  );
  new Gauge({
    name: 'mnemo_active_sessions',
    help: 'Sessions that are active (not ended)',
    registers: [registry],
    async collect() {
      this.set(await source.activeSessions());
    },
  });
  new Gauge({
    name: 'mnemo_mounts',
    help: 'FUSE mounts this server holds',
    registers: [registry],
    async collect() {
      this.set(await source.mounts());
    },
  });
  // Every face appears from the start, so a rate over "mcp" reads 0 rather than no data.
  for (const face of ['api', 'mount', 'mcp'] satisfies Face[]) {
    saves.inc({ face }, 0);
    versions.inc({ face }, 0);
  }

  return {
    registry,
    observer: {
      wrote(face, n) {
        saves.inc({ face });
        if (n > 0) versions.inc({ face }, n);
      },
      searched: (seconds) => searchSeconds.observe(seconds),
    },
    commit: (seconds) => commitSeconds.observe(seconds),
    walSync: (seconds) => walSyncSeconds.observe(seconds),
    lockWait: (delta) => lockWaits.inc(delta),
    requests() {
      return async function metricsMiddleware(c, next) {
        const started = performance.now();
        await next();
        const labels = { method: c.req.method, route: routeTemplate(c), status: String(c.res.status) };
        requests.inc(labels);
        requestSeconds.observe(labels, (performance.now() - started) / 1000);
      };
    },
    watch(s) {
      source = s;
    },
  };
}

/** A counter that follows a running total kept elsewhere (`read`), moved by what it gained since the last scrape. */
function countedFrom(registry: Registry, name: string, help: string, read: () => number): void {
  let seen = 0;
  new Counter({
    name, help, registers: [registry],
    collect() {
      const now = read();
      if (now > seen) this.inc(now - seen);
      seen = now;
    },
  });
}

/**
 * GET /metrics. Metrics span every workspace, so without MNEMO_METRICS_PUBLIC=1 they need an
 * operator key (all workspaces): 401 without a valid key, 403 for any other key.
 */
export function metricsRoutes(metrics: Metrics, keys: Keys, { open }: { open: boolean }) {
  const app = new Hono<AppEnv>();
  if (!open) {
    app.use('/', auth(keys));
    app.use('/', async function operatorOnly(c, next) {
      if (!c.var.apiKey.allWorkspaces) throw new MnemoError('forbidden', 'metrics span every workspace: they need an operator key (all workspaces)');
      await next();
    });
  }
  app.get('/', async (c) => {
    const body = await metrics.registry.metrics();
    return c.body(body, 200, { 'content-type': metrics.registry.contentType });
  });
  return app;
}
