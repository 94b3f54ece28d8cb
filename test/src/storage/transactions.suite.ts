/** The transactions role's conformance suite: several writes as one transaction, and commits that reach the disk later. */
import { describe, expect, it } from 'vitest';
import { codeOf } from '../../helpers/core.js';
import { fixture, memQ, paths, type MakeStorage } from './fixture.js';

export function runTransactionSuite(makeStorage: MakeStorage): void {
  describe('commits that reach the disk later (durable: false)', () => {
    it('a write that is not durable at commit is stored at once and counted until syncCommits', async () => {
      const { storage, actor, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      expect(storage.unsyncedCommits()).toBe(0);
      await storage.atomic((tx) => addMemory(s.id, '/a.md', 'a', actor, tx), { durable: false });
      await storage.atomic((tx) => addMemory(s.id, '/b.md', 'b', actor, tx), { durable: false });
      expect((await storage.getMemoryByPath(s.id, '/a.md'))?.content).toBe('a');
      expect(storage.unsyncedCommits()).toBe(2);
      await storage.syncCommits();
      expect(storage.unsyncedCommits()).toBe(0);
      // Nothing pending: it resolves without a sync.
      await storage.syncCommits();
    });

    it('a non-durable write stores quotes, backslashes and any other text byte for byte, in its path and its content', async () => {
      const { storage, actor, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      // PostgreSQL writes a non-durable append's values into its SQL text (postgres/db.ts quoted()).
      const texts = ["it's", 'C:\\dir\\', "\\'", "''\\\\''", " E'x'", 'é 😀\n\t', "'".repeat(100) + '\\'.repeat(100)];
      for (const [i, text] of texts.entries()) {
        const path = `/q${i}/${text.replace(/[\n\t]/g, '_')}.md`;
        await storage.atomic((tx) => addMemory(s.id, path, text, actor, tx), { durable: false });
        expect((await storage.getMemoryByPath(s.id, path))?.content).toBe(text);
      }
    });

    it('a durable write, or a non-durable one inside a durable transaction, leaves nothing to sync', async () => {
      const { storage, actor, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      await addMemory(s.id, '/a.md');
      await storage.atomic((tx) => tx.atomic((inner) => addMemory(s.id, '/b.md', 'b', actor, inner), { durable: false }));
      expect(storage.unsyncedCommits()).toBe(0);
    });

    it('a non-durable transaction that throws rolls back whole and counts nothing', async () => {
      const { storage, actor, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      await expect(storage.atomic(async (tx) => {
        await addMemory(s.id, '/a.md', 'a', actor, tx);
        throw new Error('refused');
      }, { durable: false })).rejects.toThrow('refused');
      expect(await storage.getMemoryByPath(s.id, '/a.md')).toBeNull();
      expect(storage.unsyncedCommits()).toBe(0);
    });
  });

  describe('transactions', () => {
    it('writes inside one atomic call commit together, or not at all when it throws', async () => {
      const { storage, actor, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      await storage.atomic(async (tx) => {
        await addMemory(s.id, '/a', 'a', actor, tx);
        await addMemory(s.id, '/b', 'b', actor, tx);
      });
      expect(await storage.getMemoryByPath(s.id, '/b')).not.toBeNull();
      const a = (await storage.getMemoryByPath(s.id, '/a'))!;
      await expect(storage.atomic(async (tx) => {
        await tx.updateMemory({ ...stamp(), storeId: s.id, memoryId: a.id, content: 'changed' });
        await addMemory(s.id, '/a/below', 'x', actor, tx);
      })).rejects.toThrow(expect.objectContaining({ code: 'path_conflict' }) as Error);
      expect(await storage.getMemory(s.id, a.id)).toEqual(a);
      expect(await storage.getMemoryByPath(s.id, '/a/below')).toBeNull();
    });

    it('a write refused inside an atomic call can be caught there, and the writes before it still commit', async () => {
      const { storage, actor, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      await storage.atomic(async (tx) => {
        await addMemory(s.id, '/a', 'a', actor, tx);
        expect(await codeOf(() => addMemory(s.id, '/a', 'a', actor, tx))).toBe('path_conflict');
      });
      expect(await storage.getMemoryByPath(s.id, '/a')).not.toBeNull();
      expect((await storage.storeUsage(s.id)).memories).toBe(1);
    });

    it('a nested atomic that throws rolls back alone: the writes around it still commit', async () => {
      const { storage, actor, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      await storage.atomic(async (tx) => {
        await addMemory(s.id, '/before', 'b', actor, tx);
        await expect(tx.atomic(async (inner) => {
          await addMemory(s.id, '/inside', 'i', actor, inner);
          throw new Error('refused');
        })).rejects.toThrow('refused');
        await addMemory(s.id, '/after', 'a', actor, tx);
      });
      expect(await storage.getMemoryByPath(s.id, '/before')).not.toBeNull();
      expect(await storage.getMemoryByPath(s.id, '/inside')).toBeNull();
      expect(await storage.getMemoryByPath(s.id, '/after')).not.toBeNull();
    });

    // SQLite's one connection makes the outer call wait for the commit (sqlite.test.ts pins that);
    // PostgreSQL answers it on another pooled connection from the state before the transaction.
    it('a call through the outer port while a transaction is open sees the state before it or after its commit, never its middle', async () => {
      const { storage, actor, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const tx = storage.atomic(async (t) => {
        await addMemory(s.id, '/a', 'a', actor, t);
        // The transaction waits on something that is not storage: outer calls must not slip in.
        await held;
        await addMemory(s.id, '/b', 'b', actor, t);
      });
      const outside = storage.listMemories(s.id, memQ());
      await new Promise((resolve) => setImmediate(resolve));
      release();
      await tx;
      expect([[], ['/a', '/b']]).toContainEqual(paths((await outside).data));
    });
  });
}
