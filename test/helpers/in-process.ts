/**
 * @module The whole HTTP app in the test's own process, over a real SQLite file in a temp dir, with
 * a clock the test moves: the official SDK's `fetch` is pointed at `app.fetch`, so requests take
 * the app's full path (auth, body limits, routes, error envelope) without a socket. For tests that
 * need time to pass (TTL, expiry, receipt retention) and would otherwise sleep; tests where the
 * process itself matters (restarts, signals, mounts) keep the real server (server.ts).
 */
import Anthropic from '@anthropic-ai/sdk';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { createApp } from '../../api/app.js';
import type { Idempotency } from '../../src/service/idempotency.js';
import type { Every } from '../../src/service/feed.js';
import { createService, type Service, type ServiceOptions } from '../../src/service/service.js';
import { openSqliteStorage } from '../../src/storage/sqlite/open.js';
import type { Storage } from '../../src/storage/port.js';
import { rawRequest, type RawOptions, type RawResponse } from './sdk.js';
import { tmpDir } from './tmp.js';

/** A clock that stands still until the test moves it; it reads as RFC 3339 UTC, like the service's. */
export interface MovableClock {
  (): string;
  /** Moves the clock `ms` forward. */
  advance(ms: number): void;
}

export function movableClock(startMs = Date.now()): MovableClock {
  let now = startMs;
  const clock = () => new Date(now).toISOString();
  clock.advance = (ms: number) => {
    now += ms;
  };
  return clock;
}

export interface InProcessOptions {
  clock?: MovableClock;
  /** How long Idempotency-Key receipts are replayed (MNEMO_IDEMPOTENCY_TTL_SECONDS); default 24 h. */
  idempotencyTtlSeconds?: number;
  /** The change feed's timers (its followers' polls, its streams' heartbeats): a test fires them itself. */
  feedEvery?: Every;
  /** Another storage than a SQLite file in a temp dir (a PostgreSQL database): the test owns its data, the app closes it. */
  storage?: Storage;
  /** Another storage than a fresh SQLite file (a PostgreSQL database), opened with the app's clock. */
  openStorage?: (clock: MovableClock) => Promise<Storage>;
  /** The service's fork builds' turn between batches (ServiceOptions.forks): a test holds a build there. */
  forks?: ServiceOptions['forks'];
}

export interface InProcessApp {
  /** The official SDK as an admin, its requests answered by `app.fetch`. */
  client: Anthropic;
  clock: MovableClock;
  adminKey: string;
  /** The service behind the app, for the work the server runs on timers (`purgeExpiredMemories`). */
  service: Service;
  /** The app's receipts, for the purge the server runs on a timer (`purge`). */
  idempotency: Idempotency;
  /** One request without the SDK (raw bodies, headers), like sdk.ts's rawRequest. */
  raw(method: string, path: string, options?: RawOptions): Promise<RawResponse>;
  /** The app's own fetch (a request through the whole app, no socket). */
  fetch(input: string, init?: RequestInit): Promise<Response>;
  /** The storage behind the service (counts the tests check that no face shows). */
  storage: Storage;
  /** The database file, for a second connection (another process's writes, as far as the app can tell). */
  file: string;
  /** Closes the database (also done when the test finishes). */
  close(): void;
}

const BASE_URL = 'http://mnemo.in-process';

/** Call inside a test: the app, its database and its temp dir go when the test finishes. */
export async function inProcessApp({ clock = movableClock(), idempotencyTtlSeconds, feedEvery, storage: given, openStorage, forks }: InProcessOptions = {}): Promise<InProcessApp> {
  const dir = tmpDir('mnemo-inproc-');
  // The storage takes the clock too: its readers hide expired memories by it (sqlite/expiry.ts).
  const storage = given ?? (openStorage ? await openStorage(clock) : openSqliteStorage(join(dir, 'mnemo.db'), { clock }));
  const service = createService({
    storage, clock, mountRoot: join(dir, 'mnt'),
    ...(idempotencyTtlSeconds === undefined ? {} : { idempotencyTtlSeconds }),
    ...(feedEvery ? { feed: { every: feedEvery } } : {}),
    ...(forks ? { forks } : {}),
  });
  const { idempotency } = service;
  const app = createApp({ service, log: () => {}, ...(feedEvery ? { feed: { every: feedEvery } } : {}) });
  const { secret } = await service.keys.createKey('in-process-admin', 'admin', (await service.keys.defaultWorkspace()).id);
  const fetch = (input: string | URL | Request, init?: RequestInit) => Promise.resolve(app.fetch(new Request(input, init)));
  let open = true;
  const close = async () => {
    if (!open) return;
    open = false;
    await storage.close();
  };
  onTestFinished(close);
  return {
    client: new Anthropic({ baseURL: BASE_URL, apiKey: secret, maxRetries: 0, fetch }),
    clock,
    adminKey: secret,
    service,
    storage,
    idempotency,
    fetch,
    file: join(dir, 'mnemo.db'),
    raw: (method, path, options = {}) => rawRequest(BASE_URL, method, path, { apiKey: secret, ...options, fetch }),
    close,
  };
}
