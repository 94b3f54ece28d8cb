/**
 * @module What the store-deletion and directory-move sections share: a store of small files, and a
 * session mount of it stat-ing files it has never looked at, 100 at a time (each file once), with the
 * server's event-loop delay, idle and while a long operation runs beside it.
 */
import { loopDelay, statAll } from './isolation.js';
import type { Mnemo } from './targets.js';

/** Files of the kept store: three times what a section stats, so the stats wrap round rarely. */
const FILES = 900;

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

/** 100 stats through `mnt` (a mount of the kept store) and the loop delay over them, with nothing else running. */
export async function idleRun(m: Mnemo, mnt: string): Promise<StatRun> {
  await loopDelay(m);
  const stats = sorted(await statAll(paths(mnt, 0), 0.002));
  return { stats, loop: await loopDelay(m) };
}

/** Stats through `mnt`, 100 at a time from the 101st file on, until `done()` holds after a batch; and the loop delay over them. */
export async function statsUntil(m: Mnemo, mnt: string, done: () => boolean): Promise<StatRun> {
  const stats: number[] = [];
  let first = 100;
  while (!done()) {
    stats.push(...(await statAll(paths(mnt, first), 0.002)));
    first = (first + 100) % FILES;
  }
  return { stats: sorted(stats), loop: await loopDelay(m) };
}
