/**
 * @module Builds the bench's large store through the engine (service + SQLite adapter, no HTTP):
 * `memories` memories in directories of 1,000 (/d000/f0000.md …), each with versions/memories versions,
 * imported in transactions of 5,000 writes (sqlite/bulk.ts).
 */
import { join } from 'node:path';
import type { ImportedWrite } from '../../src/storage/sqlite/bulk.js';
import { openBenchEngine } from './engine.js';
import { fmt } from './report.js';

export const DIR_SIZE = 1000;

export function pathOf(i: number): string {
  return `/d${String(Math.floor(i / DIR_SIZE)).padStart(3, '0')}/f${String(i % DIR_SIZE).padStart(4, '0')}.md`;
}

/** A full directory in the middle of the store, for the scale figures. */
export function middleDir(memories: number): string {
  return pathOf(Math.floor(memories / DIR_SIZE / 2) * DIR_SIZE).replace(/\/f0000\.md$/, '');
}

export interface BigStore {
  storeId: string;
  memoryIds: string[];
  seconds: number;
}

const BATCH = 5000;

export async function buildBigStore(dataDir: string, memories: number, versions: number, log: (s: string) => void): Promise<BigStore> {
  const started = performance.now();
  const { storage, service, caller, storeId } = await openBenchEngine(join(dataDir, 'mnemo.db'), 'bench-loader', 'bench big', 'built by npm run bench');
  try {
    const text = (i: number, round: number) =>
      `# note ${i}\nround ${round}: the agent learned fact ${(i * 7919 + round) % 100_003} about project ${i % 211}.\n`;

    const memoryIds = Array.from({ length: memories }, () => service.ids('memory'));
    const actor = caller.actor;
    const perMemory = Math.max(1, Math.round(versions / memories));
    // Groups of memories, their versions interleaved round-robin within the group.
    const group = Math.max(1, Math.floor(BATCH / perMemory));
    for (let first = 0; first < memories; first += group) {
      const writes: ImportedWrite[] = [];
      const now = service.clock();
      const last = Math.min(memories, first + group);
      for (let round = 0; round < perMemory; round++) {
        for (let i = first; i < last; i++) {
          writes.push({ memoryId: memoryIds[i]!, operation: round === 0 ? 'created' : 'modified', path: pathOf(i), content: text(i, round), versionId: service.ids('version'), now, actor });
        }
      }
      storage.importWrites(storeId, writes);
      if (Math.floor(last / 10_000) > Math.floor(first / 10_000)) log(`  big store: ${fmt(last)} memories, ${fmt(last * perMemory)} versions`);
    }
    return { storeId, memoryIds, seconds: (performance.now() - started) / 1000 };
  } finally {
    await storage.close();
  }
}
