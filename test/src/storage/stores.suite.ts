/** The stores role's conformance suite: a workspace's stores, their settings, archiving, deletion and usage. */
import { describe, expect, it } from 'vitest';
import { codeOf } from '../../helpers/core.js';
import { newId } from '../../../src/service/ids.js';
import { fixture, memQ, storeQ, type MakeStorage } from './fixture.js';

export function runStoreSuite(makeStorage: MakeStorage): void {
  describe('stores', () => {
    it('a store reads back as inserted, only inside its workspace', async () => {
      const { storage, addStore } = await fixture(makeStorage);
      const s = await addStore();
      expect(await storage.getStore(s.workspaceId, s.id)).toEqual(s);
      expect(await storage.getStoreById(s.id)).toEqual(s);
      expect(await storage.getStore(newId('workspace'), s.id)).toBeNull();
      expect(await storage.getStore(s.workspaceId, newId('store'))).toBeNull();
    });

    it('stores list newest first, page by page, without archived ones unless asked', async () => {
      const { storage, workspace, now, addStore } = await fixture(makeStorage);
      const made = [];
      for (let i = 0; i < 5; i++) made.push(await addStore(`s${i}`));
      await storage.archiveStore(workspace.id, made[1]!.id, now());
      const first = await storage.listStores(workspace.id, storeQ({ limit: 2 }));
      expect(first.data.map((s) => s.name)).toEqual(['s4', 's3']);
      const second = await storage.listStores(workspace.id, storeQ({ limit: 2, page: first.nextPage }));
      expect(second.data.map((s) => s.name)).toEqual(['s2', 's0']);
      expect(second.nextPage).toBeNull();
      expect((await storage.listStores(workspace.id, storeQ({ includeArchived: true }))).data.map((s) => s.name)).toEqual(['s4', 's3', 's2', 's1', 's0']);
    });

    it('a store update merges metadata and keeps untouched fields', async () => {
      const { storage, workspace, now, addStore } = await fixture(makeStorage);
      const s = await addStore();
      await storage.updateStore(workspace.id, s.id, { metadata: { a: '1', b: '2' } }, now());
      const at = now();
      const updated = await storage.updateStore(workspace.id, s.id, { description: 'd', metadata: { a: null, c: '3' } }, at);
      expect(updated).toMatchObject({ name: 'notes', description: 'd', metadata: { b: '2', c: '3' }, updatedAt: at });
      expect(await storage.getStore(workspace.id, s.id)).toEqual(updated);
    });

    it('archiving twice keeps the first archive time', async () => {
      const { storage, workspace, now, addStore } = await fixture(makeStorage);
      const s = await addStore();
      const first = await storage.archiveStore(workspace.id, s.id, now());
      const again = await storage.archiveStore(workspace.id, s.id, now());
      expect(again.archivedAt).toBe(first.archivedAt);
      expect((await storage.getStore(workspace.id, s.id))?.archivedAt).toBe(first.archivedAt);
    });

    it('deleting a store removes it with its memories and versions; unknown stores are not_found', async () => {
      const { storage, workspace, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const keep = await addStore('keep');
      const m = await addMemory(s.id, '/a');
      await addMemory(keep.id, '/a');
      await storage.deleteStore(workspace.id, s.id);
      // At once: no read finds it, no write lands in it.
      expect(await storage.getStore(workspace.id, s.id)).toBeNull();
      expect(await storage.getStoreById(s.id)).toBeNull();
      expect((await storage.listStores(workspace.id, storeQ({ includeArchived: true }))).data.map((x) => x.id)).toEqual([keep.id]);
      expect(await codeOf(() => storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/b', content: 'late' }))).toBe('not_found');
      // Its rows may go in later steps (SQLite); once they have, nothing of it is left.
      while (await storage.purgeDeletedStores());
      expect(await storage.getMemory(s.id, m.id)).toBeNull();
      expect(await storage.getVersion(s.id, m.versionId)).toBeNull();
      expect((await storage.listMemories(keep.id, memQ())).data).toHaveLength(1);
      expect(await codeOf(() => storage.deleteStore(workspace.id, s.id))).toBe('not_found');
      expect(await codeOf(() => storage.deleteStore(newId('workspace'), keep.id))).toBe('not_found');
      expect(await storage.integrityCheck()).toEqual([]);
    });

    it('a deleted store refuses a redaction, a checkpoint delete and a prune while its rows wait for the purge', async () => {
      const { storage, workspace, actor, stamp, now, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a', 'one');
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'two' });
      const cp = await storage.insertCheckpoint({
        checkpoint: {
          agentId: 'agent', sessionId: 's1', goal: 'g', summary: 's', constraints: [], decisions: [], openTasks: [], nextAction: null,
          capsule: 'c', references: [], id: newId('checkpoint'), storeId: s.id, sizeBytes: 10, createdAt: now(), createdBy: actor,
        },
        expectedLatestId: undefined,
      });
      await storage.deleteStore(workspace.id, s.id);
      // Each checks the store in its own transaction: one that raced the delete writes nothing into the hidden store.
      expect(await codeOf(() => storage.redactVersion(s.id, m.versionId, actor, now()))).toBe('not_found');
      expect(await codeOf(() => storage.deleteCheckpoint(s.id, cp.id))).toBe('not_found');
      expect(await storage.pruneVersions(s.id, { cutoff: null, keepLast: 1, now: now(), after: 0, scan: 100, max: 100 })).toEqual({ pruned: 0, scannedTo: null });
      while (await storage.purgeDeletedStores());
      expect(await storage.integrityCheck()).toEqual([]);
    });

    it('an archived store\'s settings can no longer change, and an unknown store is not_found', async () => {
      const { storage, workspace, now, addStore } = await fixture(makeStorage);
      const s = await addStore();
      const archived = await storage.archiveStore(workspace.id, s.id, now());
      expect(await codeOf(() => storage.updateStore(workspace.id, s.id, { name: 'renamed' }, now()))).toBe('archived');
      expect(await storage.getStore(workspace.id, s.id)).toEqual(archived);
      expect(await codeOf(() => storage.updateStore(workspace.id, newId('store'), { name: 'x' }, now()))).toBe('not_found');
      expect(await codeOf(() => storage.archiveStore(workspace.id, newId('store'), now()))).toBe('not_found');
    });

    it('an update that sets what is there already changes nothing, not even updated_at', async () => {
      const { storage, workspace, now, addStore } = await fixture(makeStorage);
      const s = await addStore();
      await storage.updateStore(workspace.id, s.id, { metadata: { a: '1' } }, now());
      const before = (await storage.getStore(workspace.id, s.id))!;
      expect(await storage.updateStore(workspace.id, s.id, { name: 'notes', metadata: { a: '1' } }, now())).toEqual(before);
      expect(await storage.getStore(workspace.id, s.id)).toEqual(before);
    });

    it('a metadata key named __proto__ stays an ordinary key', async () => {
      const { storage, workspace, now, addStore } = await fixture(makeStorage);
      const s = await addStore();
      const patch = JSON.parse('{"metadata": {"__proto__": "x", "b": "2"}}') as { metadata: Record<string, string> };
      const updated = await storage.updateStore(workspace.id, s.id, patch, now());
      expect(Object.keys(updated.metadata)).toEqual(['__proto__', 'b']);
      expect(Object.keys((await storage.getStore(workspace.id, s.id))!.metadata)).toEqual(['__proto__', 'b']);
    });

    it('a store list can be limited to the stores a scoped key may see', async () => {
      const { storage, workspace, addStore } = await fixture(makeStorage);
      const a = await addStore('a');
      await addStore('b');
      const c = await addStore('c');
      const page = await storage.listStores(workspace.id, storeQ(), [a.id, c.id]);
      expect(page.data.map((s) => s.name)).toEqual(['c', 'a']);
      expect((await storage.listStores(workspace.id, storeQ(), [])).data).toEqual([]);
    });

    it('store usage counts live memories and their bytes, and follows every write', async () => {
      const { storage, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      expect(await storage.storeUsage(s.id)).toEqual({ memories: 0, bytes: 0 });
      const a = await addMemory(s.id, '/a', 'abc');
      await addMemory(s.id, '/b', 'héllo');
      expect(await storage.storeUsage(s.id)).toEqual({ memories: 2, bytes: 9 });
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: a.id, content: 'a' });
      expect(await storage.storeUsage(s.id)).toEqual({ memories: 2, bytes: 7 });
      await storage.deleteMemory({ ...stamp(), storeId: s.id, memoryId: a.id });
      expect(await storage.storeUsage(s.id)).toEqual({ memories: 1, bytes: 6 });
      expect(await storage.storeUsage(newId('store'))).toEqual({ memories: 0, bytes: 0 });
    });

    it('live store usage leaves out memories that expired but no write or sweep has deleted yet', async () => {
      const { storage, stamp, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const other = await addStore('other');
      const expiring = (storeId: string, path: string, content: string, expiresAt: string) =>
        storage.createMemory({ ...stamp(), storeId, memoryId: newId('memory'), path, content, expiresAt });
      await addMemory(s.id, '/keep', 'abc');
      // Written at the fixture's times (2026-03-01), so no write purges them; the adapter's clock (now) is past both.
      await expiring(s.id, '/gone', 'héllo', '2026-03-02T00:00:00.000Z');
      await expiring(other.id, '/gone', 'elsewhere', '2026-03-02T00:00:00.000Z');
      await expiring(s.id, '/later', 'xy', '9999-01-01T00:00:00.000Z');
      expect(await storage.storeUsage(s.id)).toEqual({ memories: 3, bytes: 11 });
      expect(await storage.liveStoreUsage(s.id)).toEqual({ memories: 2, bytes: 5, memoryBytes: 5 });
      expect(await storage.purgeExpiredMemories(new Date().toISOString())).toBe(2);
      expect(await storage.storeUsage(s.id)).toEqual({ memories: 2, bytes: 5 });
      expect(await storage.liveStoreUsage(s.id)).toEqual({ memories: 2, bytes: 5, memoryBytes: 5 });
      expect(await storage.liveStoreUsage(newId('store'))).toEqual({ memories: 0, bytes: 0, memoryBytes: 0 });
    });
  });
}
