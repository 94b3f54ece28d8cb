/**
 * The mount's storage view (issue 5) over a real SQLite file, without FUSE: it answers from what it
 * kept, lists a busy directory once, never keeps a huge listing, and forgets everything on a write,
 * except across a save of its own mount when that save is all that changed (issue 12).
 */
import { describe, expect, it, vi } from 'vitest';
import Fuse from '../../fs/binding/fuse.js';
import { ContentCache } from '../../fs/content-cache.js';
import { toErrno } from '../../fs/errno.js';
import { createContext } from '../../fs/context.js';
import { LocalBudget } from '../../fs/local-budget.js';
import { StorageView } from '../../fs/storage-view.js';
import { draftContent, resizeDraft, writeDraft } from '../../fs/handles.js';
import { commit, releaseDraft } from '../../fs/save-points.js';
import { hasChildren, loadDraft } from '../../fs/tree.js';
import { createService } from '../../src/service/service.js';
import type { DirectoryNames } from '../../src/storage/port.js';
import { openSqliteStorage } from '../../src/storage/sqlite/open.js';
import { openCore, seedStore, type Core } from '../helpers/core.js';

/** The view's calls into storage from now on, by method name. */
function countQueries(core: Core): Record<string, number> {
  const calls: Record<string, number> = {};
  for (const name of ['getStoreById', 'getMemoryMetaByPath', 'listDirectory', 'listDirectoryNames', 'hasMemoriesUnder', 'nextExpiry'] as const) {
    const real = core.storage[name].bind(core.storage) as (...a: unknown[]) => unknown;
    vi.spyOn(core.storage, name).mockImplementation(((...a: unknown[]) => {
      calls[name] = (calls[name] ?? 0) + 1;
      return real(...a);
    }) as never);
  }
  return calls;
}

