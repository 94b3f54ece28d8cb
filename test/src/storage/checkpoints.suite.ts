/** The checkpoints role's conformance suite: immutable bundles, one latest per (agent, session), and the lookups a restore makes. */
import { describe, expect, it } from 'vitest';
import { codeOf } from '../../helpers/core.js';
import { newId } from '../../../src/service/ids.js';
import type { InsertCheckpointInput, Storage } from '../../../src/storage/port.js';
import type { Actor } from '../../../src/domain/types.js';
import { checkpointAdmission, DEFAULT_LIMITS } from '../../../src/service/limits.js';
import { fixture, type MakeStorage } from './fixture.js';

export function runCheckpointSuite(makeStorage: MakeStorage): void {
  describe('checkpoints', () => {
    function save(
      storage: Storage, storeId: string, actor: Actor, expectedLatestId: string | null | undefined, who = { agentId: 'agent', sessionId: 's1' },
      sizeBytes = 100, checks: Pick<InsertCheckpointInput, 'admit' | 'nearLimit'> = {},
    ) {
      const input: InsertCheckpointInput = {
        checkpoint: {
          ...who, goal: 'ship it', summary: 'so far', constraints: ['c'], decisions: ['d'], openTasks: ['t'], nextAction: null,
          capsule: 'capsule', references: [], id: newId('checkpoint'), storeId, sizeBytes, createdAt: '2026-03-01T00:00:00.000Z', createdBy: actor,
        },
        expectedLatestId,
        ...checks,
      };
      return storage.insertCheckpoint(input);
    }

    it('checkpoints of an (agent, session) take revisions 1, 2, … and the newest is the latest', async () => {
      const { storage, actor, addStore } = await fixture(makeStorage);
      const s = await addStore();
      const first = await save(storage, s.id, actor, undefined);
      const second = await save(storage, s.id, actor, undefined);
      const elsewhere = await save(storage, s.id, actor, undefined, { agentId: 'agent', sessionId: 's2' });
      expect([first.revision, second.revision, elsewhere.revision]).toEqual([1, 2, 1]);
      expect(await storage.getLatestCheckpoint(s.id, 'agent', 's1')).toEqual(second);
      expect(await storage.getCheckpoint(s.id, first.id)).toEqual({ ...first, isLatest: false });
      expect(await storage.getLatestCheckpoint(s.id, 'agent', 's3')).toBeNull();
      expect(await storage.getCheckpoint((await addStore('other')).id, first.id)).toBeNull();
    });

    it('an expected latest id that is not the latest is a conflict, and saves nothing', async () => {
      const { storage, actor, addStore } = await fixture(makeStorage);
      const s = await addStore();
      const first = await save(storage, s.id, actor, null);
      expect(await codeOf(() => save(storage, s.id, actor, null))).toBe('conflict');
      expect(await codeOf(() => save(storage, s.id, actor, newId('checkpoint')))).toBe('conflict');
      expect((await storage.getLatestCheckpoint(s.id, 'agent', 's1'))?.id).toBe(first.id);
      expect((await save(storage, s.id, actor, first.id)).revision).toBe(2);
    });

    it('the latest checkpoint cannot be deleted until a newer one exists; an unknown one is not_found', async () => {
      const { storage, actor, addStore } = await fixture(makeStorage);
      const s = await addStore();
      const first = await save(storage, s.id, actor, undefined);
      expect(await codeOf(() => storage.deleteCheckpoint(s.id, first.id))).toBe('conflict');
      await save(storage, s.id, actor, undefined);
      await storage.deleteCheckpoint(s.id, first.id);
      expect(await storage.getCheckpoint(s.id, first.id)).toBeNull();
      expect(await codeOf(() => storage.deleteCheckpoint(s.id, first.id))).toBe('not_found');
    });

    it('a checkpoint of an archived store is refused, of an unknown store not_found', async () => {
      const { storage, actor, workspace, now, addStore } = await fixture(makeStorage);
      const s = await addStore();
      await storage.archiveStore(workspace.id, s.id, now());
      expect(await codeOf(() => save(storage, s.id, actor, undefined))).toBe('archived');
      expect(await codeOf(() => save(storage, newId('store'), actor, undefined))).toBe('not_found');
    });

    it('a checkpoint the usage counter would refuse is checked against the store less its expired memories', async () => {
      const { storage, stamp, now, actor, addStore } = await fixture(makeStorage);
      const s = await addStore();
      const limits = { ...DEFAULT_LIMITS, maxBytes: 1000 };
      const sized = (sizeBytes: number) => save(storage, s.id, actor, undefined, undefined, sizeBytes, checkpointAdmission(limits, s.id, sizeBytes));
      await storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/kept', content: 'k'.repeat(50) });
      // The fixture's clock runs in the past: an expiry at its now has passed for the adapter. The counter still holds it.
      await storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/expired', content: 'x'.repeat(900), expiresAt: now() });
      expect(await storage.storeUsage(s.id)).toEqual({ memories: 2, bytes: 950 });
      expect(await storage.liveStoreUsage(s.id)).toEqual({ memories: 1, bytes: 50, memoryBytes: 50 });
      // 950 + 100 is over 1,000; 50 + 100 is not.
      await sized(100);
      // What does not fit beside the live memory and that checkpoint is refused, and saved nothing.
      expect(await codeOf(() => sized(851))).toBe('limit_exceeded');
      expect((await storage.getLatestCheckpoint(s.id, 'agent', 's1'))?.sizeBytes).toBe(100);
      expect((await sized(850)).sizeBytes).toBe(850);
    });

    it("live store usage keeps the memories' bytes apart from the checkpoints', through saves and deletes of either", async () => {
      const { storage, stamp, now, actor, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const other = await addStore('other');
      // A checkpoint first: the store has no usage row yet.
      const first = await save(storage, s.id, actor, undefined, undefined, 300);
      expect(await storage.liveStoreUsage(s.id)).toEqual({ memories: 0, bytes: 300, memoryBytes: 0 });
      const m = await addMemory(s.id, '/a', 'abcd');
      await storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/expired', content: 'x'.repeat(40), expiresAt: now() });
      await save(storage, s.id, actor, undefined, undefined, 200);
      await save(storage, other.id, actor, undefined, undefined, 7000);
      expect(await storage.storeUsage(s.id)).toEqual({ memories: 2, bytes: 544 });
      expect(await storage.liveStoreUsage(s.id)).toEqual({ memories: 1, bytes: 504, memoryBytes: 4 });
      await storage.updateMemory({ ...stamp(), storeId: s.id, memoryId: m.id, content: 'abcdefgh' });
      await storage.deleteCheckpoint(s.id, first.id);
      expect(await storage.liveStoreUsage(s.id)).toEqual({ memories: 1, bytes: 208, memoryBytes: 8 });
      expect(await storage.liveStoreUsage(other.id)).toEqual({ memories: 0, bytes: 7000, memoryBytes: 0 });
      expect(await storage.domainCheck()).toEqual([]);
    });

    it('a referenced memory is found by id first, then by path, and an expired one is told from a missing one', async () => {
      const { storage, stamp, now, addStore, addMemory } = await fixture(makeStorage);
      const s = await addStore();
      const m = await addMemory(s.id, '/a');
      const { content: _content, ...meta } = m;
      expect(await storage.findReferencedMemory(s.id, { memoryId: m.id, path: '/elsewhere' })).toEqual({ state: 'live', memory: meta });
      expect(await storage.findReferencedMemory(s.id, { memoryId: null, path: '/a' })).toEqual({ state: 'live', memory: meta });
      expect(await storage.findReferencedMemory(s.id, { memoryId: newId('memory'), path: '/a' })).toEqual({ state: 'missing' });
      const gone = await storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/ttl', content: 'x', expiresAt: now() });
      expect(await storage.findReferencedMemory(s.id, { memoryId: gone.id, path: null })).toEqual({ state: 'expired' });
      // Still expired once a write purged it.
      await addMemory(s.id, '/b');
      expect(await storage.findReferencedMemory(s.id, { memoryId: gone.id, path: null })).toEqual({ state: 'expired' });
      expect(await storage.findReferencedMemory(s.id, { memoryId: null, path: '/ttl' })).toEqual({ state: 'expired' });
      expect(await storage.findReferencedMemory(s.id, { memoryId: null, path: '/never' })).toEqual({ state: 'missing' });
    });
  });
}
