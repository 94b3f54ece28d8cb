/**
 * Durability as POSIX defines it (issue 12, DESIGN §5), below the mount: a mount's save commits at
 * synchronous=NORMAL and leaves the connection at FULL for the API; `syncCommits` fdatasyncs the WAL
 * and accounts for every commit before it; the background sync runs one interval after a mount
 * commit and never when idle (an injected clock, no timing); MNEMO_MOUNT_SYNC=close makes every
 * mount save durable at commit. A power loss cannot be simulated: the unsynced-commit counter is
 * what these tests observe.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDurability, SYNC_INTERVAL_MS } from '../../src/service/durability.js';
import { createService } from '../../src/service/service.js';
import type { Storage } from '../../src/storage/port.js';
import { openSqliteStorage, type SqliteStorage } from '../../src/storage/sqlite/open.js';
import { openCore, seedStore, sessionCaller } from '../helpers/core.js';
import { tmpDir } from '../helpers/tmp.js';

const NORMAL = 1;
const FULL = 2;

/** A store to write in, straight through the port, and a counter of the WAL syncs it makes. */
async function openStorage(): Promise<{ storage: SqliteStorage; syncs: () => number; storeId: string; file: string }> {
  let syncs = 0;
  const file = join(tmpDir(), 'mnemo.db');
  const storage = openSqliteStorage(file, { onSync: () => syncs++ });
  const service = createService({ storage });
  const ws = await service.keys.defaultWorkspace();
  const { key } = await service.keys.createKey('t', 'admin', ws.id);
  const store = await service.createStore({ workspaceId: ws.id, actor: { type: 'api_actor', apiKeyId: key.id } }, { name: 's', description: '', metadata: {} });
  return { storage, syncs: () => syncs, storeId: store.id, file };
}

let n = 0;
function save(storage: Storage, storeId: string, path: string, content: string) {
  return storage.saveMemoryAt({
    storeId, path, content, memoryId: `mem_t${++n}`, versionId: `memver_t${n}`,
    actor: { type: 'session_actor', sessionId: 'sesn_t' }, now: new Date().toISOString(),
  });
}

describe('relaxed commits in the SQLite adapter', () => {
  it('a mount-style save commits at synchronous=NORMAL and leaves the connection back at FULL', async () => {
    const { storage, storeId } = await openStorage();
    let during: unknown;
    await storage.atomic(async (tx) => {
      during = storage.readPragma('synchronous');
      await save(tx, storeId, '/a.md', 'a');
    }, { durable: false });
    expect(during).toBe(NORMAL);
    expect(storage.readPragma('synchronous')).toBe(FULL);
    expect(storage.unsyncedCommits()).toBe(1);
    expect((await storage.getMemoryByPath(storeId, '/a.md'))?.content).toBe('a');
  });

  it('a durable transaction runs at FULL and leaves nothing to sync', async () => {
    const { storage, storeId } = await openStorage();
    let during: unknown;
    await storage.atomic(async (tx) => {
      during = storage.readPragma('synchronous');
      await save(tx, storeId, '/a.md', 'a');
    });
    await save(storage, storeId, '/b.md', 'b');
    expect(during).toBe(FULL);
    expect(storage.unsyncedCommits()).toBe(0);
  });

  it('inside another transaction the outermost one decides: a group commit stays at FULL', async () => {
    const { storage, storeId } = await openStorage();
    let during: unknown;
    await storage.atomic(async (tx) => {
      await tx.atomic(async (tx) => {
        during = storage.readPragma('synchronous');
        await save(tx, storeId, '/a.md', 'a');
      }, { durable: false });
    });
    expect(during).toBe(FULL);
    expect(storage.unsyncedCommits()).toBe(0);
  });

  it('a relaxed transaction that fails rolls back, counts nothing and leaves the connection at FULL', async () => {
    const { storage, storeId } = await openStorage();
    await expect(storage.atomic(async (tx) => {
        await save(tx, storeId, '/a.md', 'a');
        throw new Error('refused');
      }, { durable: false })).rejects.toThrow('refused');
    expect(storage.readPragma('synchronous')).toBe(FULL);
    expect(storage.unsyncedCommits()).toBe(0);
    expect(await storage.getMemoryByPath(storeId, '/a.md')).toBeNull();
  });

  it('syncCommits makes one WAL sync for every relaxed commit before it, and none when nothing waits', async () => {
    const { storage, storeId, syncs } = await openStorage();
    for (const p of ['/a.md', '/b.md', '/c.md']) await storage.atomic((tx) => save(tx, storeId, p, p), { durable: false });
    expect(storage.unsyncedCommits()).toBe(3);
    await storage.syncCommits();
    expect(syncs()).toBe(1);
    expect(storage.unsyncedCommits()).toBe(0);
    await storage.syncCommits();
    expect(syncs()).toBe(1);
  });

  it('a commit made while a sync is in flight is waited for by the next syncCommits', async () => {
    const { storage, storeId, syncs } = await openStorage();
    await storage.atomic((tx) => save(tx, storeId, '/a.md', 'a'), { durable: false });
    const first = storage.syncCommits();
    await storage.atomic((tx) => save(tx, storeId, '/b.md', 'b'), { durable: false });
    const second = storage.syncCommits();
    await Promise.all([first, second]);
    expect(storage.unsyncedCommits()).toBe(0);
    expect(syncs()).toBe(2);
  });

  it('relaxed commits are in the file: a reopen (what a restart after kill -9 does) reads them', async () => {
    const { storage, storeId, file } = await openStorage();
    await storage.atomic((tx) => save(tx, storeId, '/kept.md', 'kept'), { durable: false });
    // A second connection, as the next server process would open, while this one never closed.
    const next = openSqliteStorage(file);
    try {
      expect((await next.getMemoryByPath(storeId, '/kept.md'))?.content).toBe('kept');
    } finally {
      await next.close();
    }
  });
});

