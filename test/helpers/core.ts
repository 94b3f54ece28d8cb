/**
 * @module The real core over a real SQLite file in a temp dir: openCore() wires openSqliteStorage and
 * createService; seedStore() builds a store from a path → content map and readTree() reads one back.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { MnemoError, type ErrorCode } from '../../src/domain/errors.js';
import type { Mounter } from '../../src/service/mounts.js';
import { createService, type Service } from '../../src/service/service.js';
import { openSqliteStorage, type SqliteStorage } from '../../src/storage/sqlite/open.js';
import type {
  Caller,
  MemoryListQuery,
  Page,
  Store,
  StoreListQuery,
  VersionListQuery,
} from '../../src/domain/types.js';
import { tmpDir } from './tmp.js';

export type Tree = Record<string, string>;

export interface Core {
  service: Service;
  storage: SqliteStorage;
  /** An admin api_actor in the default workspace. */
  caller: Caller;
  dir: string;
  file: string;
  close(): Promise<void>;
}

export interface CoreOptions {
  dir?: string;
  clock?: () => string;
  /** Reader threads for searches and listings (SqliteOptions.readers); 0 reads inline, in the caller's turn. */
  readers?: number;
  /** What the service tells about mounts (a recorder, say); it mounts nothing by default. */
  mounter?: Mounter;
  /** WAL checkpoints on a worker thread, as a server's (SqliteOptions.backgroundCheckpoints). */
  backgroundCheckpoints?: boolean;
}

export async function openCore({ dir = tmpDir(), clock, readers, mounter, backgroundCheckpoints }: CoreOptions = {}): Promise<Core> {
  const file = join(dir, 'mnemo.db');
  const storage = openSqliteStorage(file, {
    ...(readers === undefined ? {} : { readers }),
    ...(backgroundCheckpoints ? { backgroundCheckpoints: { log: () => {} } } : {}),
  });
  const service = createService({ storage, ...(clock ? { clock } : {}), ...(mounter ? { mounter } : {}) });
  const ws = await service.keys.defaultWorkspace();
  const { key } = await service.keys.createKey('test', 'admin', ws.id);
  const caller: Caller = { workspaceId: ws.id, actor: { type: 'api_actor', apiKeyId: key.id } };
  onTestFinished(() => storage.close());
  return { service, storage, caller, dir, file, close: () => storage.close() };
}

/** The same workspace, acting as another API key. */
export async function otherKey(core: Core, name = 'other'): Promise<Caller> {
  const { key } = await core.service.keys.createKey(name, 'read_write', core.caller.workspaceId);
  return { workspaceId: core.caller.workspaceId, actor: { type: 'api_actor', apiKeyId: key.id } };
}

export function sessionCaller(core: Core, sessionId: string): Caller {
  return { workspaceId: core.caller.workspaceId, actor: { type: 'session_actor', sessionId } };
}

/** A clock that starts at `start` and moves `stepMs` forward on every reading; `set` jumps it. */
export function fakeClock(start = '2026-01-01T00:00:00.000Z', stepMs = 1000) {
  let now = Date.parse(start);
  const clock = () => {
    const t = new Date(now).toISOString();
    now += stepMs;
    return t;
  };
  clock.set = (iso: string) => {
    now = Date.parse(iso);
  };
  return clock;
}

/** Creates a store named `name` holding exactly `tree`, in key order. */
export async function seedStore(service: Service, caller: Caller, tree: Tree, name = 'seeded'): Promise<Store> {
  const store = await service.createStore(caller, { name, description: '', metadata: {} });
  for (const [path, content] of Object.entries(tree)) await service.createMemory(caller, store.id, { path, content });
  return store;
}

/** Every live memory of a store as path → content, read through the paginated full view. */
export async function readTree(service: Service, caller: Caller, storeId: string): Promise<Tree> {
  const tree: Tree = {};
  for (const item of await allPages((page) => service.listMemories(caller, storeId, memoryQuery({ view: 'full', limit: 20, page })))) {
    if (item.type === 'memory') tree[item.memory.path] = item.memory.content ?? '';
  }
  return tree;
}

/** Follows `nextPage` until the end and returns every item in order. */
export async function allPages<T>(fetch: (page: string | null) => Page<T> | Promise<Page<T>>, maxPages = 1000): Promise<T[]> {
  const out: T[] = [];
  let page: string | null = null;
  for (let i = 0; i < maxPages; i++) {
    const p = await fetch(page);
    out.push(...p.data);
    if (p.nextPage === null) return out;
    page = p.nextPage;
  }
  throw new Error(`more than ${maxPages} pages`);
}

export function memoryQuery(q: Partial<MemoryListQuery> = {}): MemoryListQuery {
  return { pathPrefix: '/', depth: 0, limit: 100, page: null, view: 'basic', ...q };
}

export function versionQuery(q: Partial<VersionListQuery> = {}): VersionListQuery {
  return {
    memoryId: null,
    operation: null,
    sessionId: null,
    apiKeyId: null,
    serviceAccountId: null,
    createdGte: null,
    createdLte: null,
    limit: 100,
    page: null,
    view: 'full',
    ...q,
  };
}

export function storeQuery(q: Partial<StoreListQuery> = {}): StoreListQuery {
  return { includeArchived: false, createdGte: null, createdLte: null, limit: 100, page: null, ...q };
}

/**
 * Runs `fn` and returns the MnemoError code it throws (failing the test if it returns or throws
 * anything else); for a `fn` that returns a promise, the code it rejects with.
 */
export function codeOf(fn: () => Promise<unknown>): Promise<ErrorCode>;
export function codeOf(fn: () => unknown): ErrorCode;
export function codeOf(fn: () => unknown): ErrorCode | Promise<ErrorCode> {
  const code = (err: unknown): ErrorCode => {
    if (err instanceof MnemoError) return err.code;
    throw err;
  };
  const succeeded = (): never => {
    throw new Error('expected a MnemoError, but the call succeeded');
  };
  let value: unknown;
  try {
    value = fn();
  } catch (err) {
    return code(err);
  }
  if (value instanceof Promise) return value.then(succeeded, code);
  return succeeded();
}

/** Runs `fn` and returns the MnemoError it throws, for its message and details (failing the test otherwise). */
export async function errorOf(fn: () => unknown): Promise<MnemoError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof MnemoError) return err;
    throw err;
  }
  throw new Error('expected a MnemoError, but the call succeeded');
}

/** Memories written but not yet in the full-text index, read through a connection of its own. */
export function queuedForSearch(dbFile: string): number {
  const db = new Database(dbFile, { readonly: true });
  try {
    return db.prepare('SELECT count(*) FROM search_backlog').pluck().get() as number;
  } finally {
    db.close();
  }
}

/** A second, plain connection to the same file: what an operator with the sqlite3 shell could do. */
export function rawConnection(file: string): Database.Database {
  const raw = new Database(file);
  raw.pragma('busy_timeout = 5000');
  return raw;
}

/** Runs `fn` on such a connection, closed after it. */
export function withRaw<T>(file: string, fn: (raw: Database.Database) => T): T {
  const raw = rawConnection(file);
  try {
    return fn(raw);
  } finally {
    raw.close();
  }
}
