/**
 * Deleting a store on SQLite (sqlite/store-purge.ts): the request hides it in one short transaction
 * and the upkeep removes its rows in bounded steps, so a big store's deletion never holds the
 * thread that serves every mount and request.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { ImportedWrite } from '../../src/storage/sqlite/bulk.js';
import { PURGE_MEMORIES } from '../../src/storage/sqlite/store-purge.js';
import { parseCheckpointCreate } from '../../src/validate/checkpoint.js';
import { codeOf, openCore, type Core } from '../helpers/core.js';

/** Imports `n` memories (two versions each) into a new store: /p/00000.md … */
async function filledStore(core: Core, name: string, n: number, text: (i: number) => string): Promise<string> {
  const { service, storage, caller } = core;
  const storeId = (await service.createStore(caller, { name, description: '', metadata: {} })).id;
  const writes: ImportedWrite[] = [];
  for (let i = 0; i < n; i++) {
    const memoryId = service.ids('memory');
    const path = `/p/${String(i).padStart(5, '0')}.md`;
    const stamp = () => ({ versionId: service.ids('version'), now: service.clock(), actor: caller.actor });
    writes.push({ memoryId, operation: 'created', path, content: `${text(i)} first`, ...stamp() });
    writes.push({ memoryId, operation: 'modified', path, content: text(i), ...stamp() });
  }
  storage.importWrites(storeId, writes);
  return storeId;
}

/** Counts of a store's rows, read from the file by a connection of the test's own. */
function rowsOf(file: string, storeId: string) {
  const db = new Database(file, { readonly: true });
  try {
    const count = (sql: string, ...args: unknown[]) => db.prepare(sql).pluck().get(...args) as number;
    return {
      store: count('SELECT count(*) FROM stores WHERE id = ?', storeId),
      memories: count('SELECT count(*) FROM memories WHERE store_id = ?', storeId),
      versions: count('SELECT count(*) FROM versions WHERE store_id = ?', storeId),
      checkpoints: count('SELECT count(*) FROM checkpoints WHERE store_id = ?', storeId),
      backlog: count('SELECT count(*) FROM search_backlog'),
      indexed: count('SELECT count(*) FROM memories_fts_docsize'),
      contents: count('SELECT count(*) FROM contents'),
    };
  } finally {
    db.close();
  }
}

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
  if (!ok()) throw new Error(`still not: ${what}`);
}

const search = (q: string) => ({ q, mode: 'fts' as const, pathPrefix: '/', limit: 100, page: null });

