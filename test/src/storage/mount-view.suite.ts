/** The mount read model's conformance suite: what a live mount asks on every file operation, and the marks that tell it its answers went stale. */
import { describe, expect, it } from 'vitest';
import { newId } from '../../../src/service/ids.js';
import type { DirectoryNames } from '../../../src/storage/port.js';
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

    it('a memory\'s metadata by id is what getMemory gives less the content, and null for a missing, deleted or expired memory or another store\'s id', async () => {
      const { storage, stamp, now, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const other = await addStore('other');
      const m = await addMemory(s.id, '/a/m.md', 'héllo');
      const { content: _content, ...meta } = (await storage.getMemory(s.id, m.id))!;
      expect(await storage.getMemoryMetaById(s.id, m.id)).toEqual(meta);
      expect(await storage.getMemoryMetaById(s.id, m.id)).toEqual(await storage.getMemoryMetaByPath(s.id, '/a/m.md'));
      expect(await storage.getMemoryMetaById(other.id, m.id)).toBeNull();
      expect(await storage.getMemoryMetaById(s.id, newId('memory'))).toBeNull();
      const gone = await addMemory(s.id, '/gone.md');
      await storage.deleteMemory({ ...stamp(), storeId: s.id, memoryId: gone.id });
      expect(await storage.getMemoryMetaById(s.id, gone.id)).toBeNull();
      // The fixture's clock runs in the past: this memory expired before the adapter's now.
      const expired = await storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/expired.md', content: 'x', expiresAt: now() });
      expect(await storage.getMemory(s.id, expired.id)).toBeNull();
      expect(await storage.getMemoryMetaById(s.id, expired.id)).toBeNull();
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

    it('a names listing gives each entry once with its kind, in readdir\'s order, over a directory of more than 1,024 entries, and leaves out deleted and expired memories as the listing does', async () => {
      const { storage, stamp, now, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      // Path order and name order differ: "notes/" after "notes.md" and "notes-old.md"; UTF-8 puts 😀 after ｅ, UTF-16 before.
      const odd = ['/d/notes.md', '/d/notes/a.md', '/d/notes/b/c.md', '/d/notes-old.md', '/d/ｅ.md', '/d/😀.md', '/d/Z', '/d/a b/x'];
      await storage.atomic(async (tx) => {
        for (const p of odd) await addMemory(s.id, p, 'x', undefined, tx);
        for (let i = 0; i < 1000; i++) await addMemory(s.id, `/d/f${i}.md`, 'x', undefined, tx);
        for (let i = 0; i < 100; i++) for (const leaf of ['one.md', 'two/three.md']) await addMemory(s.id, `/d/sub${i}/${leaf}`, 'x', undefined, tx);
        // Gone: deleted, expired (the fixture's clock runs in the past), and a directory whose only memory expired.
        const gone = await addMemory(s.id, '/d/deleted.md', 'x', undefined, tx);
        await tx.deleteMemory({ ...stamp(), storeId: s.id, memoryId: gone.id });
        for (const path of ['/d/expired.md', '/d/stale/x.md']) await tx.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path, content: 'x', expiresAt: now() });
      });
      const listing = await storage.listDirectory(s.id, '/d');
      const files = listing.files.map((f) => f.path.slice('/d/'.length));
      const expected = [...files, ...listing.dirs].sort();
      expect(expected).toHaveLength(1107);
      expect(expected).not.toContain('deleted.md');
      expect(expected).not.toContain('expired.md');
      expect(expected).not.toContain('stale');
      expect(expected.slice(0, 3)).toEqual(['Z', 'a b', 'f0.md']);
      expect(expected.indexOf('notes')).toBe(expected.indexOf('notes-old.md') - 1);
      expect(expected.indexOf('notes-old.md')).toBe(expected.indexOf('notes.md') - 1);
      expect(expected.slice(-3)).toEqual(['sub99', '😀.md', 'ｅ.md']);
      const kindOf = (name: string) => (files.includes(name) ? 1 : 2);

      // Names alone; names past the first 5 entries read whole; a listing when the directory is small enough.
      for (const answer of [await storage.listDirectoryNames(s.id, '/d'), await storage.listDirectoryNames(s.id, '/d', 5)]) {
        expect('names' in answer).toBe(true);
        const { names, kinds } = answer as DirectoryNames;
        expect(names).toEqual(expected);
        expect([...kinds]).toEqual(expected.map(kindOf));
      }
      expect(await storage.listDirectoryNames(s.id, '/d', 1107)).toEqual(listing);
      expect(await storage.listDirectoryNames(s.id, '/d/notes', 2)).toEqual(await storage.listDirectory(s.id, '/d/notes'));
      const small = (await storage.listDirectoryNames(s.id, '/d/notes', 1)) as DirectoryNames;
      expect([small.names, [...small.kinds]]).toEqual([['a.md', 'b'], [1, 2]]);
      const none = (await storage.listDirectoryNames(s.id, '/nothing')) as DirectoryNames;
      expect([none.names, [...none.kinds]]).toEqual([[], []]);
      expect(await storage.listDirectoryNames(s.id, '/nothing', 0)).toEqual({ files: [], dirs: [] });
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

    it('the count of this process\'s writes moves by one for each write call or transaction, however many rows it wrote, and not for reads', async () => {
      const { storage, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a');
      const count = storage.ownWriteCount();
      await storage.getMemoryMetaByPath(s.id, '/a');
      await storage.listDirectory(s.id, '/');
      expect(storage.ownWriteCount()).toBe(count);
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'new' });
      expect(storage.ownWriteCount()).toBe(count + 1);
      await storage.atomic(async (tx) => {
        for (const p of ['/b', '/c', '/d']) await addMemory(s.id, p, 'x', undefined, tx);
        expect(tx.ownWriteCount()).toBe(count + 1);
      });
      expect(storage.ownWriteCount()).toBe(count + 2);
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
