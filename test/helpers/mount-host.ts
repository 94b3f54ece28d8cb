/**
 * @module A test-only mount host, run as a child process (`node dist/test/helpers/mount-host.js`):
 * a real SQLite file, the service and the mount manager serving one store at a directory. It prints
 * one JSON ready line, answers JSON-line commands on stdin with API-side service calls, and
 * unmounts and exits on SIGTERM. Tests never touch a mount from the process that serves it.
 */
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createMountManager } from '../../fs/index.js';
import { createService } from '../../src/service/service.js';
import { dirname } from 'node:path';
import { openSqliteStorage } from '../../src/storage/sqlite/open.js';
import { serverLockFile, tryLock } from '../../src/storage/sqlite/lock.js';
import type { Caller } from '../../src/index.js';

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    mount: { type: 'string' },
    store: { type: 'string' },
    seed: { type: 'string' },
    'read-only': { type: 'boolean', default: false },
    session: { type: 'string', default: 'sesn_fstest' },
    /** MNEMO_MOUNT_SYNC's value: fsync (the default) or close. */
    'mount-sync': { type: 'string', default: 'fsync' },
    /** More mounts of the same store in this process, as "<dir>=<session id>" (sessions share one server). */
    also: { type: 'string', multiple: true, default: [] },
    /** Serve on a clock that stands still until the `advanceClock` command moves it (for expiry). */
    'movable-clock': { type: 'boolean', default: false },
    /** How long a batch of mount writes stays open before its commit (sqlite/write-behind.ts); 0: no write-behind. */
    'hold-ms': { type: 'string' },
    /** The kernel's entry and attribute timeout for the mounts (MNEMO_MOUNT_CACHE_SECONDS). */
    'cache-seconds': { type: 'string' },
    /** After how many ms a request the handlers have not answered is logged (fs/binding/unanswered.ts). */
    'unanswered-ms': { type: 'string' },
  },
});

// The storage takes the clock too: its readers hide expired memories by it (sqlite/expiry.ts).
let clockOffsetMs = 0;
const clockStartMs = Date.now();
const clock = values['movable-clock'] ? () => new Date(clockStartMs + clockOffsetMs).toISOString() : undefined;
// Write-behind as `mnemo serve` runs it, when this host owns the data dir as the server would (its
// lock, held for the process's life): a second host on the same file must not replay a live journal.
const holdMs = values['hold-ms'] === undefined ? undefined : Number(values['hold-ms']);
const owner = holdMs === 0 ? null : tryLock(serverLockFile(dirname(values.db!)), 'exclusive');
const writeBehind = owner === null ? {} : { writeBehind: { log: (line: string) => process.stderr.write(`${line}\n`), ...(holdMs === undefined ? {} : { holdMs }) } };
const storage = openSqliteStorage(values.db!, { ...(clock ? { clock } : {}), ...writeBehind });
const mountSync = values['mount-sync'] === 'close' ? 'close' : 'fsync';
const cache = values['cache-seconds'] === undefined ? {} : { cacheSeconds: Number(values['cache-seconds']) };
const unanswered = values['unanswered-ms'] === undefined ? {} : { unansweredMs: Number(values['unanswered-ms']) };
const mounter = createMountManager({ log: (line) => process.stderr.write(`${line}\n`), ...cache, ...unanswered });
// A hold given here holds the background WAL sync back as long, so that nothing but what a test
// does commits a held batch (the sync commits it first).
const syncSchedule = holdMs === undefined || holdMs === 0 ? {} : {
  syncSchedule: (fn: () => void, ms: number) => {
    const t = setTimeout(fn, Math.max(ms, holdMs));
    t.unref();
    return () => clearTimeout(t);
  },
};
const service = createService({ storage, mountSync, mounter, ...(clock ? { clock } : {}), ...syncSchedule });

const ws = await service.keys.defaultWorkspace();
const { key } = await service.keys.createKey('mount-host', 'admin', ws.id);
const api: Caller = { workspaceId: ws.id, actor: { type: 'api_actor', apiKeyId: key.id } };

const storeId = values.store ?? (await service.createStore(api, { name: 'fs test', description: '', metadata: {} })).id;
for (const [path, content] of Object.entries(JSON.parse(values.seed ?? '{}') as Record<string, string>)) {
  await service.createMemory(api, storeId, { path, content });
}

