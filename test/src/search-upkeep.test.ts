/**
 * The server's background search-index upkeep (src/service/search-upkeep.ts) over a real SQLite file: it
 * empties the queue soon after writes pause, a batch per turn of the event loop, never defers longer
 * than it was told (nor once much is queued), logs failures instead of throwing, stands by while another
 * process does it, and does nothing once stopped.
 * The tests turn its timer and clock by hand (createSearchUpkeep); one checks the server's timer runs it.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { createSearchUpkeep, startSearchUpkeep, type SearchUpkeepOptions } from '../../src/service/search-upkeep.js';
import { openCore, queuedForSearch } from '../helpers/core.js';

/**
 * The upkeep with its timer and clock in the test's hands: `tick()` is one turn of the server's
 * timer, `advance(ms)` moves the clock it measures its deferral by.
 */
function handUpkeep(options: Omit<SearchUpkeepOptions, 'everyMs' | 'log'> & { log?: (line: string) => void }) {
  let now = 0;
  const upkeep = createSearchUpkeep({ log: () => {}, ...options, now: () => now });
  onTestFinished(() => upkeep.stop());
  return {
    ...upkeep,
    advance(ms: number) {
      now += ms;
    },
  };
}

describe('search upkeep', () => {
  it('indexes every queued write in batches soon after, and nothing once stopped', async () => {
    const { service, caller, file } = await openCore();
    const store = await service.createStore(caller, { name: 's', description: '', metadata: {} });
    for (let i = 0; i < 7; i++) await service.createMemory(caller, store.id, { path: `/m${i}.md`, content: `tern ${i}` });
    const batches: number[] = [];
    const upkeep = handUpkeep({
      index: async (max) => {
        const left = await service.indexSearchBacklog(max);
        batches.push(left);
        return left;
      },
      changeMark: () => 0,
      batch: 3,
    });
    await upkeep.tick();
    expect(queuedForSearch(file)).toBe(0);
    expect(batches.slice(0, 3)).toEqual([4, 1, 0]);

    upkeep.stop();
    await service.createMemory(caller, store.id, { path: '/late.md', content: 'tern' });
    await upkeep.tick();
    expect(queuedForSearch(file)).toBe(1);
  });

  it("runs at each turn of the server's timer", async () => {
    let calls = 0;
    let stop = () => {};
    const ran = new Promise<void>((resolve) => {
      stop = startSearchUpkeep({
        index: () => {
          calls++;
          resolve();
          return 0;
        },
        changeMark: () => 0,
        log: () => {},
        everyMs: 10,
      });
    });
    onTestFinished(stop);
    await ran;
    stop();
    expect(calls).toBeGreaterThan(0);
  });

  /** An upkeep over an index that only counts its calls. */
  function countingUpkeep(changeMark: () => number, maxDeferMs: number) {
    let calls = 0;
    const upkeep = handUpkeep({
      index: () => {
        calls++;
        return 0;
      },
      changeMark,
      maxDeferMs,
    });
    return { ...upkeep, calls: () => calls };
  }

  it('waits while storage keeps changing and indexes once it stops', async () => {
    let writing = true;
    let mark = 0;
    const upkeep = countingUpkeep(() => (writing ? ++mark : mark), 60_000);
    for (let i = 0; i < 10; i++) {
      upkeep.advance(10);
      await upkeep.tick();
    }
    expect(upkeep.calls()).toBe(0);
    writing = false;
    await upkeep.tick();
    expect(upkeep.calls()).toBeGreaterThan(0);
  });

  it('indexes during writes that never pause once it has deferred for maxDeferMs', async () => {
    let mark = 0;
    const upkeep = countingUpkeep(() => ++mark, 40);
    await upkeep.tick();
    expect(upkeep.calls()).toBe(0);
    for (let i = 0; i < 10; i++) {
      upkeep.advance(10);
      await upkeep.tick();
    }
    expect(upkeep.calls()).toBeGreaterThanOrEqual(2);
  });

  it('stops waiting for a pause once writes have queued much, so a search never meets a long queue', async () => {
    let mark = 0;
    // A burst of ~250 saves per tick: it never pauses, and waiting the full minute would queue far
    // too much. The clock stands still, so only the amount queued can end the wait.
    const upkeep = countingUpkeep(() => (mark += 500), 60_000);
    for (let i = 0; i < 10; i++) await upkeep.tick();
    expect(upkeep.calls()).toBeGreaterThanOrEqual(2);
  });

  it('starts nothing while another process stands in for it, and takes over once that one is gone', async () => {
    let other = true;
    let calls = 0;
    const upkeep = handUpkeep({
      index: () => {
        calls++;
        return 0;
      },
      changeMark: () => 0,
      standBy: () => other,
    });
    for (let i = 0; i < 5; i++) {
      upkeep.advance(10_000);
      await upkeep.tick();
    }
    expect(calls).toBe(0);
    other = false;
    await upkeep.tick();
    expect(calls).toBe(1);
  });

  it('logs a failure and keeps going', async () => {
    const lines: string[] = [];
    let calls = 0;
    const upkeep = handUpkeep({
      index: () => {
        calls++;
        throw new Error('database is locked');
      },
      changeMark: () => 0,
      log: (line) => lines.push(line),
    });
    await upkeep.tick();
    await upkeep.tick();
    expect(calls).toBe(2);
    expect(lines[0]).toBe('mnemo: search indexing failed: database is locked');
  });
});
