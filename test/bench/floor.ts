/**
 * @module The durable-save bounds: what a durable save costs on this host without FUSE. The ceiling
 * keeps bytes in a `Map`; every mnemo save also commits a version with synchronous=FULL before
 * close() returns. A commit of one 4 KiB row into a one-table database is far less than a version
 * (two rows, seven index entries, the search queue), so the ceiling's save time plus that commit is
 * a save time no durable store built on SQLite can beat here. The engine's own save, timed the same
 * way, tells how close mnemo could come if its FUSE handling cost nothing.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/** Median ms of the engine saving a 4 KiB file to a new path (what a mount's close() does), on a fresh database. */
export function engineSaveMs(saves = 2000): number {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-bench-engine-'));
  const { storage, service, caller, storeId } = openBenchEngine(join(dir, 'mnemo.db'), 'bench-engine', 'bench engine');
  try {
    const content = 'memory: the agent noted something worth keeping\n'.repeat(90).slice(0, 4096);
    const save = (path: string) => service.saveMemoryAt(caller, storeId, { path, content, memoryId: service.ids('memory') });
    for (let i = 0; i < 500; i++) save(`/warm/f${i}.md`);
    const lat: number[] = [];
    for (let i = 0; i < saves; i++) {
      const t = performance.now();
      save(`/a/f${String(i).padStart(5, '0')}.md`);
      lat.push(performance.now() - t);
    }
    return median(lat);
  } finally {
    storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The best save ratio a durable store could reach against a ceiling that saves in `ceilingMs`. */
export function durableBound(ceilingMs: number, commitMs: number): number {
  return ceilingMs / (ceilingMs + commitMs);
}
