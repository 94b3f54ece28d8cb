/**
 * The history role's conformance suite (issue 15): each store's versions in commit order, numbered
 * 1, 2, 3… with no gaps whatever kind of write appended them, and a version's predecessor.
 */
import { describe, expect, it } from 'vitest';
import { newId } from '../../../src/service/ids.js';
import type { Change, MemoryVersion } from '../../../src/domain/types.js';
import { fixture, thrown, verQ, type MakeStorage } from './fixture.js';

/** The version of an entry that is one (a prune is not). */
export function versionOf(c: Change): MemoryVersion {
  if (!('version' in c)) throw new Error(`entry ${c.seq} is a prune, not a version`);
  return c.version;
}
const ids = (changes: Change[]) => changes.map((c) => versionOf(c).id);
const seqs = (changes: Change[]) => changes.map((c) => c.seq);

export function runFeedSuite(makeStorage: MakeStorage): void {
  describe('history', () => {
    it('lists a store\'s versions in commit order, numbered from 1 without gaps, in the basic view', async () => {
      const { storage, stamp, actor, now, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const other = await addStore('other');
      const a = await addMemory(s.id, '/a', 'one');
      await addMemory(other.id, '/elsewhere');
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: a.id, content: 'two' });
      await storage.moveTree({ storeId: s.id, from: '/dir', to: '/moved', actor, now: now(), versionIds: () => newId('version') });
      await addMemory(s.id, '/dir/x');
      await addMemory(s.id, '/dir/y');
      await storage.moveTree({ storeId: s.id, from: '/dir', to: '/moved', actor, now: now(), versionIds: () => newId('version') });
      await storage.deleteMemory({ ...stamp(), storeId: s.id, memoryId: a.id });
      const changes = await storage.listChanges(s.id, { after: 0, limit: 100 });
      const newestFirst = (await storage.listVersions(s.id, verQ())).data;
      expect(ids(changes)).toEqual(newestFirst.map((v) => v.id).reverse());
      expect(seqs(changes)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(changes.every((c) => versionOf(c).content === null)).toBe(true);
      expect(versionOf(changes[0]!)).toMatchObject({ operation: 'created', path: '/a', contentSizeBytes: 3 });
      expect(seqs(await storage.listChanges(other.id, { after: 0, limit: 100 }))).toEqual([1]);
    });

    it('pages from any number, and past the end is an empty page', async () => {
      const { storage, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      for (let i = 0; i < 5; i++) await addMemory(s.id, `/m${i}`);
      expect(seqs(await storage.listChanges(s.id, { after: 1, limit: 2 }))).toEqual([2, 3]);
      expect(seqs(await storage.listChanges(s.id, { after: 3, limit: 100 }))).toEqual([4, 5]);
      expect(await storage.listChanges(s.id, { after: 5, limit: 100 })).toEqual([]);
      expect(await storage.listChanges(s.id, { after: 99, limit: 100 })).toEqual([]);
      expect(await storage.listChanges(newId('store'), { after: 0, limit: 100 })).toEqual([]);
    });

    it("knows a store's last commit number: 0 before its first version and for no store, then the newest", async () => {
      const { storage, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      expect(await storage.lastCommitSeq(s.id)).toBe(0);
      expect(await storage.lastCommitSeq(newId('store'))).toBe(0);
      const a = await addMemory(s.id, '/a');
      await addMemory(s.id, '/b');
      await storage.deleteMemory({ ...stamp(), storeId: s.id, memoryId: a.id });
      expect(await storage.lastCommitSeq(s.id)).toBe(3);
      const last = (await storage.listChanges(s.id, { after: 0, limit: 100 })).at(-1)!;
      expect(last.seq).toBe(3);
      expect(await storage.listChanges(s.id, { after: await storage.lastCommitSeq(s.id), limit: 100 })).toEqual([]);
    });

    it('a refused write takes no number: the next version gets the next one', async () => {
      const { storage, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      await addMemory(s.id, '/a/b');
      expect(await thrown(() => storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/a', content: 'x' }))).toMatchObject({ code: 'path_conflict' });
      await addMemory(s.id, '/c');
      expect(seqs(await storage.listChanges(s.id, { after: 0, limit: 100 }))).toEqual([1, 2]);
    });

    it('expired memories\' deleted versions take their places too', async () => {
      const { storage, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      await storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/ttl', content: 'x', expiresAt: '2026-03-02T00:00:00.000Z' });
      expect(await storage.purgeExpiredMemories('2026-03-03T00:00:00.000Z')).toBe(1);
      await addMemory(s.id, '/after');
      const changes = await storage.listChanges(s.id, { after: 0, limit: 100 });
      expect(changes.map((c) => [c.seq, versionOf(c).operation, versionOf(c).path])).toEqual([[1, 'created', '/ttl'], [2, 'deleted', '/ttl'], [3, 'created', '/after']]);
    });

    it('a redacted version keeps its place, with its fields redacted', async () => {
      const { storage, stamp, actor, now, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/secret', 'hunter2');
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'fine' });
      await storage.redactVersion(s.id, m.versionId, actor, now());
      const [first, second] = await storage.listChanges(s.id, { after: 0, limit: 100 });
      expect(first).toMatchObject({ seq: 1, version: { id: m.versionId, path: null, contentSha256: null, contentSizeBytes: null, redactedBy: actor } });
      expect(second).toMatchObject({ seq: 2, version: { path: '/secret', redactedAt: null } });
    });

    it('a version\'s predecessor is the same memory\'s previous version, with its content', async () => {
      const { storage, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const a = await addMemory(s.id, '/a', 'one');
      const b = await addMemory(s.id, '/b', 'other');
      const st = stamp();
      await storage.updateMemory({ ...st, storeId: s.id, memoryId: a.id, content: 'two' });
      expect(await storage.previousVersion(s.id, st.versionId)).toMatchObject({ id: a.versionId, content: 'one', path: '/a' });
      expect(await storage.previousVersion(s.id, a.versionId)).toBeNull();
      expect(await storage.previousVersion(s.id, b.versionId)).toBeNull();
      expect(await storage.previousVersion((await addStore('x')).id, st.versionId)).toBeNull();
      expect(await storage.previousVersion(s.id, newId('version'))).toBeNull();
    });

    it('a prune batch removes what the rules let go but never a live head, records tombstones in the feed, and looks at a bounded window', async () => {
      const { storage, stamp, now, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const a = await addMemory(s.id, '/a', 'one');
      for (const content of ['two', 'three']) await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: a.id, content });
      await addMemory(s.id, '/b');
      const w = { cutoff: null, keepLast: 1, now: now() };
      // A window of two versions sees only a's first two: both go (a has newer ones).
      expect(await storage.pruneVersions(s.id, { ...w, after: 0, scan: 2, max: 100 })).toEqual({ pruned: 2, scannedTo: 2 });
      expect(await storage.pruneVersions(s.id, { ...w, after: 2, scan: 100, max: 100 })).toEqual({ pruned: 0, scannedTo: 4 });
      expect(await storage.pruneVersions(s.id, { ...w, after: 4, scan: 100, max: 100 })).toEqual({ pruned: 0, scannedTo: null });
      const changes = await storage.listChanges(s.id, { after: 0, limit: 100 });
      expect(changes.map((c) => ('version' in c ? [c.seq, c.version.path] : [c.seq, 'pruned']))).toEqual([[3, '/a'], [4, '/b'], [5, 'pruned'], [6, 'pruned']]);
      expect((await storage.listVersions(s.id, verQ({ memoryId: a.id }))).data.map((v) => v.id)).toEqual([(await storage.getMemory(s.id, a.id))!.versionId]);
      expect(await storage.storesWithRetention()).toEqual([]);
      expect(await storage.domainCheck()).toEqual([]);
    });
  });
}