const sessionId = values.session!;
await mounter.mount({
  storeId,
  hostPath: values.mount!,
  readOnly: values['read-only']!,
  actor: { type: 'session_actor', sessionId },
  service: service,
});
for (const spec of values.also!) {
  const [hostPath, session] = spec.split('=') as [string, string];
  await mounter.mount({ storeId, hostPath, readOnly: values['read-only']!, actor: { type: 'session_actor', sessionId: session }, service: service });
}
// Before the ready line: a test may send SIGTERM the moment it reads it, and a loaded host can run
// the test before this process gets past the write (the signal's default action then killed it
// without its stop: seen in fs/freshness, where a host is stopped as soon as it is ready).
let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await mounter!.unmountAll();
  await service.durability.stop();
  await storage.close();
  process.exit(0);
}
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
process.stdout.write(JSON.stringify({ ready: true, storeId, sessionId, apiKeyId: key.id, writeBehind: owner !== null }) + '\n');

type Command = { id: number; op: string; path?: string; content?: string; to?: string; ttlSeconds?: number; ms?: number; versionId?: string; asOf?: string; count?: number };

async function byPath(path: string) {
  const m = await storage.getMemoryByPath(storeId, path);
  if (!m) throw new Error(`no memory at ${path}`);
  return m;
}

async function perform(c: Command): Promise<unknown> {
  switch (c.op) {
    case 'create':
      return service.createMemory(api, storeId, {
        path: c.path!,
        content: c.content!,
        ...(c.ttlSeconds === undefined ? {} : { expiry: { ttlSeconds: c.ttlSeconds } }),
      });
    case 'update':
      return service.updateMemory(api, storeId, (await byPath(c.path!)).id, { content: c.content! });
    case 'rename':
      return service.updateMemory(api, storeId, (await byPath(c.path!)).id, { path: c.to! });
    case 'delete':
      return service.deleteMemory(api, storeId, (await byPath(c.path!)).id);
    case 'archive':
      return service.archiveStore(api, storeId);
    case 'redact':
      return service.redactVersion(api, storeId, c.versionId!);
    case 'keepLast':
      // The store's retention: keep the newest `count` versions of each memory.
      return service.updateStore(api, storeId, { retention: { maxAgeDays: null, keepLast: c.count! } });
    case 'prune':
      // The minute sweep's retention step, now (main.ts runs it every minute); how many it pruned.
      return service.pruneHistory();
    case 'mountAsOf':
      // A point-in-time mount of the store at another directory, served by this process (unmounted at SIGTERM).
      return mounter.mount({ storeId, hostPath: c.path!, readOnly: true, actor: { type: 'session_actor', sessionId: 'sesn_asof' }, service, asOf: c.asOf! });
    case 'unmount':
      return mounter.unmount(c.path!);
    case 'advanceClock':
      if (!clock) throw new Error('advanceClock needs --movable-clock');
      clockOffsetMs += c.ms!;
      return clock();
    case 'deleteStore':
      return service.deleteStore(api, storeId);
    case 'memory':
      return storage.getMemoryByPath(storeId, c.path!);
    case 'keptStats':
      // The binding's own answers to stats (fs/kernel-stats.ts), for the mount at `path` (the first by default).
      return mounter.keptStats(c.path ?? values.mount!);
    case 'versions': {
      // Oldest first, every page: the history a test asserts on.
      const all = [];
      let page: string | null = null;
      do {
        const p = await storage.listVersions(storeId, {
          memoryId: null, operation: null, sessionId: null, apiKeyId: null, serviceAccountId: null,
          createdGte: null, createdLte: null, limit: 100, page, view: 'full',
        });
        all.push(...p.data);
        page = p.nextPage;
      } while (page);
      return all.reverse();
    }
    case 'tree': {
      const tree: Record<string, string> = {};
      const p = await storage.listMemories(storeId, { pathPrefix: '/', depth: 0, limit: 10_000, page: null, view: 'full' });
      for (const item of p.data) if (item.type === 'memory') tree[item.memory.path] = item.memory.content ?? '';
      return tree;
    }
    default:
      throw new Error(`unknown op ${c.op}`);
  }
}

createInterface({ input: process.stdin }).on('line', async (line) => {
  let c: Command = { id: -1, op: '' };
  try {
    c = JSON.parse(line) as Command;
    const result = (await perform(c)) ?? null;
    process.stdout.write(JSON.stringify({ id: c.id, ok: true, result }) + '\n');
  } catch (err) {
    const code = (err as { code?: string }).code ?? null;
    process.stdout.write(JSON.stringify({ id: c.id, ok: false, error: String(err), code }) + '\n');
  }
});