describe('deleting a store on SQLite', () => {
  // With reader threads, each step runs on the writer thread's connection (sqlite/open.ts threadWrites); without, on the serving one.
  it.each([
    ['on the writer thread', undefined],
    ['on the serving connection (no reader threads)', 0],
  ] as const)('hides the store at once and removes its rows in steps of at most PURGE_MEMORIES memories, the index emptied as they go (%s)', async (_where, readers) => {
    const core = await openCore({ readers });
    const { service, storage, caller } = core;
    const n = PURGE_MEMORIES * 3 + 17;
    const doomed = await filledStore(core, 'doomed', n, (i) => `heron ${i}`);
    const kept = await filledStore(core, 'kept', 5, (i) => `egret ${i}`);
    await service.checkpoints.create(caller, doomed, parseCheckpointCreate({ agent_id: 'agent', session_id: 's1', goal: 'ship it' }));
    while ((await storage.indexSearchBacklog(10_000)) > 0);
    const before = rowsOf(core.file, doomed);
    expect(before).toMatchObject({ store: 1, memories: n, versions: 2 * n, checkpoints: 1, backlog: 0, indexed: n + 5 });

    await service.deleteStore(caller, doomed);
    // Gone for every reader and writer, and its name is free, while its rows are still there.
    expect(await codeOf(() => service.getStore(caller, doomed))).toBe('not_found');
    expect((await service.listStores(caller, { limit: 100, page: null, includeArchived: true, createdGte: null, createdLte: null })).data.map((s) => s.id)).toEqual([kept]);
    expect(await codeOf(() => service.createMemory(caller, doomed, { path: '/late.md', content: 'late' }))).toBe('not_found');
    expect(await codeOf(() => storage.createMemory({ storeId: doomed, memoryId: service.ids('memory'), versionId: service.ids('version'), path: '/late.md', content: 'late', now: service.clock(), actor: caller.actor }))).toBe('not_found');
    await service.createStore(caller, { name: 'doomed', description: '', metadata: {} });
    expect(rowsOf(core.file, doomed)).toMatchObject({ store: 1, memories: n, versions: 2 * n });

    let steps = 0;
    let last = rowsOf(core.file, doomed);
    // No reader can see those rows any more: removed on the serving connection, they drop no mount's or
    // reader's cache; on the writer thread, each step's commit moves the mark once, as any commit of
    // another connection must (it cannot be told from another process's).
    let moved = 0;
    const step = async () => {
      const mark = storage.changeMark();
      const more = await storage.purgeDeletedStores();
      moved += storage.changeMark() - mark;
      return more;
    };
    while (await step()) {
      steps += 1;
      const now = rowsOf(core.file, doomed);
      // A step is a bounded slice: never more than PURGE_MEMORIES memories, never a version while a removal waits in the queue.
      expect(last.memories - now.memories).toBeLessThanOrEqual(PURGE_MEMORIES);
      expect(now.backlog).toBeLessThanOrEqual(PURGE_MEMORIES);
      if (now.versions < last.versions) expect(last.backlog).toBe(0);
      // Searching another store meanwhile neither waits for the whole purge nor refuses.
      if (steps % 7 === 0) expect((await service.searchMemories(caller, kept, search('egret'))).data).toHaveLength(5);
      if (steps % 11 === 0) expect(await storage.domainCheck()).toEqual([]);
      last = now;
      if (steps > 10_000) throw new Error('the purge never ends');
    }
    expect(steps).toBeGreaterThan(Math.ceil(n / PURGE_MEMORIES));
    expect(moved).toBe(readers === 0 ? 0 : steps);
    const after = rowsOf(core.file, doomed);
    expect(after).toMatchObject({ store: 0, memories: 0, versions: 0, checkpoints: 0, backlog: 0, indexed: 5 });
    // Every text only the deleted store held left the file with it.
    expect(after.contents).toBe(before.contents - 2 * n);
    expect((await service.searchMemories(caller, kept, search('heron'))).data).toEqual([]);
    expect(await storage.integrityCheck()).toEqual([]);
    expect(await storage.domainCheck()).toEqual([]);
    expect(await storage.purgeDeletedStores()).toBe(false);
  });

  it("waits while the WAL's background checkpoints are behind, and goes on once a pass has copied the WAL", async () => {
    const core = await openCore({ backgroundCheckpoints: true });
    const doomed = await filledStore(core, 'doomed', 10, (i) => `stilt ${i}`);
    await core.service.deleteStore(core.caller, doomed);
    // A reader's open snapshot stops every pass short of the WAL's end, as a steady run of commits does.
    const reader = new Database(core.file, { readonly: true });
    try {
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM stores').get();
      // About 7,000 WAL pages: past BEHIND_FRAMES, short of the serving connection's backstop.
      await filledStore(core, 'bulk', 2000, (i) => `${i} ${'w'.repeat(6000)}`);
      await until('the checkpoints fall behind', () => core.storage.walCheckpointsBehind());
      expect(await core.storage.purgeDeletedStores()).toBe(false);
      expect(rowsOf(core.file, doomed)).toMatchObject({ store: 1, memories: 10 });
      reader.exec('COMMIT');
      await until('a pass copies the whole WAL', () => !core.storage.walCheckpointsBehind());
    } finally {
      reader.close();
    }
    expect(await core.storage.purgeDeletedStores()).toBe(true);
  });

  it('a purge cut short by a restart goes on where it stopped', async () => {
    const core = await openCore();
    const doomed = await filledStore(core, 'doomed', PURGE_MEMORIES * 2, (i) => `bittern ${i}`);
    await core.service.deleteStore(core.caller, doomed);
    expect(await core.storage.purgeDeletedStores()).toBe(true);
    expect(await core.storage.purgeDeletedStores()).toBe(true);
    core.close();
    const again = await openCore({ dir: core.dir });
    expect(rowsOf(again.file, doomed).memories).toBeLessThan(PURGE_MEMORIES * 2);
    while (await again.storage.purgeDeletedStores());
    expect(rowsOf(again.file, doomed)).toMatchObject({ store: 0, memories: 0, versions: 0, backlog: 0, indexed: 0 });
    expect(await again.storage.domainCheck()).toEqual([]);
  });
});
