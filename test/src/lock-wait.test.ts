/**
 * Another process holding SQLite's write lock (an operator's sqlite3 shell in BEGIN IMMEDIATE, a
 * backup tool): the serving connection's writes wait for it on a timer, not inside SQLite on the
 * thread that serves every mount and request. Reads answer meanwhile, later writes queue behind in
 * order, each write runs whole once, and past the wait it is refused with nothing written.
 */
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openSqliteStorage, type SqliteOptions } from '../../src/storage/sqlite/open.js';
import { isDatabaseBusy } from '../../src/storage/common/database-busy.js';
import { tmpDir } from '../helpers/tmp.js';
import { holdWriteLock as holdLock, type WriteLockHolder } from '../helpers/write-lock.js';
import { fixture, thrown, verQ } from './storage/fixture.js';

async function holdWriteLock(file: string): Promise<WriteLockHolder> {
  const holder = await holdLock(file);
  onTestFinished(async () => {
    holder.kill();
    await holder.gone;
  });
  return holder;
}

/** Resolves after `n` turns of the event loop (timers included): the serving thread kept turning. */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setTimeout(resolve, 1));
}

function settledState(p: Promise<unknown>): { settled: boolean } {
  const state = { settled: false };
  p.then(() => (state.settled = true), () => (state.settled = true));
  return state;
}

async function open(options: SqliteOptions = {}) {
  const file = join(tmpDir(), 'mnemo.db');
  return { file, ...(await fixture(() => openSqliteStorage(file, options))) };
}

describe('a write lock held by another process', () => {
  it('writes wait for it without holding the event loop, reads answer meanwhile, and the writes land in arrival order once it goes', async () => {
    // A wait far past the default 5 s: a loaded host must not turn the waits under test into refusals.
    const { file, storage, addStore, addMemory } = await open({ lockWaitMs: 60_000 });
    const store = await addStore();
    await addMemory(store.id, '/seen.md', 'seen');
    const holder = await holdWriteLock(file);

    const first = addMemory(store.id, '/first.md', 'one');
    const second = addMemory(store.id, '/second.md', 'two');
    // Queued in the same turn behind both: a read is answered at the first one's first pause, not once the writes land.
    const queuedRead = storage.storeUsage(store.id);
    const firstState = settledState(first);
    const secondState = settledState(second);
    expect((await queuedRead).memories).toBe(1);
    await turns(20);
    expect([firstState.settled, secondState.settled]).toEqual([false, false]);
    // Point reads and other reads on the same connection, and a reader thread's listing, answer while both writes wait.
    expect((await storage.getMemoryByPath(store.id, '/seen.md'))?.content).toBe('seen');
    expect((await storage.storeUsage(store.id)).memories).toBe(1);
    expect((await storage.listVersions(store.id, verQ())).data).toHaveLength(1);
    // A write made while they wait is refused whole and queues behind them.
    const third = addMemory(store.id, '/third.md', 'three');
    const thirdState = settledState(third);
    await turns(5);
    expect([firstState.settled, secondState.settled, thirdState.settled]).toEqual([false, false, false]);
    expect(await storage.getMemoryByPath(store.id, '/third.md')).toBeNull();

    await holder.release();
    const written = await Promise.all([first, second, third]);
    const versions = (await storage.listVersions(store.id, verQ())).data;
    // Newest first: each write committed after the one before it, none overtook.
    expect(versions.map((v) => v.path)).toEqual(['/third.md', '/second.md', '/first.md', '/seen.md']);
    expect(written.map((m) => m.path)).toEqual(['/first.md', '/second.md', '/third.md']);
  });

  it('an atomic transaction refused at its BEGIN runs its function once, after the lock goes', async () => {
    const { file, storage, addStore, addMemory } = await open({ lockWaitMs: 60_000 });
    const store = await addStore();
    const holder = await holdWriteLock(file);
    let runs = 0;
    const tx = storage.atomic(async (t) => {
      runs += 1;
      await addMemory(store.id, '/in-tx.md', 'x', undefined, t);
    });
    await turns(10);
    expect(runs).toBe(0);
    await holder.release();
    await tx;
    expect(runs).toBe(1);
    expect((await storage.getMemoryByPath(store.id, '/in-tx.md'))?.content).toBe('x');
  });

  it('writes still refused when their wait ends fail with SQLITE_BUSY and write nothing, and the next write after the lock goes lands', async () => {
    // A short configured wait (lockWaitMs) instead of the default 5 s.
    const { file, storage, addStore, addMemory } = await open({ lockWaitMs: 100 });
    const store = await addStore();
    const holder = await holdWriteLock(file);
    let runs = 0;
    const refusedTx = thrown(() =>
      storage.atomic(async (t) => {
        runs += 1;
        await addMemory(store.id, '/never-tx.md', 'x', undefined, t);
      }),
    );
    const refused = thrown(() => addMemory(store.id, '/never.md', 'x'));
    expect(isDatabaseBusy(await refusedTx)).toBe(true);
    expect(isDatabaseBusy(await refused)).toBe(true);
    expect(runs).toBe(0);
    await holder.release();
    expect(await storage.getMemoryByPath(store.id, '/never.md')).toBeNull();
    expect(await storage.getMemoryByPath(store.id, '/never-tx.md')).toBeNull();
    expect((await storage.listVersions(store.id, verQ())).data).toEqual([]);
    expect((await addMemory(store.id, '/after.md', 'after')).path).toBe('/after.md');
  });
});
