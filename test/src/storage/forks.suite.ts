/** The forks role's conformance suite: a store built hidden in batches, published whole, shared texts. */
import { describe, expect, it } from 'vitest';
import { forkAbandonedBy } from '../../../src/domain/errors.js';
import { newId } from '../../../src/service/ids.js';
import type { Store } from '../../../src/domain/types.js';
import { fixture, memQ, paths, storeQ, thrown, verQ, type MakeStorage } from './fixture.js';

export function runForkSuite(makeStorage: MakeStorage): void {
  describe('forks', () => {
    it('a fork is hidden from every store read until published, and copies the memories live at as_of batch by batch', async () => {
      const { storage, workspace, actor, now, stamp, addStore, addMemory } = await fixture(makeStorage);
      const src = await addStore('src');
      const a = await addMemory(src.id, '/a.md', 'one');
      await addMemory(src.id, '/b.md', 'bee');
      const gone = await addMemory(src.id, '/c.md', 'cee');
      await storage.deleteMemory({ ...stamp(), storeId: src.id, memoryId: gone.id });
      const asOf = now();
      await storage.updateMemory({ ...stamp(), storeId: src.id, memoryId: a.id, content: 'two' });
      await addMemory(src.id, '/later.md', 'later');
      const contents = await storage.countContents();

      const at = now();
      const target: Store = {
        id: newId('store'), workspaceId: workspace.id, name: 'fork', description: '', metadata: {},
        createdAt: at, updatedAt: at, archivedAt: null, forkedFrom: { storeId: src.id, asOf },
      };
      await storage.beginFork(target);
      const batch = { sourceId: src.id, targetId: target.id, asOf, limit: 2, actor, now: at, newMemoryId: () => newId('memory'), newVersionId: () => newId('version') };
      let after = await storage.copyForkBatch({ ...batch, after: null });
      expect(after).not.toBeNull();
      expect(await storage.getStore(workspace.id, target.id)).toBeNull();
      expect(await storage.getStoreById(target.id)).toBeNull();
      expect((await storage.listStores(workspace.id, storeQ({ includeArchived: true }))).data.map((s) => s.id)).toEqual([src.id]);
      while (after !== null) after = await storage.copyForkBatch({ ...batch, after });

      const published = await storage.publishFork(target.id);
      expect(published).toEqual(target);
      expect(await storage.getStore(workspace.id, target.id)).toEqual(target);
      expect(paths((await storage.listMemories(target.id, memQ())).data)).toEqual(['/a.md', '/b.md']);
      expect((await storage.getMemoryByPath(target.id, '/a.md'))?.content).toBe('one');
      const versions = (await storage.listVersions(target.id, verQ())).data;
      expect(versions.map((v) => [v.operation, v.path, v.content, v.createdBy]).sort()).toEqual([
        ['created', '/a.md', 'one', actor], ['created', '/b.md', 'bee', actor],
      ]);
      expect(await storage.countContents()).toBe(contents);
      expect(await storage.domainCheck()).toEqual([]);
    });

    it('a fork cut short is deleted with its rows by the sweep or by abandoning it, and a published store cannot be abandoned', async () => {
      const { storage, workspace, actor, now, addStore, addMemory } = await fixture(makeStorage);
      const src = await addStore('src');
      await addMemory(src.id, '/only-here.md', 'unique text');
      const contents = await storage.countContents();
      const at = now();
      const target: Store = { id: newId('store'), workspaceId: workspace.id, name: 'f', description: '', metadata: {}, createdAt: at, updatedAt: at, archivedAt: null };
      await storage.beginFork(target);
      await storage.copyForkBatch({ sourceId: src.id, targetId: target.id, asOf: at, after: null, limit: 10, actor, now: at, newMemoryId: () => newId('memory'), newVersionId: () => newId('version') });
      // A sweep for forks begun before `at` finds none; one for later ones deletes it.
      expect(await storage.purgeAbandonedFork(at, now())).toBeNull();
      expect(await storage.purgeAbandonedFork(now(), now())).toBe(target.id);
      expect(await storage.purgeAbandonedFork(now(), now())).toBeNull();
      await storage.abandonFork(target.id);
      await storage.abandonFork(src.id);
      expect(await storage.getStore(workspace.id, src.id)).not.toBeNull();
      while (await storage.purgeDeletedStores());
      expect(await storage.getMemoryByPath(target.id, '/only-here.md')).toBeNull();
      expect(await storage.countContents()).toBe(contents);
      expect(await storage.domainCheck()).toEqual([]);
    });

    it('a build deleted while it was built says so by its id and says who deleted it, a redaction or the sweep, even once its rows are purged: the next batch and the publish throw an abandoned fork, not a bare not_found', async () => {
      const { storage, workspace, actor, now, stamp, addStore, addMemory } = await fixture(makeStorage);
      const src = await addStore('src');
      const a = await addMemory(src.id, '/a.md', 'one');
      const asOf = now();
      await storage.updateMemory({ ...stamp(), storeId: src.id, memoryId: a.id, content: 'two' });
      const build = (at: string): Store => {
        const began = now();
        return { id: newId('store'), workspaceId: workspace.id, name: 'f', description: '', metadata: {}, createdAt: began, updatedAt: began, archivedAt: null, forkedFrom: { storeId: src.id, asOf: at } };
      };
      const batch = (target: Store) => storage.copyForkBatch({
        sourceId: src.id, targetId: target.id, asOf: target.forkedFrom!.asOf, after: null, limit: 10, actor, now: now(), newMemoryId: () => newId('memory'), newVersionId: () => newId('version'),
      });
      const abandoned = (id: string, by: 'redaction' | 'sweep') => ({
        code: 'not_found', message: `memory store not found: ${id}`, details: { abandoned_fork: id, abandoned_by: by },
      });

      // Two builds: the sweep of forks a crash cut short deletes the first (begun before the second,
      // of the source as it is now), and a redaction of the version it copied the second.
      const swept = build(now());
      await storage.beginFork(swept);
      await batch(swept);
      const redacted = build(asOf);
      await storage.beginFork(redacted);
      await batch(redacted);
      await storage.redactVersion(src.id, a.versionId, actor, now());
      expect(await thrown(() => batch(redacted))).toMatchObject(abandoned(redacted.id, 'redaction'));
      const unpublished = await thrown(() => storage.publishFork(redacted.id));
      expect(unpublished).toMatchObject(abandoned(redacted.id, 'redaction'));
      expect(forkAbandonedBy(unpublished, redacted.id)).toBe('redaction');
      // Another build's id is not this one's.
      expect(forkAbandonedBy(unpublished, src.id)).toBeNull();

      // The redaction's build was deleted already: the sweep finds only the other.
      expect(await storage.purgeAbandonedFork(redacted.createdAt, now())).toBe(swept.id);
      expect(await storage.purgeAbandonedFork(redacted.createdAt, now())).toBeNull();
      expect(await thrown(() => batch(swept))).toMatchObject(abandoned(swept.id, 'sweep'));
      expect(await thrown(() => batch(redacted))).toMatchObject(abandoned(redacted.id, 'redaction'));
      // Both builds' rows purged since (their store rows with them): each still says who deleted it.
      while (await storage.purgeDeletedStores());
      expect(await thrown(() => storage.publishFork(swept.id))).toMatchObject(abandoned(swept.id, 'sweep'));
      expect(await thrown(() => storage.publishFork(redacted.id))).toMatchObject(abandoned(redacted.id, 'redaction'));
      expect(await storage.domainCheck()).toEqual([]);
    });
  });
}
