/**
 * The server's background search-index upkeep (src/search-upkeep.ts) over a real SQLite file: it
 * empties the queue soon after writes pause, a batch per turn of the event loop, never defers longer
 * than it was told (nor once much is queued), logs failures instead of throwing, and does nothing once stopped.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { startSearchUpkeep } from '../../src/search-upkeep.js';
import { openCore, queuedForSearch } from '../helpers/core.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(5);
  }
}

describe('search upkeep', () => {
  it('indexes every queued write in batches soon after, and nothing once stopped', async () => {
    const { service, caller, file } = openCore();
    const store = service.createStore(caller, { name: 's', description: '', metadata: {} });
    for (let i = 0; i < 7; i++) service.createMemory(caller, store.id, { path: `/m${i}.md`, content: `tern ${i}` });
    const batches: number[] = [];
    const stop = startSearchUpkeep({
      index: (max) => {
        const left = service.indexSearchBacklog(max);
        batches.push(left);
        return left;
      },
      changeMark: () => 0,
      log: () => {},
      everyMs: 10,
      batch: 3,
    });
    onTestFinished(stop);
    await until(() => queuedForSearch(file) === 0);
    expect(batches.slice(0, 3)).toEqual([4, 1, 0]);

    stop();
    service.createMemory(caller, store.id, { path: '/late.md', content: 'tern' });
    await sleep(50);
    expect(queuedForSearch(file)).toBe(1);
  });

  /** An upkeep over an index that only counts its calls, polling every 10 ms. */
  function countingUpkeep(changeMark: () => number, maxDeferMs: number): () => number {
    let calls = 0;
    const stop = startSearchUpkeep({
      index: () => {
        calls++;
        return 0;
      },
      changeMark,
      log: () => {},
      everyMs: 10,
      maxDeferMs,
    });
    onTestFinished(stop);
    return () => calls;
  }

  it('waits while storage keeps changing and indexes once it stops', async () => {
    let writing = true;
    let mark = 0;
    const calls = countingUpkeep(() => (writing ? ++mark : mark), 60_000);
    await sleep(100);
    expect(calls()).toBe(0);
    writing = false;
    await until(() => calls() > 0);
  });

  it('indexes during writes that never pause once it has deferred for maxDeferMs', async () => {
    let mark = 0;
    const calls = countingUpkeep(() => ++mark, 40);
    await until(() => calls() >= 2);
  });

  it('stops waiting for a pause once writes have queued much, so a search never meets a long queue', async () => {
    let mark = 0;
    let calls = 0;
    const stop = startSearchUpkeep({
      index: () => {
        calls++;
        return 0;
      },
      // A burst of ~250 saves per tick: it never pauses, and waiting the full minute would queue far too much.
      changeMark: () => (mark += 500),
      log: () => {},
      everyMs: 10,
      maxDeferMs: 60_000,
      urgentAfter: 2000,
    });
    onTestFinished(stop);
    await until(() => calls >= 2);
  });

  it('logs a failure and keeps going', async () => {
    const lines: string[] = [];
    let calls = 0;
    const stop = startSearchUpkeep({
      index: () => {
        calls++;
        throw new Error('database is locked');
      },
      changeMark: () => 0,
      log: (line) => lines.push(line),
      everyMs: 10,
    });
    onTestFinished(stop);
    await until(() => calls >= 2);
    expect(lines[0]).toBe('mnemo: search indexing failed: database is locked');
  });
});