describe('storage view', () => {
  it('after 8 missed lookups answers a directory from one listing, and still sees the next write there', async () => {
    const core = await openCore();
    const tree: Record<string, string> = {};
    for (let i = 0; i < 20; i++) tree[`/d/f${i}.md`] = `file ${i}`;
    const store = await seedStore(core.service, core.caller, tree);
    const view = new StorageView(core.service.mountReader(store.id), core.service.clock);
    for (let i = 0; i < 20; i++) expect((await view.meta(`/d/f${i}.md`))?.contentSizeBytes).toBe(`file ${i}`.length);
    expect(await view.meta('/d/absent.md')).toBeNull();
    expect(await view.hasMemoriesUnder('/d')).toBe(true);

    await core.service.createMemory(core.caller, store.id, { path: '/d/absent.md', content: 'now here' });
    await core.service.updateMemory(core.caller, store.id, (await view.meta('/d/f3.md'))!.id, { content: 'longer than before' });
    expect((await view.meta('/d/absent.md'))?.contentSizeBytes).toBe(8);
    expect((await view.meta('/d/f3.md'))?.contentSizeBytes).toBe(18);
    expect((await view.listDirectory('/d')).files).toHaveLength(21);
  });

  it('lists a directory of more than 4,096 entries whole, and still answers lookups in it', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, {});
    await core.storage.batch(async (tx) => {
      for (let i = 0; i < 4100; i++) await core.service.operationsOn(tx).createMemory(core.caller, store.id, { path: `/big/m${String(i).padStart(4, '0')}.md`, content: String(i) });
    });
    const view = new StorageView(core.service.mountReader(store.id), core.service.clock);
    expect((await view.listDirectory('/big')).files).toHaveLength(4100);
    for (let i = 0; i < 12; i++) expect((await view.meta(`/big/m${String(i * 300).padStart(4, '0')}.md`))?.contentSizeBytes).toBe(String(i * 300).length);
    expect(await view.meta('/big/none.md')).toBeNull();
  });

  it('reads a directory of more than 4,096 entries for a readdir as its sorted names alone, each time, and its lookups as point queries; a smaller one is listed and kept', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/small/b.md': 'b', '/small/a/x.md': 'x' });
    const names: string[] = [];
    await core.storage.batch(async (tx) => {
      for (let i = 0; i < 4100; i++) {
        // Path order is not name order: "m0010" (a directory, "m0010/") comes after "m0010.md" and "m0010-x.md" there.
        const name = i % 10 === 0 ? `m${String(i).padStart(4, '0')}` : `m${String(i - (i % 10)).padStart(4, '0')}${i % 10 === 1 ? '.md' : `-${i % 10}.md`}`;
        names.push(name);
        await core.service.operationsOn(tx).createMemory(core.caller, store.id, { path: `/big/${name}${i % 10 === 0 ? '/inner.md' : ''}`, content: String(i) });
      }
    });
    const view = new StorageView(core.service.mountReader(store.id), core.service.clock);
    const calls = countQueries(core);
    view.hide('/big/m0000.md');
    for (let round = 1; round <= 2; round++) {
      const big = (await view.readdir('/big')) as DirectoryNames;
      expect(big.names).toEqual(names.filter((n) => n !== 'm0000.md').sort());
      expect(big.names.slice(0, 3)).toEqual(['m0000', 'm0000-2.md', 'm0000-3.md']);
      expect([...big.kinds.slice(0, 3)]).toEqual([2, 1, 1]);
      expect(calls).toEqual({ listDirectoryNames: round, nextExpiry: 1 });
    }
    for (let i = 1; i <= 12; i++) expect((await view.meta(`/big/m${String(i * 300).padStart(4, '0')}.md`))?.contentSizeBytes).toBe(String(i * 300 + 1).length);
    expect(calls).toEqual({ listDirectoryNames: 2, nextExpiry: 1, getMemoryMetaByPath: 12 });
    const small = await view.readdir('/small');
    expect(small).toMatchObject({ files: [{ path: '/small/b.md' }], dirs: ['a'] });
    expect(await view.readdir('/small')).toEqual(small);
    expect(calls.listDirectoryNames).toBe(3);
  });

  it('after a write, a readdir of a directory it found big asks for its names alone at once, with no first look at its first entries; one that shrank is listed and kept again', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, {});
    const ids: string[] = [];
    await core.storage.batch(async (tx) => {
      for (let i = 0; i < 4100; i++) ids.push((await core.service.operationsOn(tx).createMemory(core.caller, store.id, { path: `/big/m${i}.md`, content: String(i) })).id);
    });
    const view = new StorageView(core.service.mountReader(store.id), core.service.clock);
    // What each readdir asked: up to how many entries it would take as a listing (undefined: names alone).
    const asked: (number | undefined)[] = [];
    const real = core.storage.listDirectoryNames.bind(core.storage);
    vi.spyOn(core.storage, 'listDirectoryNames').mockImplementation(((storeId: string, dir: string, upTo?: number) => {
      asked.push(upTo);
      return real(storeId, dir, upTo);
    }) as never);
    expect(((await view.readdir('/big')) as DirectoryNames).names).toHaveLength(4100);
    await core.service.createMemory(core.caller, store.id, { path: '/big/new.md', content: 'new' });
    expect(((await view.readdir('/big')) as DirectoryNames).names).toHaveLength(4101);
    expect(asked).toEqual([4096, undefined]);

    // Shrunk to 101 entries: the names once more (asked as big), then a listing, kept.
    await core.storage.batch(async (tx) => {
      for (const id of ids.slice(100)) await core.service.operationsOn(tx).deleteMemory(core.caller, store.id, id);
    });
    expect(((await view.readdir('/big')) as DirectoryNames).names).toHaveLength(101);
    const listed = await view.readdir('/big');
    expect('files' in listed && listed.files).toHaveLength(101);
    expect(await view.readdir('/big')).toBe(listed);
    expect(asked).toEqual([4096, undefined, undefined, 4096]);
  });

  it('rmdir\'s emptiness check of a directory of more than 4,096 entries reads its names alone, not every entry\'s metadata', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/gone/old.md': 'old' });
    await core.storage.batch(async (tx) => {
      for (let i = 0; i < 4100; i++) await core.service.operationsOn(tx).createMemory(core.caller, store.id, { path: `/big/m${i}.md`, content: String(i) });
    });
    const ctx = createContext({
      storeId: store.id, service: core.service, actor: { type: 'session_actor', sessionId: 'sesn_rmdir' },
      log: () => {}, readOnly: false, contents: new ContentCache(1 << 20), serverLocal: new LocalBudget(1 << 20, 'MNEMO_LOCAL_MAX_BYTES'),
      onOperation: undefined, mountLocalMaxBytes: 1 << 20,
    });
    const calls = countQueries(core);
    expect(await hasChildren(ctx, '/big')).toBe(true);
    expect(calls.listDirectory ?? 0).toBe(0);
    expect(calls.listDirectoryNames).toBe(1);
    expect(await hasChildren(ctx, '/gone')).toBe(true);
    expect(await hasChildren(ctx, '/none')).toBe(false);
  });

  it('an append-only save reads no memory from storage first: the service puts the appended bytes after the newest text, an API write that landed since included', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/log.md': 'start\n' });
    const ctx = createContext({
      storeId: store.id, service: core.service, actor: { type: 'session_actor', sessionId: 'sesn_append' },
      log: () => {}, readOnly: false, contents: new ContentCache(1 << 20), serverLocal: new LocalBudget(1 << 20, 'MNEMO_LOCAL_MAX_BYTES'),
      onOperation: undefined, mountLocalMaxBytes: 1 << 20,
    });
    const reads = { memory: 0 };
    const getMemory = core.storage.getMemory.bind(core.storage);
    vi.spyOn(core.storage, 'getMemory').mockImplementation((...a) => {
      reads.memory += 1;
      return getMemory(...a);
    });
    for (const [round, landed] of [[1, null], [2, 'start\nmine 1\nfrom the API\n']] as const) {
      const d = (await loadDraft(ctx, '/log.md'))!;
      const line = Buffer.from(`mine ${round}\n`);
      writeDraft(d, line, line.length, d.size);
      // The draft read the text before this write: the save must keep it, and put its line after it.
      if (landed) await core.service.updateMemory(core.caller, store.id, d.memoryId, { content: landed });
      reads.memory = 0;
      await commit(ctx, d);
      expect(reads.memory).toBe(0);
      const expected = round === 1 ? 'start\nmine 1\n' : 'start\nmine 1\nfrom the API\nmine 2\n';
      expect(draftContent(d).toString()).toBe(expected);
      expect((await core.service.getMemory(core.caller, store.id, d.memoryId)).content).toBe(expected);
      ctx.drafts.detach(d);
    }
    // Past 102,400 bytes once put after the newest text: refused (EFBIG at close), and nothing stored.
    const d = (await loadDraft(ctx, '/log.md'))!;
    writeDraft(d, Buffer.from('mine 3\n'), 7, d.size);
    const big = 'x'.repeat(102_400 - 3);
    await core.service.updateMemory(core.caller, store.id, d.memoryId, { content: big });
    await expect(commit(ctx, d)).rejects.toMatchObject({ code: 'content_too_large' });
    expect(toErrno(await commit(ctx, d).catch((err: unknown) => err))).toBe(Fuse.EFBIG);
    expect(reads.memory).toBe(0);
    expect((await core.service.getMemory(core.caller, store.id, d.memoryId)).content).toBe(big);
  });

  it('an O_TRUNC open that wrote nothing reads the memory\'s row alone at its release, no text: saved empty if nothing changed, given way to a write or a delete made meanwhile', async () => {
    const core = await openCore();
    const text = 'stored text '.repeat(4000);
    const store = await seedStore(core.service, core.caller, { '/kept.md': text, '/written.md': text, '/deleted.md': text });
    const ctx = createContext({
      storeId: store.id, service: core.service, actor: { type: 'session_actor', sessionId: 'sesn_trunc' },
      log: () => {}, readOnly: false, contents: new ContentCache(1 << 20), serverLocal: new LocalBudget(1 << 20, 'MNEMO_LOCAL_MAX_BYTES'),
      onOperation: undefined, mountLocalMaxBytes: 1 << 20,
    });
    const reads: Record<string, number> = {};
    for (const name of ['getMemory', 'getMemoryMetaById'] as const) {
      const real = core.storage[name].bind(core.storage) as (...a: unknown[]) => unknown;
      vi.spyOn(core.storage, name).mockImplementation(((...a: unknown[]) => {
        reads[name] = (reads[name] ?? 0) + 1;
        return real(...a);
      }) as never);
    }
    /** Opens `path` with O_WRONLY | O_TRUNC as ops.ts openDraft does, runs `meanwhile`, then closes it: the kernel's release. */
    const truncate = async (path: string, meanwhile: (id: string) => Promise<unknown>) => {
      const d = (await loadDraft(ctx, path))!;
      ctx.drafts.set(path, d);
      const fh = ctx.handles.add(d, 0o1 | 0o1000);
      resizeDraft(d, 0);
      ctx.handles.get(fh).changed = true;
      await meanwhile(d.memoryId);
      for (const k of Object.keys(reads)) delete reads[k];
      await releaseDraft(ctx, ctx.handles.remove(fh));
      expect(reads).toEqual({ getMemoryMetaById: 1 });
      return d.memoryId;
    };
    const kept = await truncate('/kept.md', async () => {});
    expect((await core.service.getMemory(core.caller, store.id, kept)).content).toBe('');
    const written = await truncate('/written.md', (id) => core.service.updateMemory(core.caller, store.id, id, { content: 'from the API' }));
    expect((await core.service.getMemory(core.caller, store.id, written)).content).toBe('from the API');
    const deleted = await truncate('/deleted.md', (id) => core.service.deleteMemory(core.caller, store.id, id));
    await expect(core.service.getMemory(core.caller, store.id, deleted)).rejects.toMatchObject({ code: 'not_found' });
    expect(await core.service.mountReader(store.id).meta('/deleted.md')).toBeNull();
  });

  it('names a directory\'s implied subdirectories for its nlink, and gives none for a directory of more than 4,096 entries', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/d/a/x.md': 'x', '/d/b/c/y.md': 'y', '/d/z.md': 'z' });
    await core.storage.batch(async (tx) => {
      for (let i = 0; i < 4100; i++) await core.service.operationsOn(tx).createMemory(core.caller, store.id, { path: `/big/m${String(i).padStart(4, '0')}.md`, content: String(i) });
    });
    const view = new StorageView(core.service.mountReader(store.id), core.service.clock);
    expect(await view.subdirs('/d')).toEqual(['a', 'b']);
    expect(await view.subdirs('/d/b')).toEqual(['c']);
    expect(await view.subdirs('/big')).toBeNull();
    expect((await view.meta('/big/m0001.md'))?.contentSizeBytes).toBe(1);
    await core.service.createMemory(core.caller, store.id, { path: '/d/e/new.md', content: 'n' });
    expect(await view.subdirs('/d')).toEqual(['a', 'b', 'e']);
  });

  it('follows the store row: archiving shows at the next look', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, {});
    const view = new StorageView(core.service.mountReader(store.id), core.service.clock);
    expect((await view.store())?.archivedAt).toBeNull();
    await core.service.archiveStore(core.caller, store.id);
    expect((await view.store())?.archivedAt).not.toBeNull();
    await core.service.deleteStore(core.caller, store.id);
    expect(await view.store()).toBeNull();
  });

  it('keeps its answers across a save of its own, with the saved file in them, and asks storage nothing more', async () => {
    const core = await openCore();
    const tree: Record<string, string> = {};
    for (let i = 0; i < 10; i++) tree[`/d/f${i}.md`] = `file ${i}`;
    const store = await seedStore(core.service, core.caller, tree);
    const view = new StorageView(core.service.mountReader(store.id), core.service.clock);
    for (let i = 0; i < 10; i++) await view.meta(`/d/f${i}.md`);
    expect(await view.meta('/d/new.md')).toBeNull();
    expect(await view.meta('/d/sub/deep.md')).toBeNull();
    expect((await view.listDirectory('/')).dirs).toEqual(['d']);
    expect((await view.store())?.id).toBe(store.id);
    const calls = countQueries(core);

    const saveAt = (path: string, content: string) => async () =>
      (await core.service.saveMemoryAt(core.caller, store.id, { path, content, memoryId: core.service.ids('memory') })).memory;
    const created = await view.saved('/d/new.md', saveAt('/d/new.md', 'brand new'));
    await view.saved('/d/f3.md', saveAt('/d/f3.md', 'rewritten, longer'));
    await view.saved('/d/sub/deep.md', saveAt('/d/sub/deep.md', 'below'));

    expect(await view.meta('/d/new.md')).toMatchObject({ id: created.id, versionId: created.versionId, contentSizeBytes: 9 });
    expect((await view.meta('/d/f3.md'))?.contentSizeBytes).toBe(17);
    expect((await view.meta('/d/sub/deep.md'))?.contentSizeBytes).toBe(5);
    expect(await view.hasMemoriesUnder('/d/sub')).toBe(true);
    const d = await view.listDirectory('/d');
    expect(d.files.map((f) => f.path).sort()).toEqual([...Object.keys(tree), '/d/new.md'].sort());
    expect(d.dirs).toEqual(['sub']);
    // A name the kept listing of /d has as a file (or not at all) is no directory: no query either.
    expect(await view.hasMemoriesUnder('/d/f7.md')).toBe(false);
    expect(await view.hasMemoriesUnder('/d/absent')).toBe(false);
    expect((await view.store())?.id).toBe(store.id);
    expect(calls).toEqual({});
    // The same answers storage gives from scratch.
    const fresh = new StorageView(core.service.mountReader(store.id), core.service.clock);
    expect(await view.meta('/d/new.md')).toEqual(await fresh.meta('/d/new.md'));
    expect(await view.meta('/d/f3.md')).toEqual(await fresh.meta('/d/f3.md'));
  });

  it('drops its answers after a save of its own when another process wrote meanwhile', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/d/a.md': 'a' });
    const view = new StorageView(core.service.mountReader(store.id), core.service.clock);
    expect(await view.meta('/d/b.md')).toBeNull();
    // Another connection (a CLI beside the server) writes; this process notices within 100 ms.
    const other = openSqliteStorage(core.file);
    try {
      await createService({ storage: other }).createMemory(core.caller, store.id, { path: '/d/b.md', content: 'from the CLI' });
    } finally {
      await other.close();
    }
    await view.saved('/d/a.md', async () => {
      // The save takes long enough that the check for other processes falls due before it returns.
      for (const until = Date.now() + 120; Date.now() < until; );
      return (await core.service.saveMemoryAt(core.caller, store.id, { path: '/d/a.md', content: 'mine', memoryId: core.service.ids('memory') })).memory;
    });
    expect((await view.meta('/d/b.md'))?.contentSizeBytes).toBe(12);
  });

  it('drops its answers after a save of its own when a write of this process to the store landed first, while the save waited at the writer gate', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/d/a.md': 'a' });
    const view = new StorageView(core.service.mountReader(store.id), core.service.clock);
    expect(await view.meta('/d/b.md')).toBeNull();
    expect((await view.listDirectory('/d')).files.map((f) => f.path)).toEqual(['/d/a.md']);
    // Another transaction holds the writer gate; an API write queues behind it, then the view's save.
    let release!: () => void;
    const held = core.storage.atomic(() => new Promise<void>((resolve) => (release = resolve)));
    const api = core.service.createMemory(core.caller, store.id, { path: '/d/b.md', content: 'from the API' });
    // An API write waits one turn for the other writes of its group (service/group-commit.ts).
    await new Promise((resolve) => setImmediate(resolve));
    const saved = view.saved('/d/a.md', async () =>
      (await core.service.saveMemoryAt(core.caller, store.id, { path: '/d/a.md', content: 'mine', memoryId: core.service.ids('memory') })).memory);
    release();
    await Promise.all([held, api, saved]);
    expect((await view.meta('/d/b.md'))?.contentSizeBytes).toBe(12);
    expect((await view.listDirectory('/d')).files.map((f) => f.path).sort()).toEqual(['/d/a.md', '/d/b.md']);
  });

  it('drops its answers after a save of its own when a bulk import of this process wrote meanwhile: the import counts as one write', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/d/a.md': 'a' });
    const view = new StorageView(core.service.mountReader(store.id), core.service.clock);
    expect(await view.meta('/d/b.md')).toBeNull();
    expect((await view.listDirectory('/d')).files.map((f) => f.path)).toEqual(['/d/a.md']);
    const count = core.storage.ownWriteCount();
    await view.saved('/d/a.md', async () => {
      core.storage.importWrites(store.id, [
        { memoryId: core.service.ids('memory'), operation: 'created', path: '/d/b.md', content: 'imported', versionId: core.service.ids('version'), now: core.service.clock(), actor: core.caller.actor },
      ]);
      return (await core.service.saveMemoryAt(core.caller, store.id, { path: '/d/a.md', content: 'mine', memoryId: core.service.ids('memory') })).memory;
    });
    expect((await view.meta('/d/b.md'))?.contentSizeBytes).toBe(8);
    expect((await view.listDirectory('/d')).files.map((f) => f.path).sort()).toEqual(['/d/a.md', '/d/b.md']);
    expect(core.storage.ownWriteCount()).toBe(count + 2);
  });

  it('drops its answers when the saved memory is no longer at the path it saved (renamed through the API)', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/d/a.md': 'a' });
    const view = new StorageView(core.service.mountReader(store.id), core.service.clock);
    const id = (await view.meta('/d/a.md'))!.id;
    expect(await view.meta('/d/moved.md')).toBeNull();
    await view.saved('/d/a.md', async () => {
      // Renamed before the save by id commits (awaited: an update no longer reads the store before
      // its write, so a rename left to race it could now commit after it).
      await core.service.moveMemory(core.caller, store.id, id, '/d/moved.md');
      return await core.service.updateMemory(core.caller, store.id, id, { content: 'saved by id' });
    });
    expect(await view.meta('/d/a.md')).toBeNull();
    expect((await view.meta('/d/moved.md'))?.contentSizeBytes).toBe(11);
  });
});