describe('the service decides which writes are durable at commit', () => {
  it('with the default (fsync), a mount save waits for a sync and an API write does not', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, {});
    await core.service.createMemory(core.caller, store.id, { path: '/api.md', content: 'api' });
    expect(core.storage.unsyncedCommits()).toBe(0);
    const mount = sessionCaller(core, 'sesn_a');
    await core.service.saveMemoryAt(mount, store.id, { path: '/m.md', content: 'm', memoryId: core.service.ids('memory') });
    expect(core.storage.unsyncedCommits()).toBe(1);
    expect(core.storage.readPragma('synchronous')).toBe(FULL);
  });

  it('with MNEMO_MOUNT_SYNC=close, every mount write is durable at commit', async () => {
    const core = await openCore();
    const service = createService({ storage: core.storage, mountSync: 'close' });
    const store = await seedStore(service, core.caller, {});
    const mount = sessionCaller(core, 'sesn_a');
    const saved = await service.saveMemoryAt(mount, store.id, { path: '/m.md', content: 'm', memoryId: service.ids('memory') });
    await service.updateMemory(mount, store.id, saved.memory.id, { content: 'm2' });
    await service.moveMemory(mount, store.id, saved.memory.id, '/n.md');
    await service.setMemoryMode(mount, store.id, saved.memory.id, 0o600);
    await service.deleteMemory(mount, store.id, saved.memory.id);
    expect(core.storage.unsyncedCommits()).toBe(0);
  });

  it('every kind of mount write (save, update, rename, mode, delete) is relaxed by default; a directory rename commits durably', async () => {
    const core = await openCore();
    // No background sync: it would put the counted commits on disk whenever the run is slow.
    const s = createService({ storage: core.storage, syncSchedule: () => () => {} });
    const store = await seedStore(s, core.caller, { '/d/x.md': 'x' });
    const mount = sessionCaller(core, 'sesn_a');
    const saved = await s.saveMemoryAt(mount, store.id, { path: '/m.md', content: 'm', memoryId: s.ids('memory') });
    await s.updateMemory(mount, store.id, saved.memory.id, { content: 'm2' });
    await s.moveMemory(mount, store.id, saved.memory.id, '/n.md');
    expect(core.storage.unsyncedCommits()).toBe(3);
    // Durable at commit in every mode: made by the port alone, on another connection where it can
    // (sqlite/readers.ts), it leaves nothing for a WAL sync.
    await s.moveTree(mount, store.id, '/d', '/e');
    expect(core.storage.unsyncedCommits()).toBe(3);
    await s.setMemoryMode(mount, store.id, saved.memory.id, 0o600);
    await s.deleteMemory(mount, store.id, saved.memory.id);
    expect(core.storage.unsyncedCommits()).toBe(5);
  });
});

