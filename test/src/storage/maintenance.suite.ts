/** The maintenance role's conformance suite: expiry sweeps, search upkeep, the checks of `mnemo check`, and closing. */
import { describe, expect, it } from 'vitest';
import { newId } from '../../../src/service/ids.js';
import { fixture, verQ, type MakeStorage } from './fixture.js';

export function runMaintenanceSuite(makeStorage: MakeStorage): void {
  describe('maintenance', () => {
    it('a fresh storage, and one after every kind of write, passes both checks', async () => {
      const { storage, stamp, actor, now, workspace, addStore, addMemory } = await fixture(makeStorage);
      expect(await storage.integrityCheck()).toEqual([]);
      expect(await storage.domainCheck()).toEqual([]);
      const s = await addStore();
      const a = await addMemory(s.id, '/a/b', 'one');
      await addMemory(s.id, '/c', 'two');
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: a.id, content: 'three', path: '/d' });
      await storage.redactVersion(s.id, a.versionId, actor, now());
      await storage.moveTree({ storeId: s.id, from: '/d', to: '/e', actor, now: now(), versionIds: () => newId('version') });
      const gone = await addStore('gone');
      const g = await addMemory(gone.id, '/g', 'gone soon');
      await storage.updateMemory({ ...stamp(), storeId: gone.id, memoryId: g.id, content: 'going', path: '/h' });
      await storage.deleteStore(workspace.id, gone.id);
      await storage.indexSearchBacklog(1000);
      expect(await storage.integrityCheck()).toEqual([]);
      expect(await storage.domainCheck()).toEqual([]);
      // And at every step of removing the deleted store's rows.
      while (await storage.purgeDeletedStores()) expect(await storage.domainCheck()).toEqual([]);
      expect(await storage.integrityCheck()).toEqual([]);
    });

    it('the expiry sweep deletes every store\'s expired memories with a deleted version each, and says how many', async () => {
      const { storage, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const other = await addStore('other');
      const expire = (storeId: string, path: string, expiresAt: string) =>
        storage.createMemory({ ...stamp(), storeId, memoryId: newId('memory'), path, content: 'x', expiresAt });
      const m = await expire(s.id, '/a', '2026-03-02T00:00:00.000Z');
      await expire(other.id, '/b', '2026-03-02T00:00:00.000Z');
      await expire(s.id, '/later', '2026-03-05T00:00:00.000Z');
      await addMemory(s.id, '/kept');
      expect(await storage.purgeExpiredMemories('2026-03-03T00:00:00.000Z')).toBe(2);
      expect(await storage.purgeExpiredMemories('2026-03-03T00:00:00.000Z')).toBe(0);
      const deleted = (await storage.listVersions(s.id, verQ({ memoryId: m.id, operation: 'deleted' }))).data;
      expect(deleted).toMatchObject([{ path: '/a', createdAt: '2026-03-02T00:00:00.000Z' }]);
      expect((await storage.storeUsage(s.id)).memories).toBe(2);
      expect(await storage.domainCheck()).toEqual([]);
    });

    it('search upkeep indexes the writes queued so far and then has nothing left to do', async () => {
      const { storage, addStore, addMemory } = await fixture(makeStorage);
      expect(await storage.indexSearchBacklog(10)).toBe(0);
      const s = await addStore();
      // One text for all five: PostgreSQL also queues each new text for its trigram index (postgres/schema/v12.ts), once.
      for (let i = 0; i < 5; i++) await addMemory(s.id, `/m${i}`, 'one text for every memory');
      // What waits is counted without indexing it: the five memories at least (PostgreSQL: and the text).
      expect(await storage.searchBacklog()).toBeGreaterThanOrEqual(storage.keepsSearchBacklog() ? 5 : 0);
      // An engine whose index follows each write in its transaction has no queue: 0 waits at once.
      const left = await storage.indexSearchBacklog(2);
      expect(left).toBe(storage.keepsSearchBacklog() ? 3 : 0);
      expect(await storage.searchBacklog()).toBe(left);
      expect(await storage.indexSearchBacklog(10)).toBe(0);
      expect(await storage.searchBacklog()).toBe(0);
      expect(await storage.indexSearchBacklog(10)).toBe(0);
    });

    it('closing twice is harmless', async () => {
      const storage = await makeStorage();
      await storage.close();
      await storage.close();
    });
  });
}
