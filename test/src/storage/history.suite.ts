/**
 * The history role's conformance suite: a path's versions numbered from 1 with redaction's gaps,
 * the names of paths that ever held a memory below a directory, and the store as it was at an
 * instant (what `.history` and point-in-time mounts read).
 */
import { describe, expect, it } from 'vitest';
import { newId } from '../../../src/service/ids.js';
import { fixture, type MakeStorage } from './fixture.js';

export function runHistorySuite(makeStorage: MakeStorage): void {
  describe('history by path', () => {
    it("numbers a path's versions from 1, oldest first; a redacted one leaves its gap and a deleted one is marked", async () => {
      const { storage, addStore, addMemory, stamp, actor, now } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a.md', 'one');
      const two = await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'two' });
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'three' });
      await storage.deleteMemory({ ...stamp(), storeId: s.id, memoryId: m.id });
      await storage.redactVersion(s.id, two.memory.versionId, actor, now());
      const vs = await storage.listPathVersions(s.id, '/a.md', 100);
      expect(vs.map((v) => [v.number, v.deleted, v.sizeBytes])).toEqual([[1, false, 3], [3, false, 5], [4, true, 0]]);
      expect((await storage.listPathVersions(s.id, '/a.md', 2)).map((v) => v.number)).toEqual([1, 3]);
      expect((await storage.getPathVersionBytes(s.id, '/a.md', 3))?.bytes).toEqual(Buffer.from('three'));
      expect(await storage.getPathVersionBytes(s.id, '/a.md', 2)).toBeNull();
      expect(await storage.getPathVersion(s.id, '/a.md', 2)).toBeNull();
      expect(await storage.getPathVersion(s.id, '/a.md', 3)).toEqual(vs[1]);
      expect((await storage.getPathVersionBytes(s.id, '/a.md', 4))?.bytes).toEqual(Buffer.alloc(0));
      // The path is used again by a new memory: its numbers go on.
      await addMemory(s.id, '/a.md', 'again');
      expect((await storage.listPathVersions(s.id, '/a.md', 100)).map((v) => v.number)).toEqual([1, 3, 4, 5]);
    });

    it("never gives a path's number out again, even after its newest versions were all redacted", async () => {
      const { storage, addStore, addMemory, stamp, actor, now } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/secret/k.md', 'one');
      const two = await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'two' });
      // Moved away, then both of its versions at that path redacted: nothing there names number 1 or 2.
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, path: '/moved.md' });
      await storage.redactVersion(s.id, m.versionId, actor, now());
      await storage.redactVersion(s.id, two.memory.versionId, actor, now());
      expect(await storage.listPathVersions(s.id, '/secret/k.md', 100)).toEqual([]);
      await addMemory(s.id, '/secret/k.md', 'new');
      expect((await storage.listPathVersions(s.id, '/secret/k.md', 100)).map((v) => v.number)).toEqual([3]);
      // Another store keeps its own numbers.
      const other = await addStore('other');
      await addMemory(other.id, '/secret/k.md', 'x');
      expect((await storage.listPathVersions(other.id, '/secret/k.md', 100)).map((v) => v.number)).toEqual([1]);
    });

    it('lists the names of paths that ever held a memory below a directory, live, deleted and renamed away, within a limit', async () => {
      const { storage, addStore, addMemory, stamp } = await fixture(makeStorage);
      const s = await addStore();
      // /d held a file before it became a directory.
      const file = await addMemory(s.id, '/d');
      await storage.deleteMemory({ ...stamp(), storeId: s.id, memoryId: file.id });
      const moved = await addMemory(s.id, '/d/old.md');
      await storage.moveMemory({ ...stamp(), storeId: s.id, memoryId: moved.id, path: '/d/new.md', replacedVersionId: 'unused' });
      const gone = await addMemory(s.id, '/d/e/gone.md');
      await storage.deleteMemory({ ...stamp(), storeId: s.id, memoryId: gone.id });
      await addMemory(s.id, '/d-x.md');
      const other = await addStore('other');
      await addMemory(other.id, '/d/elsewhere.md');
      const d = await storage.listHistoryDirectory(s.id, '/d', 100);
      expect({ files: [...d.files].sort(), dirs: d.dirs }).toEqual({ files: ['new.md', 'old.md'], dirs: ['e'] });
      const root = await storage.listHistoryDirectory(s.id, '/', 100);
      expect({ files: [...root.files].sort(), dirs: root.dirs }).toEqual({ files: ['d', 'd-x.md'], dirs: ['d'] });
      expect((await storage.listHistoryDirectory(s.id, '/d', 1)).truncated).toBe(true);
      expect(await storage.hasHistoryUnder(s.id, '/d/e')).toBe(true);
      expect(await storage.hasHistoryUnder(s.id, '/d/new.md')).toBe(false);
      expect(await storage.hasHistoryUnder(s.id, '/none')).toBe(false);
    });
  });

  describe('the store at an instant', () => {
    it("shows each memory's latest version created at or before the instant, not deleted, at its path then", async () => {
      const { storage, addStore, addMemory, stamp, now, actor } = await fixture(makeStorage);
      const s = await addStore();
      const a = await addMemory(s.id, '/a.md', 'a1');
      const b = await addMemory(s.id, '/d/b.md', 'b1');
      const t1 = now();
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: a.id, content: 'a2' });
      await storage.moveMemory({ ...stamp(), storeId: s.id, memoryId: b.id, path: '/e/b.md', replacedVersionId: 'unused' });
      const c = await addMemory(s.id, '/c.md', 'c1');
      const t2 = now();
      await storage.deleteMemory({ ...stamp(), storeId: s.id, memoryId: a.id });
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: c.id, content: 'c2' });
      await storage.redactVersion(s.id, c.versionId, actor, now());

      const at1 = await storage.listDirectoryAsOf(s.id, '/', t1, 100);
      expect({ files: at1.files.map((f) => f.path), dirs: at1.dirs }).toEqual({ files: ['/a.md'], dirs: ['d'] });
      expect((await storage.getMemoryBytesAsOf(s.id, '/a.md', t1))?.bytes).toEqual(Buffer.from('a1'));
      expect(await storage.hasMemoriesUnderAsOf(s.id, '/d', t1)).toBe(true);
      expect(await storage.hasMemoriesUnderAsOf(s.id, '/e', t1)).toBe(false);

      const at2 = await storage.listDirectoryAsOf(s.id, '/', t2, 100);
      expect({ files: at2.files.map((f) => f.path).sort(), dirs: at2.dirs }).toEqual({ files: ['/a.md', '/c.md'], dirs: ['e'] });
      expect((await storage.getMemoryBytesAsOf(s.id, '/a.md', t2))?.bytes).toEqual(Buffer.from('a2'));
      expect((await storage.getMemoryBytesAsOf(s.id, '/e/b.md', t2))?.bytes).toEqual(Buffer.from('b1'));
      expect(await storage.getMemoryMetaAsOf(s.id, '/d/b.md', t2)).toBeNull();
      // Redacted since: still there, with no bytes to read.
      expect((await storage.getMemoryMetaAsOf(s.id, '/c.md', t2))?.redacted).toBe(true);
      expect(await storage.getMemoryBytesAsOf(s.id, '/c.md', t2)).toBeNull();

      const later = now();
      expect((await storage.getMemoryMetaAsOf(s.id, '/c.md', later))?.redacted).toBe(false);
      expect(await storage.getMemoryMetaAsOf(s.id, '/a.md', later)).toBeNull();
    });

    it('counts a directory as holding a memory at an instant only where that memory stood then: not created yet, deleted, moved away and redacted versions', async () => {
      const { storage, addStore, addMemory, stamp, now, actor } = await fixture(makeStorage);
      const s = await addStore();
      const before = now();
      // /gone held memories that were all deleted; /late's came after the instant; /x/m.md moved to /y.
      for (const i of [1, 2, 3]) {
        const g = await addMemory(s.id, `/gone/g${i}.md`);
        await storage.deleteMemory({ ...stamp(), storeId: s.id, memoryId: g.id });
      }
      const m = await addMemory(s.id, '/x/m.md', 'm1');
      const moved = await storage.moveMemory({ ...stamp(), storeId: s.id, memoryId: m.id, path: '/y/m.md', replacedVersionId: 'unused' });
      const t = now();
      await addMemory(s.id, '/late/l.md');
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'm2' });
      const under = async (at: string) => Object.fromEntries(
        await Promise.all(['/gone', '/late', '/x', '/y'].map(async (d) => [d, await storage.hasMemoriesUnderAsOf(s.id, d, at)] as const)),
      );
      expect(await under(before)).toEqual({ '/gone': false, '/late': false, '/x': false, '/y': false });
      expect(await under(t)).toEqual({ '/gone': false, '/late': false, '/x': false, '/y': true });
      expect((await storage.listDirectoryAsOf(s.id, '/', t, 100)).dirs).toEqual(['y']);
      // Its version then redacted: it stands at its last unredacted version before, /x/m.md ...
      await storage.redactVersion(s.id, moved.versionId, actor, now());
      expect(await under(t)).toEqual({ '/gone': false, '/late': false, '/x': true, '/y': false });
      expect((await storage.listDirectoryAsOf(s.id, '/', t, 100)).dirs).toEqual(['x']);
      // ... and with that one redacted too, at its first unredacted version after the instant.
      await storage.redactVersion(s.id, m.versionId, actor, now());
      expect(await under(t)).toEqual({ '/gone': false, '/late': false, '/x': false, '/y': true });
      expect((await storage.getMemoryMetaAsOf(s.id, '/y/m.md', t))).toMatchObject({ id: m.id, versionId: `${moved.versionId}#redacted`, redacted: true });
    });

    it('shows a memory whose expiry had passed at the instant as gone, before any sweep deleted it', async () => {
      const { storage, addStore, now, stamp } = await fixture(makeStorage);
      const s = await addStore();
      const at = (t0: string, secs: number) => new Date(Date.parse(t0) + 1000 * secs).toISOString();
      const t0 = now();
      await storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/d/ttl.md', content: 'x', expiresAt: at(t0, 4) });
      const live = now();
      expect((await storage.getMemoryBytesAsOf(s.id, '/d/ttl.md', live))?.bytes).toEqual(Buffer.from('x'));
      // Nothing swept it: the memory row is still there, with its expiry behind the instant.
      const expired = at(t0, 5);
      expect(await storage.getMemoryMetaAsOf(s.id, '/d/ttl.md', expired)).toBeNull();
      expect(await storage.getMemoryBytesAsOf(s.id, '/d/ttl.md', expired)).toBeNull();
      expect((await storage.listDirectoryAsOf(s.id, '/', expired, 100)).dirs).toEqual([]);
      expect(await storage.hasMemoriesUnderAsOf(s.id, '/d', expired)).toBe(false);
    });
  });
}
