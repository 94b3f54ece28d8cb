/**
 * @module The save bounds: what a save costs on this host without FUSE. The ceiling keeps bytes in a
 * `Map`; every mnemo save also commits a version before close() returns.
 *
 * - Durable (MNEMO_MOUNT_SYNC=close, and every API write): a commit with synchronous=FULL. A commit
 *   of one 4 KiB row into a one-table database is far less than a version (two rows, seven index
 *   entries, the search queue), so the ceiling's save time plus that commit is a save time no
 *   durable store built on SQLite can beat here.
 * - Not fsync'd (the default mount mode, DESIGN §5): saves in held batches committed with
 *   synchronous=NORMAL and journaled first (write-behind), WAL checkpoints on their own thread, as
 *   the server runs them. What is left is mnemo's own work: SQL, WAL writes into the page cache, the
 *   journal's write, JavaScript.
 *
 * The engine's own save, timed both ways, tells how close mnemo could come if its FUSE handling
 * cost nothing.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Caller } from '../../src/domain/types.js';
import { createService } from '../../src/service/service.js';
import type { SqliteOptions } from '../../src/storage/sqlite/open.js';
import { openBenchEngine } from './engine.js';
import { median } from './http.js';

/** Median ms of a bare durable commit (WAL, synchronous=FULL, one 4 KiB row), in the servers' temp dir. */
export function bareCommitMs(commits = 2000): number {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-bench-commit-'));
  const db = new Database(join(dir, 'bare.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB NOT NULL)');
    const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
    const body = Buffer.alloc(4096, 120);
    // Past the first WAL checkpoint, so later commits reuse the WAL file as a long-running server does.
    for (let i = 0; i < 1200; i++) insert.run(body);
    const lat: number[] = [];
    for (let i = 0; i < commits; i++) {
      const t = performance.now();
      insert.run(body);
      lat.push(performance.now() - t);
    }
    return median(lat);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface SaveTimes {
  p50: number;
  mean: number;
}

/**
 * The engine's commit settings for each mount mode: `close` as MNEMO_MOUNT_SYNC=close, `fsync` as
 * `mnemo serve` runs the default (write-behind: saves in held batches at synchronous=NORMAL,
 * journaled first; checkpoints on their own thread).
 */
const MODES: Record<'close' | 'fsync', SqliteOptions> = {
  close: {},
  fsync: { backgroundCheckpoints: { log: () => {} }, writeBehind: { log: () => {} } },
};

/**
 * Ms (median and mean) of the engine saving a 4 KiB file to a new path (what a mount's close()
 * does: a session's save through the service), on a fresh database, committed as the mount mode
 * `mode` commits. The mean counts the checkpoints and batch commits that land inside saves; the
 * median does not.
 */
export async function engineSaveMs(mode: 'close' | 'fsync' = 'close', saves = 2000): Promise<SaveTimes> {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-bench-engine-'));
  const { storage, caller: admin, storeId } = await openBenchEngine(join(dir, 'mnemo.db'), 'bench-engine', 'bench engine', '', MODES[mode]);
  // The service's durability rule, as the server builds it for this mode.
  const service = createService({ storage, mountSync: mode });
  const caller: Caller = { workspaceId: admin.workspaceId, actor: { type: 'session_actor', sessionId: 'sesn_bench' } };
  try {
    const content = 'memory: the agent noted something worth keeping\n'.repeat(90).slice(0, 4096);
    const save = (path: string) => service.saveMemoryAt(caller, storeId, { path, content, memoryId: service.ids('memory') });
    for (let i = 0; i < 500; i++) await save(`/warm/f${i}.md`);
    const lat: number[] = [];
    for (let i = 0; i < saves; i++) {
      const t = performance.now();
      await save(`/a/f${String(i).padStart(5, '0')}.md`);
      lat.push(performance.now() - t);
    }
    return { p50: median(lat), mean: lat.reduce((a, b) => a + b, 0) / lat.length };
  } finally {
    await service.durability.stop();
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The best save ratio a store whose save adds `extraMs` could reach against a ceiling that saves in `ceilingMs`. */
export function saveBound(ceilingMs: number, extraMs: number): number {
  return ceilingMs / (ceilingMs + extraMs);
}
