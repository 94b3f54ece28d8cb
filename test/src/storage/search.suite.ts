/** The search role's conformance suite: full-text and substring search over a store's live memories. */
import { describe, expect, it } from 'vitest';
import { newId } from '../../../src/service/ids.js';
import type { SearchQuery } from '../../../src/domain/types.js';
import { fixture, type MakeStorage } from './fixture.js';

const searchQ = (q: Partial<SearchQuery> & { q: string }): SearchQuery => ({ mode: 'fts', pathPrefix: '/', limit: 20, page: null, ...q });

export function runSearchSuite(makeStorage: MakeStorage): void {
  describe('search', () => {
    it('full-text search finds a word in the content or the path of this store\'s live memories only', async () => {
      const { storage, stamp, now, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const other = await addStore('other');
      await addMemory(s.id, '/notes/falcon.md', 'about birds');
      await addMemory(s.id, '/b.md', 'a falcon flew by');
      await addMemory(s.id, '/c.md', 'nothing here');
      await addMemory(other.id, '/d.md', 'falcon elsewhere');
      await storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/e.md', content: 'expired falcon', expiresAt: now() });
      const page = await storage.searchMemories(s.id, searchQ({ q: 'falcon' }));
      expect(page.data.map((h) => h.memory.path).sort()).toEqual(['/b.md', '/notes/falcon.md']);
      expect(page.nextPage).toBeNull();
      const under = await storage.searchMemories(s.id, searchQ({ q: 'falcon', pathPrefix: '/notes/' }));
      expect(under.data.map((h) => h.memory.path)).toEqual(['/notes/falcon.md']);
    });

    it('full-text search sees a write at once, and no longer sees a deleted memory', async () => {
      const { storage, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a.md', 'heron');
      expect((await storage.searchMemories(s.id, searchQ({ q: 'heron' }))).data).toHaveLength(1);
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'egret' });
      expect((await storage.searchMemories(s.id, searchQ({ q: 'heron' }))).data).toEqual([]);
      expect((await storage.searchMemories(s.id, searchQ({ q: 'egret' }))).data).toHaveLength(1);
      await storage.deleteMemory({ ...stamp(), storeId: s.id, memoryId: m.id });
      expect((await storage.searchMemories(s.id, searchQ({ q: 'egret' }))).data).toEqual([]);
    });

    it('substring search ignores case and matches inside words, with the match marked in its snippet', async () => {
      const { storage, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      await addMemory(s.id, '/a.md', 'The Kingfisher dives');
      await addMemory(s.id, '/b.md', 'no bird');
      const page = await storage.searchMemories(s.id, searchQ({ q: 'fisher', mode: 'substring' }));
      expect(page.data.map((h) => h.memory.path)).toEqual(['/a.md']);
      expect(page.data[0]!.snippet).toContain('King**fisher**');
      expect(page.data[0]!.score).toBe(0);
    });

    it('a snippet is cut between code points, never inside a surrogate pair, in both modes', async () => {
      const { storage, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      await addMemory(s.id, '/emoji.md', '😀'.repeat(100) + ' pelican');
      await addMemory(s.id, '/long.md', 'x' + '🦩'.repeat(200));
      for (const mode of ['fts', 'substring'] as const) {
        const [hit] = (await storage.searchMemories(s.id, searchQ({ q: 'pelican', mode }))).data;
        expect(hit!.snippet.isWellFormed()).toBe(true);
        expect(hit!.snippet).toMatch(/^…😀+ \*\*pelican\*\*$/u);
      }
      // Matched on the path: the snippet is the content's lead, cut as well.
      const [lead] = (await storage.searchMemories(s.id, searchQ({ q: 'long', mode: 'substring' }))).data;
      expect(lead!.snippet.isWellFormed()).toBe(true);
      expect(lead!.snippet).toBe('x' + '🦩'.repeat(79) + '…');
    });

    it('a substring snippet marks the phrase itself after characters whose lowercase is longer', async () => {
      const { storage, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      await addMemory(s.id, '/a.md', 'İİİ needle here');
      const marked = async (q: string, mode: 'fts' | 'substring') => (await storage.searchMemories(s.id, searchQ({ q, mode }))).data.map((h) => h.snippet);
      expect(await marked('needle', 'substring')).toEqual(['İİİ **needle** here']);
      expect(await marked('NEEDLE H', 'substring')).toEqual(['İİİ **needle h**ere']);
      expect(await marked('needle', 'fts')).toEqual(['İİİ **needle** here']);
    });

    it('a cursor of the other mode is refused, and the message says which mode issued it', async () => {
      const { storage, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      await addMemory(s.id, '/a.md', 'osprey one');
      await addMemory(s.id, '/b.md', 'osprey two');
      const messageOf = (q: SearchQuery) => storage.searchMemories(s.id, q).then(() => 'answered', (err: Error) => err.message);
      const fts = (await storage.searchMemories(s.id, searchQ({ q: 'osprey', limit: 1 }))).nextPage;
      const sub = (await storage.searchMemories(s.id, searchQ({ q: 'osprey', mode: 'substring', limit: 1 }))).nextPage;
      expect(await messageOf(searchQ({ q: 'osprey', mode: 'substring', page: fts }))).toMatch(/^page: a cursor of mode fts, not substring/);
      expect(await messageOf(searchQ({ q: 'osprey', mode: 'fts', page: sub }))).toMatch(/^page: a cursor of mode substring, not fts/);
      expect(await messageOf(searchQ({ q: 'osprey', page: 'page_bogus' }))).toBe('page: not a cursor this server issued');
      expect((await storage.searchMemories(s.id, searchQ({ q: 'osprey', limit: 1, page: fts }))).data).toHaveLength(1);
    });

    it('full-text words joined by punctuation match in any order, as words apart do', async () => {
      const { storage, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      await addMemory(s.id, '/a.md', 'mind the zebra-crossing ahead');
      await addMemory(s.id, '/b.md', 'a zebra, then later a crossing');
      await addMemory(s.id, '/c.md', 'only a zebra');
      const found = async (q: string) => (await storage.searchMemories(s.id, searchQ({ q }))).data.map((h) => h.memory.path).sort();
      for (const q of ['zebra-crossing', 'crossing-zebra', 'crossing zebra', 'zebra/crossing', 'crossing.zebra']) expect(await found(q)).toEqual(['/a.md', '/b.md']);
    });

    it('a query of separators only matches nothing', async () => {
      const { storage, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      await addMemory(s.id, '/a.md', 'words');
      expect((await storage.searchMemories(s.id, searchQ({ q: ' \t ' }))).data).toEqual([]);
    });
  });
}
