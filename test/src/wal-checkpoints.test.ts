/**
 * WAL checkpoints on their own thread (src/storage/sqlite/wal-checkpointer.ts): a serving storage's
 * commits leave checkpointing to a worker, which copies the WAL into the database file; the commits'
 * own autocheckpoint stays as a far-off backstop, and closing stops the worker and empties the WAL.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createService } from '../../src/service/service.js';
import { openSqliteStorage, type SqliteStorage } from '../../src/storage/sqlite/open.js';
import { BACKSTOP_PAGES, BEHIND_FRAMES, mayCommitBeside, passPacer } from '../../src/storage/sqlite/wal-checkpointer.js';
import type { Caller } from '../../src/domain/types.js';
import { tmpDir } from '../helpers/tmp.js';

const size = (file: string) => (existsSync(file) ? statSync(file).size : 0);

/** Saves `n` 4 KiB memories (about 17 WAL pages each) through the service. */
async function saveMany(storage: SqliteStorage, n: number): Promise<void> {
  const service = createService({ storage });
  const ws = await service.keys.defaultWorkspace();
  const { key } = await service.keys.createKey('test', 'admin', ws.id);
  const caller: Caller = { workspaceId: ws.id, actor: { type: 'api_actor', apiKeyId: key.id } };
  const storeId = (await service.createStore(caller, { name: 's', description: '', metadata: {} })).id;
  const content = 'a line the agent wrote down\n'.repeat(147);
  // Each its own text (identical texts are stored once), so each save writes a page or more.
  for (let i = 0; i < n; i++) await service.saveMemoryAt(caller, storeId, { path: `/f${i}.md`, content: `${i}\n${content}`, memoryId: service.ids('memory') });
}

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
  if (!ok()) throw new Error(`still not: ${what}`);
}

describe('background WAL checkpoints', () => {
  it('a serving storage copies its WAL into the database file from another thread, with no commit doing it', async () => {
    const file = join(tmpDir(), 'mnemo.db');
    const storage = openSqliteStorage(file, { backgroundCheckpoints: { log: () => {} } });
    try {
      // The commits' own checkpoint waits for far more WAL than these saves write.
      expect(storage.readPragma('wal_autocheckpoint')).toBe(BACKSTOP_PAGES);
      const before = size(file);
      await saveMany(storage, 120);
      expect(size(`${file}-wal`)).toBeLessThan(BACKSTOP_PAGES * 4096);
      // Only a checkpoint writes the database file in WAL mode.
      await until('the database file grew', () => size(file) > before + 120 * 4096);
    } finally {
      await storage.close();
    }
  });

  it('a storage opened without them checkpoints inside its commits, as SQLite does by default', async () => {
    const file = join(tmpDir(), 'mnemo.db');
    const storage = openSqliteStorage(file);
    try {
      expect(storage.readPragma('wal_autocheckpoint')).toBe(1000);
      await saveMany(storage, 120);
      expect(size(file)).toBeGreaterThan(120 * 4096);
    } finally {
      await storage.close();
    }
  });

  it('closing stops the worker and leaves an empty WAL, and the data reads back from a new connection', async () => {
    const file = join(tmpDir(), 'mnemo.db');
    const storage = openSqliteStorage(file, { backgroundCheckpoints: { log: () => {} } });
    await saveMany(storage, 50);
    await storage.close();
    expect(size(`${file}-wal`)).toBe(0);
    const raw = new Database(file, { readonly: true });
    try {
      expect(raw.prepare('SELECT count(*) FROM memories').pluck().get()).toBe(50);
    } finally {
      raw.close();
    }
  });

  it('lets work that may wait commit while the WAL is short, and past BEHIND_FRAMES only after a new pass copied it all', () => {
    const long = BEHIND_FRAMES + 100;
    expect(mayCommitBeside({ log: BEHIND_FRAMES - 1, checkpointed: 0, pass: 7 }, 7)).toBe(true);
    expect(mayCommitBeside({ log: -1, checkpointed: -1, pass: -1 }, -1)).toBe(true);
    // Long and not wholly copied: wait, however many passes ran.
    expect(mayCommitBeside({ log: long, checkpointed: long - 1, pass: 8 }, 7)).toBe(false);
    // Wholly copied, but by the pass this work last went by: its own commit since has frames no pass copied.
    expect(mayCommitBeside({ log: long, checkpointed: long, pass: 7 }, 7)).toBe(false);
    // Wholly copied by a later pass: this commit may start the WAL over.
    expect(mayCommitBeside({ log: long, checkpointed: long, pass: 8 }, 7)).toBe(true);
  });

  it("passes every 100 ms at a mount's pace, every 25 ms through a bulk write until the WAL stops growing, every 250 ms while idle", () => {
    const pace = passPacer(0);
    // The first pass, right after the start, finds what the WAL held: no rate, no bulk write.
    expect(pace({ log: 500, checkpointed: 500 }, 2)).toBe(100);
    expect(pace({ log: 0, checkpointed: 0 }, 250)).toBe(100);
    // A mount's saves: 500–1,250 new frames a tenth of a second.
    expect(pace({ log: 800, checkpointed: 800 }, 350)).toBe(100);
    expect(pace({ log: 1900, checkpointed: 1900 }, 450)).toBe(100);
    // A fork: 5,000 frames in 100 ms (50 a millisecond, past 20): fast passes...
    expect(pace({ log: 6900, checkpointed: 6900 }, 550)).toBe(25);
    // ...through its slower stretches, a pass that could not run (-1) and the WAL starting over...
    expect(pace({ log: 7000, checkpointed: 7000 }, 575)).toBe(25);
    expect(pace({ log: -1, checkpointed: -1 }, 600)).toBe(25);
    expect(pace({ log: 300, checkpointed: 300 }, 625)).toBe(25);
    // ...until a pass finds the WAL as the last one left it: idle, then a mount's pace again.
    expect(pace({ log: 300, checkpointed: 300 }, 650)).toBe(250);
    expect(pace({ log: 900, checkpointed: 900 }, 900)).toBe(100);
    // The rate counts the time since the last pass that ran: 1,900 frames over 250 ms is slow.
    expect(pace({ log: 2800, checkpointed: 2800 }, 1150)).toBe(100);
  });
});

