/**
 * @module What the store-deletion and directory-move sections share: a store of small files, and a
 * session mount of it stat-ing files it has never looked at, 100 at a time (each file once), with the
 * server's event-loop delay, idle and while a long operation runs beside it.
 */
import { loopDelay, statAll } from './isolation.js';
import type { Mnemo } from './targets.js';

/** Files of the kept store: the idle run's and more, so a busy run starts on files never stat-ed. */
const FILES = 900;

/**
 * Batches of 100 stats in the idle run. One batch made its p99 the slowest stat of 100 (the stat
 * child's first, ~5 ms) against thousands in a busy run: the idle row read higher than the busy one.
 */
const IDLE_BATCHES = 5;

export interface StatRun {
  /** Stat times, ms, sorted. */
  stats: number[];
  loop: { p99: number; max: number };
}

/** A store of FILES small files under /k/, made over the API. */
export async function keptStore(m: Mnemo): Promise<string> {
  const kept = await m.createStore('bench kept');
  for (let i = 0; i < FILES; i++) await m.api.call('POST', `/v1/memory_stores/${kept}/memories`, { path: `/k/${i}.md`, content: `kept ${i}` });
  return kept;
}

const paths = (mnt: string, first: number) => Array.from({ length: 100 }, (_, i) => `${mnt}/k/${(first + i) % FILES}.md`);
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

/** IDLE_BATCHES × 100 stats through `mnt` (a mount of the kept store) and the loop delay over them, with nothing else running. */
export async function idleRun(m: Mnemo, mnt: string): Promise<StatRun> {
  await loopDelay(m);
  const stats: number[] = [];
  for (let b = 0; b < IDLE_BATCHES; b++) stats.push(...(await statAll(paths(mnt, b * 100), 0.002)));
  return { stats: sorted(stats), loop: await loopDelay(m) };
}

/** Stats through `mnt`, 100 at a time from the first file the idle run left, until `done()` holds after a batch; and the loop delay over them. */
export async function statsUntil(m: Mnemo, mnt: string, done: () => boolean): Promise<StatRun> {
  const stats: number[] = [];
  let first = IDLE_BATCHES * 100;
  while (!done()) {
    stats.push(...(await statAll(paths(mnt, first), 0.002)));
    first = (first + 100) % FILES;
  }
  return { stats: sorted(stats), loop: await loopDelay(m) };
}
