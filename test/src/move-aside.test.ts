/**
 * A directory move on a file database with reader threads runs on a reader thread's writable
 * connection (sqlite/readers.ts, port-view.ts): the same rows as on the serving connection, the
 * same refusals, point reads answered while it runs, and its commit counted as this process's own
 * write, not another process's (sqlite/changes.ts `ownCommitAside`).
 */
import { describe, expect, it } from 'vitest';
import { openCore, seedStore, sessionCaller } from '../helpers/core.js';

const LOOK_PAST_MS = 150; // past changes.ts OUTSIDE_CHECK_MS, so the next mark reads data_version

describe('a directory move made on a reader thread', () => {
  it('moves every memory as the serving connection would, and its commit moves the own write mark, not the outside one', async () => {
    const core = await openCore({ readers: 2 });
    const tree = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`/d/sub/n${i}.md`, `note ${i}`]));
    const store = await seedStore(core.service, core.caller, { ...tree, '/keep.md': 'keep' });
    const mount = sessionCaller(core, 'sesn_mover');
    await new Promise((r) => setTimeout(r, LOOK_PAST_MS));
    const outside = () => core.storage.changeMark() - core.storage.ownWriteMark();
    const outsideBefore = outside();
    const ownBefore = core.storage.ownWriteMark();

    expect(await core.service.moveTree(mount, store.id, '/d', '/e')).toBe(50);

    expect(core.storage.ownWriteMark()).toBeGreaterThan(ownBefore);
    await new Promise((r) => setTimeout(r, LOOK_PAST_MS));
    expect(outside()).toBe(outsideBefore);
    const moved = await core.storage.getMemoryByPath(store.id, '/e/sub/n7.md');
    expect(moved?.content).toBe('note 7');
    expect(await core.storage.getMemoryByPath(store.id, '/d/sub/n7.md')).toBeNull();
    const versions = await core.storage.listVersions(store.id, {
      memoryId: moved!.id, operation: null, sessionId: null, apiKeyId: null, serviceAccountId: null,
      createdGte: null, createdLte: null, limit: 100, page: null, view: 'basic',
    });
    expect(versions.data.map((v) => [v.operation, v.path, v.createdBy])).toEqual([
      ['modified', '/e/sub/n7.md', { type: 'session_actor', sessionId: 'sesn_mover' }],
      ['created', '/d/sub/n7.md', core.caller.actor],
    ]);
  });

  it('refuses a move onto a path a memory holds, as the serving connection does, and leaves every memory where it was', async () => {
    const core = await openCore({ readers: 2 });
    const store = await seedStore(core.service, core.caller, { '/d/a.md': 'a', '/d/b.md': 'b', '/e/b.md': 'taken' });
    const mount = sessionCaller(core, 'sesn_mover');
    await expect(core.service.moveTree(mount, store.id, '/d', '/e')).rejects.toMatchObject({ code: 'path_conflict' });
    expect((await core.storage.getMemoryByPath(store.id, '/d/a.md'))?.content).toBe('a');
    expect((await core.storage.getMemoryByPath(store.id, '/e/b.md'))?.content).toBe('taken');
    expect(await core.storage.getMemoryByPath(store.id, '/e/a.md')).toBeNull();
  });

  it('answers point reads while it runs and holds writes back until it has committed', async () => {
    const core = await openCore({ readers: 2 });
    const store = await seedStore(core.service, core.caller, { '/probe.md': 'probe' });
    const now = new Date().toISOString();
    core.storage.importWrites(store.id, Array.from({ length: 3000 }, (_, i) => ({
      memoryId: core.service.ids('memory'), operation: 'created' as const, path: `/d/n${i}.md`, content: `note ${i}`,
      versionId: core.service.ids('version'), now, actor: core.caller.actor,
    })));
    const mount = sessionCaller(core, 'sesn_mover');
    const done: string[] = [];
    const move = core.service.moveTree(mount, store.id, '/d', '/e').then(() => done.push('move'));
    // The move's own turns come first (a few microtasks, then a reader thread at work for longer).
    await new Promise((r) => setTimeout(r, 20));
    const read = core.storage.getMemoryByPath(store.id, '/d/n1.md').then((m) => done.push(`read ${m?.path}`));
    const write = core.service.createMemory(core.caller, store.id, { path: '/later.md', content: 'later' }).then(() => done.push('write'));
    await Promise.all([move, read, write]);
    // The read saw the store as it was; the write waited for the move's commit.
    expect(done).toEqual(['read /d/n1.md', 'move', 'write']);
  });
});