describe('the background WAL sync', () => {
  /** A clock the test advances by hand: each scheduled callback waits until `fire` runs it. */
  function manualClock() {
    const queue: { fn: () => void; ms: number; cancelled: boolean }[] = [];
    return {
      schedule(fn: () => void, ms: number) {
        const entry = { fn, ms, cancelled: false };
        queue.push(entry);
        return () => (entry.cancelled = true);
      },
      pending: () => queue.filter((e) => !e.cancelled),
      fire() {
        const e = queue.shift();
        if (e && !e.cancelled) e.fn();
      },
    };
  }
  /** Waits until `cond` holds: observed, not timed (the test's timeout bounds it). */
  async function until(cond: () => boolean): Promise<void> {
    while (!cond()) await new Promise((r) => setTimeout(r, 5));
  }

  it('runs one interval after a mount commit, syncs everything, and schedules nothing while idle', async () => {
    const { storage, storeId } = await openStorage();
    const clock = manualClock();
    const durability = createDurability({ storage, schedule: clock.schedule });
    expect(clock.pending()).toEqual([]);
    await durability.write(storage, 'mount', (tx) => save(tx, storeId, '/a.md', 'a'));
    await durability.write(storage, 'mount', (tx) => save(tx, storeId, '/b.md', 'b'));
    // Two commits, one sync waiting for the interval.
    expect(clock.pending().map((e) => e.ms)).toEqual([SYNC_INTERVAL_MS]);
    expect(durability.unsynced()).toBe(2);
    clock.fire();
    await until(() => durability.unsynced() === 0);
    await new Promise((r) => setTimeout(r, 5));
    expect(clock.pending()).toEqual([]);
    // API writes are durable at commit: nothing to schedule.
    await durability.write(storage, 'api', (tx) => save(tx, storeId, '/c.md', 'c'));
    expect(clock.pending()).toEqual([]);
  });

  it('a commit that lands during a sync gets the next interval', async () => {
    const { storage, storeId } = await openStorage();
    const clock = manualClock();
    const durability = createDurability({ storage, schedule: clock.schedule });
    await durability.write(storage, 'mount', (tx) => save(tx, storeId, '/a.md', 'a'));
    clock.fire();
    // The sync is in flight (its fdatasync has not called back yet).
    await durability.write(storage, 'mount', (tx) => save(tx, storeId, '/b.md', 'b'));
    expect(clock.pending()).toEqual([]);
    await until(() => clock.pending().length > 0);
    expect(clock.pending().map((e) => e.ms)).toEqual([SYNC_INTERVAL_MS]);
    clock.fire();
    await until(() => durability.unsynced() === 0);
  });

  it('stop cancels the wait, makes a last sync and schedules nothing after', async () => {
    const { storage, storeId } = await openStorage();
    const clock = manualClock();
    const durability = createDurability({ storage, schedule: clock.schedule });
    await durability.write(storage, 'mount', (tx) => save(tx, storeId, '/a.md', 'a'));
    await durability.stop();
    expect(durability.unsynced()).toBe(0);
    expect(clock.pending()).toEqual([]);
    await durability.write(storage, 'mount', (tx) => save(tx, storeId, '/b.md', 'b'));
    expect(clock.pending()).toEqual([]);
  });

  it('in close mode a mount write is durable at commit and nothing is scheduled', async () => {
    const { storage, storeId } = await openStorage();
    const clock = manualClock();
    const durability = createDurability({ storage, mountSync: 'close', schedule: clock.schedule });
    await durability.write(storage, 'mount', (tx) => save(tx, storeId, '/a.md', 'a'));
    expect(durability.unsynced()).toBe(0);
    expect(clock.pending()).toEqual([]);
  });

  it('with the real timer, the unsynced count drops to 0 after a mount commit without any fsync call', async () => {
    const { storage, storeId } = await openStorage();
    const durability = createDurability({ storage });
    await durability.write(storage, 'mount', (tx) => save(tx, storeId, '/a.md', 'a'));
    expect(durability.unsynced()).toBe(1);
    await until(() => durability.unsynced() === 0);
    expect(durability.unsynced()).toBe(0);
  });
});
