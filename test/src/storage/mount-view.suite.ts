/** The mount read model's conformance suite: what a live mount asks on every file operation, and the marks that tell it its answers went stale. */
import { describe, expect, it } from 'vitest';
import { newId } from '../../../src/service/ids.js';
import { fixture, type MakeStorage } from './fixture.js';

export function runMountViewSuite(makeStorage: MakeStorage): void {
  describe('the mount read model', () => {
    it('a directory listing gives direct files and implied subdirectories', async () => {
      const { storage, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      for (const p of ['/top.md', '/a/b/c.md', '/a/b/d.md', '/a/e.md', '/a-x/f.md']) await addMemory(s.id, p);
      const root = await storage.listDirectory(s.id, '/');
      expect(root.files.map((f) => f.path)).toEqual(['/top.md']);
      expect(root.dirs).toEqual(['a-x', 'a']);
      const a = await storage.listDirectory(s.id, '/a');
      expect(a.files.map((f) => f.path)).toEqual(['/a/e.md']);
      expect(a.dirs).toEqual(['b']);
      expect(await storage.hasMemoriesUnder(s.id, '/a')).toBe(true);
      expect(await storage.hasMemoriesUnder(s.id, '/a/b')).toBe(true);
      expect(await storage.hasMemoriesUnder(s.id, '/a/e.md')).toBe(false);
      expect(await storage.hasMemoriesUnder(s.id, '/nothing')).toBe(false);
      expect(await storage.hasMemoriesUnder(s.id, '/')).toBe(true);
    });

    it('a file read gets the content as UTF-8 bytes with the metadata, and a missing path gets null', async () => {
      const { storage, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/é.md', 'héllo');
      const { content: _content, ...meta } = m;
      const read = await storage.getMemoryBytesByPath(s.id, '/é.md');
      expect(read).toEqual({ ...meta, bytes: Buffer.from('héllo', 'utf8') });
      expect(await storage.getMemoryBytesByPath(s.id, '/missing')).toBeNull();
      expect(await storage.getMemoryMetaByPath(s.id, '/missing')).toBeNull();
    });

    it('an empty memory reads as zero bytes', async () => {
      const { storage, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      await addMemory(s.id, '/empty', '');
      expect((await storage.getMemoryBytesByPath(s.id, '/empty'))?.bytes).toEqual(Buffer.alloc(0));
    });

    it('a directory listing with a limit stops there and says it was cut short', async () => {
      const { storage, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      for (const p of ['/a', '/b', '/c/d', '/e']) await addMemory(s.id, p);
      expect(await storage.listDirectory(s.id, '/', 3)).toMatchObject({ dirs: ['c'], truncated: true });
      expect((await storage.listDirectory(s.id, '/', 3)).files.map((f) => f.path)).toEqual(['/a', '/b']);
      expect((await storage.listDirectory(s.id, '/', 4)).truncated).toBeUndefined();
      expect(await storage.listDirectory(s.id, '/nothing')).toEqual({ files: [], dirs: [] });
    });

    it('the read model is per store: another store\'s memories are not seen', async () => {
      const { storage, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const other = await addStore('other');
      await addMemory(s.id, '/a/b');
      expect(await storage.getMemoryMetaByPath(other.id, '/a/b')).toBeNull();
      expect(await storage.hasMemoriesUnder(other.id, '/a')).toBe(false);
      expect(await storage.listDirectory(other.id, '/')).toEqual({ files: [], dirs: [] });
    });

    it('the change marks move after a write of this process and stay put after reads', async () => {
      const { storage, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a');
      const mark = storage.changeMark();
      const own = storage.ownWriteMark();
      await storage.getMemoryMetaByPath(s.id, '/a');
      await storage.listDirectory(s.id, '/');
      expect(storage.changeMark()).toBe(mark);
      expect(storage.ownWriteMark()).toBe(own);
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'new' });
      expect(storage.changeMark()).toBeGreaterThan(mark);
      expect(storage.ownWriteMark()).toBeGreaterThan(own);
    });

    it('a listener of the change mark hears each write by the time it returns, and nothing after it unsubscribes', async () => {
      // The binding's kept stats are void from that moment on (fs/kernel-stats.ts): a later hearing would let one stale stat out.
      const { storage, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a');
      let heard = 0;
      const stop = storage.onMarkMoved!(() => (heard += 1));
      await storage.getMemoryMetaByPath(s.id, '/a');
      expect(heard).toBe(0);
      const mark = storage.changeMark();
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'new' });
      expect(heard).toBeGreaterThan(0);
      expect(storage.changeMark()).toBeGreaterThan(mark);
      stop();
      const after = heard;
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'newer' });
      expect(heard).toBe(after);
    });

    it('the next expiry is the earliest one after the given time, within the store', async () => {
      const { storage, stamp, addStore } = await fixture(makeStorage);
      const s = await addStore();
      const other = await addStore('other');
      const write = (storeId: string, path: string, expiresAt: string) =>
        storage.createMemory({ ...stamp(), storeId, memoryId: newId('memory'), path, content: 'x', expiresAt });
      expect(await storage.nextExpiry(s.id, '2999-01-01T00:00:00.000Z')).toBeNull();
      await write(s.id, '/late', '3001-01-01T00:00:00.000Z');
      await write(s.id, '/soon', '3000-01-01T00:00:00.000Z');
      await write(other.id, '/sooner', '2999-06-01T00:00:00.000Z');
      expect(await storage.nextExpiry(s.id, '2999-01-01T00:00:00.000Z')).toBe('3000-01-01T00:00:00.000Z');
      expect(await storage.nextExpiry(s.id, '3000-01-01T00:00:00.000Z')).toBe('3001-01-01T00:00:00.000Z');
      expect(await storage.nextExpiry(s.id, '3001-01-01T00:00:00.000Z')).toBeNull();
    });
  });
}
