/**
 * The mount's storage view (issue 5) over a real SQLite file, without FUSE: it answers from what it
 * kept, lists a busy directory once, never keeps a huge listing, and forgets everything on a write.
 */
import { describe, expect, it } from 'vitest';
import { StorageView } from '../../fs/storage-view.js';
import { openCore, seedStore } from '../helpers/core.js';

describe('storage view', () => {
  it('after 8 missed lookups answers a directory from one listing, and still sees the next write there', () => {
    const core = openCore();
    const tree: Record<string, string> = {};
    for (let i = 0; i < 20; i++) tree[`/d/f${i}.md`] = `file ${i}`;
    const store = seedStore(core.service, core.caller, tree);
    const view = new StorageView(core.service, store.id);
    for (let i = 0; i < 20; i++) expect(view.meta(`/d/f${i}.md`)?.contentSizeBytes).toBe(`file ${i}`.length);
    expect(view.meta('/d/absent.md')).toBeNull();
    expect(view.hasMemoriesUnder('/d')).toBe(true);

    core.service.createMemory(core.caller, store.id, { path: '/d/absent.md', content: 'now here' });
    core.service.updateMemory(core.caller, store.id, view.meta('/d/f3.md')!.id, { content: 'longer than before' });
    expect(view.meta('/d/absent.md')?.contentSizeBytes).toBe(8);
    expect(view.meta('/d/f3.md')?.contentSizeBytes).toBe(18);
    expect(view.listDirectory('/d').files).toHaveLength(21);
  });

  it('lists a directory of more than 4,096 entries whole, and still answers lookups in it', () => {
    const core = openCore();
    const store = seedStore(core.service, core.caller, {});
    core.storage.batch(() => {
      for (let i = 0; i < 4100; i++) core.service.createMemory(core.caller, store.id, { path: `/big/m${String(i).padStart(4, '0')}.md`, content: String(i) });
    });
    const view = new StorageView(core.service, store.id);
    expect(view.listDirectory('/big').files).toHaveLength(4100);
    for (let i = 0; i < 12; i++) expect(view.meta(`/big/m${String(i * 300).padStart(4, '0')}.md`)?.contentSizeBytes).toBe(String(i * 300).length);
    expect(view.meta('/big/none.md')).toBeNull();
  });

  it('names a directory\'s implied subdirectories for its nlink, and gives none for a directory of more than 4,096 entries', () => {
    const core = openCore();
    const store = seedStore(core.service, core.caller, { '/d/a/x.md': 'x', '/d/b/c/y.md': 'y', '/d/z.md': 'z' });
    core.storage.batch(() => {
      for (let i = 0; i < 4100; i++) core.service.createMemory(core.caller, store.id, { path: `/big/m${String(i).padStart(4, '0')}.md`, content: String(i) });
    });
    const view = new StorageView(core.service, store.id);
    expect(view.subdirs('/d')).toEqual(['a', 'b']);
    expect(view.subdirs('/d/b')).toEqual(['c']);
    expect(view.subdirs('/big')).toBeNull();
    expect(view.meta('/big/m0001.md')?.contentSizeBytes).toBe(1);
    core.service.createMemory(core.caller, store.id, { path: '/d/e/new.md', content: 'n' });
    expect(view.subdirs('/d')).toEqual(['a', 'b', 'e']);
  });

  it('follows the store row: archiving shows at the next look', () => {
    const core = openCore();
    const store = seedStore(core.service, core.caller, {});
    const view = new StorageView(core.service, store.id);
    expect(view.store()?.archivedAt).toBeNull();
    core.service.archiveStore(core.caller, store.id);
    expect(view.store()?.archivedAt).not.toBeNull();
    core.service.deleteStore(core.caller, store.id);
    expect(view.store()).toBeNull();
  });
});
