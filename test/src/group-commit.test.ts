/**
 * Group commit (issue 5): API writes that arrive in one event-loop turn share a transaction, yet each
 * answers for itself, a refused one rolls back alone, nothing is reported before the commit, and
 * after-commit work (redaction's WAL truncate) still runs once the data is on disk.
 */
import { existsSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createGroupCommit, MAX_GROUP } from '../../src/service/group-commit.js';
import { openSqliteStorage } from '../../src/storage/sqlite/open.js';
import { codeOf, memoryQuery, openCore, readTree, seedStore, versionQuery } from '../helpers/core.js';

describe('group commit', () => {
  it('writes queued in one turn all land, in order, and each resolves with its own result', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, {});
    const writes = createGroupCommit(core.storage);
    const paths = ['/a.md', '/b.md', '/c.md'];
    const results = await Promise.all(paths.map((path) => writes.run((tx) => core.service.operationsOn(tx).createMemory(core.caller, store.id, { path, content: path }))));
    expect(results.map((m) => m.path)).toEqual(paths);
    const versions = (await core.service.listVersions(core.caller, store.id, versionQuery({ limit: 10 }))).data;
    // Newest first: the group ran its writes in the order they were queued.
    expect(versions.map((v) => v.path)).toEqual([...paths].reverse());

    await core.close();
    const reopened = openSqliteStorage(core.file);
    expect((await reopened.listMemories(store.id, memoryQuery({ limit: 10 }))).data.map((i) => (i.type === 'memory' ? i.memory.path : i.path))).toEqual(paths);
    await reopened.close();
  });

  it('a burst of writes is split into groups of at most MAX_GROUP, which commit one after another in arrival order', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, {});
    const sizes: number[] = [];
    let size = 0;
    const counted = {
      atomic: (async (fn, options) => {
        size = 0;
        const out = await core.storage.atomic(fn, options);
        sizes.push(size);
        return out;
      }) as typeof core.storage.atomic,
    };
    const writes = createGroupCommit(counted);
    const paths = Array.from({ length: 2 * MAX_GROUP + 5 }, (_, i) => `/n${String(i).padStart(3, '0')}.md`);
    const results = await Promise.all(
      paths.map((path) => writes.run((tx) => (size++, core.service.operationsOn(tx).createMemory(core.caller, store.id, { path, content: path })))),
    );
    expect(results.map((m) => m.path)).toEqual(paths);
    expect(sizes).toEqual([MAX_GROUP, MAX_GROUP, 5]);
    const versions = (await core.service.listVersions(core.caller, store.id, versionQuery({ limit: 100 }))).data;
    expect(versions.map((v) => v.path)).toEqual([...paths].reverse());
  });

  it('a refused write rejects with its own error and rolls back alone; the rest of its group commits', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/taken.md': 'first' });
    const writes = createGroupCommit(core.storage);
    const outcomes = await Promise.allSettled([
      writes.run((tx) => core.service.operationsOn(tx).createMemory(core.caller, store.id, { path: '/one.md', content: '1' })),
      writes.run(async (tx) => {
        await core.service.operationsOn(tx).createMemory(core.caller, store.id, { path: '/half.md', content: 'written, then refused' });
        return core.service.operationsOn(tx).createMemory(core.caller, store.id, { path: '/taken.md', content: 'again' });
      }),
      writes.run((tx) => core.service.operationsOn(tx).createMemory(core.caller, store.id, { path: '/two.md', content: '2' })),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const refused = outcomes[1] as PromiseRejectedResult;
    expect(await codeOf(() => { throw refused.reason; })).toBe('path_conflict');
    expect(await readTree(core.service, core.caller, store.id)).toEqual({ '/one.md': '1', '/taken.md': 'first', '/two.md': '2' });
  });

  it('writes that arrive while a group commits wait for it and then commit together as the next group', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, {});
    // The real storage; each outermost transaction counted (a group is one).
    let groups = 0;
    const counted = { atomic: ((fn, options) => { groups++; return core.storage.atomic(fn, options); }) as typeof core.storage.atomic };
    const writes = createGroupCommit(counted);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const create = (path: string) => (tx: Parameters<Parameters<typeof writes.run>[0]>[0]) => core.service.operationsOn(tx).createMemory(core.caller, store.id, { path, content: path });
    const first = writes.run(async (tx) => {
      await held;
      return create('/first.md')(tx);
    });
    // Three writes in three later turns, all while the first group is still open.
    const later: Promise<unknown>[] = [];
    for (const path of ['/a.md', '/b.md', '/c.md']) {
      await new Promise((r) => setImmediate(r));
      later.push(writes.run(create(path)));
    }
    release();
    await Promise.all([first, ...later]);
    expect(groups).toBe(2);
    expect(Object.keys(await readTree(core.service, core.caller, store.id)).sort()).toEqual(['/a.md', '/b.md', '/c.md', '/first.md']);
  });

  it('nothing settles before the group commits', async () => {
    // Inline reads: the first readTree must read in this turn, before the group runs.
    const core = await openCore({ readers: 0 });
    const store = await seedStore(core.service, core.caller, {});
    const writes = createGroupCommit(core.storage);
    let settled = false;
    const pending = writes.run((tx) => core.service.operationsOn(tx).createMemory(core.caller, store.id, { path: '/x.md', content: 'x' })).then(() => (settled = true));
    // Still this turn: the write has not even run, so there is nothing to report yet.
    expect(settled).toBe(false);
    expect(await readTree(core.service, core.caller, store.id)).toEqual({});
    await pending;
    expect(settled).toBe(true);
    expect(await readTree(core.service, core.caller, store.id)).toEqual({ '/x.md': 'x' });
  });

  it('a redaction inside a group still truncates the WAL, after the group has committed', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/secret.md': 'password: hunter2' });
    const memory = (await core.service.listMemories(core.caller, store.id, memoryQuery())).data[0]!;
    if (memory.type !== 'memory') throw new Error('expected a memory');
    const old = memory.memory.versionId;
    await core.service.updateMemory(core.caller, store.id, memory.memory.id, { content: 'rotated' });
    const writes = createGroupCommit(core.storage);
    await Promise.all([
      writes.run((tx) => core.service.operationsOn(tx).createMemory(core.caller, store.id, { path: '/other.md', content: 'o' })),
      writes.run((tx) => core.service.operationsOn(tx).redactVersion(core.caller, store.id, old)),
    ]);
    expect((await core.service.getVersion(core.caller, store.id, old)).content).toBeNull();
    expect(existsSync(core.file + '-wal') ? statSync(core.file + '-wal').size : 0).toBe(0);
  });

  it('leaves the connection at synchronous=FULL, so writes outside a group still fsync at commit', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, {});
    const writes = createGroupCommit(core.storage);
    await writes.run((tx) => core.service.operationsOn(tx).createMemory(core.caller, store.id, { path: '/g.md', content: 'g' }));
    // 2 is FULL.
    expect(core.storage.readPragma('synchronous')).toBe(2);
  });
});
