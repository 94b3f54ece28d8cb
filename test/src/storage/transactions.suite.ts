/** The transactions role's conformance suite: several writes as one transaction, and commits that reach the disk later. */
import { describe, expect, it } from 'vitest';
import { codeOf } from '../../helpers/core.js';
import { fixture, type MakeStorage } from './fixture.js';

export function runTransactionSuite(makeStorage: MakeStorage): void {
  describe('commits that reach the disk later (durable: false)', () => {
    it('a write that is not durable at commit is stored at once and counted until syncCommits', async () => {
      const { storage, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      expect(storage.unsyncedCommits()).toBe(0);
      storage.atomic(() => addMemory(s.id, '/a.md', 'a'), { durable: false });
      storage.atomic(() => addMemory(s.id, '/b.md', 'b'), { durable: false });
      expect(storage.getMemoryByPath(s.id, '/a.md')?.content).toBe('a');
      expect(storage.unsyncedCommits()).toBe(2);
      await storage.syncCommits();
      expect(storage.unsyncedCommits()).toBe(0);
      // Nothing pending: it resolves without a sync.
      await storage.syncCommits();
    });

    it('a durable write, or a non-durable one inside a durable transaction, leaves nothing to sync', () => {
      const { storage, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      addMemory(s.id, '/a.md');
      storage.atomic(() => storage.atomic(() => addMemory(s.id, '/b.md'), { durable: false }));
      expect(storage.unsyncedCommits()).toBe(0);
    });

    it('a non-durable transaction that throws rolls back whole and counts nothing', () => {
      const { storage, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      expect(() => storage.atomic(() => {
        addMemory(s.id, '/a.md');
        throw new Error('refused');
      }, { durable: false })).toThrow('refused');
      expect(storage.getMemoryByPath(s.id, '/a.md')).toBeNull();
      expect(storage.unsyncedCommits()).toBe(0);
    });
  });

  describe('transactions', () => {
    it('writes inside one atomic call commit together, or not at all when it throws', () => {
      const { storage, stamp, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      storage.atomic(() => {
        addMemory(s.id, '/a');
        addMemory(s.id, '/b');
      });
      expect(storage.getMemoryByPath(s.id, '/b')).not.toBeNull();
      const a = storage.getMemoryByPath(s.id, '/a')!;
      expect(() => storage.atomic(() => {
        storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: a.id, content: 'changed' });
        addMemory(s.id, '/a/below');
      })).toThrow(expect.objectContaining({ code: 'path_conflict' }) as Error);
      expect(storage.getMemory(s.id, a.id)).toEqual(a);
      expect(storage.getMemoryByPath(s.id, '/a/below')).toBeNull();
    });

    it('a write refused inside an atomic call can be caught there, and the writes before it still commit', () => {
      const { storage, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      storage.atomic(() => {
        addMemory(s.id, '/a');
        expect(codeOf(() => addMemory(s.id, '/a'))).toBe('path_conflict');
      });
      expect(storage.getMemoryByPath(s.id, '/a')).not.toBeNull();
      expect(storage.storeUsage(s.id).memories).toBe(1);
    });
  });
}
