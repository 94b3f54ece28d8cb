/** The checkpoints role's conformance suite: immutable bundles, one latest per (agent, session), and the lookups a restore makes. */
import { describe, expect, it } from 'vitest';
import { codeOf } from '../../helpers/core.js';
import { newId } from '../../../src/service/ids.js';
import type { InsertCheckpointInput, Storage } from '../../../src/storage/port.js';
import type { Actor } from '../../../src/domain/types.js';
import { fixture, type MakeStorage } from './fixture.js';

export function runCheckpointSuite(makeStorage: MakeStorage): void {
  describe('checkpoints', () => {
    function save(storage: Storage, storeId: string, actor: Actor, expectedLatestId: string | null | undefined, who = { agentId: 'agent', sessionId: 's1' }) {
      const input: InsertCheckpointInput = {
        checkpoint: {
          ...who, goal: 'ship it', summary: 'so far', constraints: ['c'], decisions: ['d'], openTasks: ['t'], nextAction: null,
          capsule: 'capsule', references: [], id: newId('checkpoint'), storeId, sizeBytes: 100, createdAt: '2026-03-01T00:00:00.000Z', createdBy: actor,
        },
        expectedLatestId,
      };
      return storage.insertCheckpoint(input);
    }

    it('checkpoints of an (agent, session) take revisions 1, 2, … and the newest is the latest', () => {
      const { storage, actor, addStore } = fixture(makeStorage);
      const s = addStore();
      const first = save(storage, s.id, actor, undefined);
      const second = save(storage, s.id, actor, undefined);
      const elsewhere = save(storage, s.id, actor, undefined, { agentId: 'agent', sessionId: 's2' });
      expect([first.revision, second.revision, elsewhere.revision]).toEqual([1, 2, 1]);
      expect(storage.getLatestCheckpoint(s.id, 'agent', 's1')).toEqual(second);
      expect(storage.getCheckpoint(s.id, first.id)).toEqual({ ...first, isLatest: false });
      expect(storage.getLatestCheckpoint(s.id, 'agent', 's3')).toBeNull();
      expect(storage.getCheckpoint(addStore('other').id, first.id)).toBeNull();
    });

    it('an expected latest id that is not the latest is a conflict, and saves nothing', () => {
      const { storage, actor, addStore } = fixture(makeStorage);
      const s = addStore();
      const first = save(storage, s.id, actor, null);
      expect(codeOf(() => save(storage, s.id, actor, null))).toBe('conflict');
      expect(codeOf(() => save(storage, s.id, actor, newId('checkpoint')))).toBe('conflict');
      expect(storage.getLatestCheckpoint(s.id, 'agent', 's1')?.id).toBe(first.id);
      expect(save(storage, s.id, actor, first.id).revision).toBe(2);
    });

    it('the latest checkpoint cannot be deleted until a newer one exists; an unknown one is not_found', () => {
      const { storage, actor, addStore } = fixture(makeStorage);
      const s = addStore();
      const first = save(storage, s.id, actor, undefined);
      expect(codeOf(() => storage.deleteCheckpoint(s.id, first.id))).toBe('conflict');
      save(storage, s.id, actor, undefined);
      storage.deleteCheckpoint(s.id, first.id);
      expect(storage.getCheckpoint(s.id, first.id)).toBeNull();
      expect(codeOf(() => storage.deleteCheckpoint(s.id, first.id))).toBe('not_found');
    });

    it('a checkpoint of an archived store is refused, of an unknown store not_found', () => {
      const { storage, actor, workspace, now, addStore } = fixture(makeStorage);
      const s = addStore();
      storage.archiveStore(workspace.id, s.id, now());
      expect(codeOf(() => save(storage, s.id, actor, undefined))).toBe('archived');
      expect(codeOf(() => save(storage, newId('store'), actor, undefined))).toBe('not_found');
    });

    it('a referenced memory is found by id first, then by path, and an expired one is told from a missing one', () => {
      const { storage, stamp, now, addStore, addMemory } = fixture(makeStorage);
      const s = addStore();
      const m = addMemory(s.id, '/a');
      const { content: _content, ...meta } = m;
      expect(storage.findReferencedMemory(s.id, { memoryId: m.id, path: '/elsewhere' })).toEqual({ state: 'live', memory: meta });
      expect(storage.findReferencedMemory(s.id, { memoryId: null, path: '/a' })).toEqual({ state: 'live', memory: meta });
      expect(storage.findReferencedMemory(s.id, { memoryId: newId('memory'), path: '/a' })).toEqual({ state: 'missing' });
      const gone = storage.createMemory({ ...stamp(), storeId: s.id, memoryId: newId('memory'), path: '/ttl', content: 'x', expiresAt: now() });
      expect(storage.findReferencedMemory(s.id, { memoryId: gone.id, path: null })).toEqual({ state: 'expired' });
      // Still expired once a write purged it.
      addMemory(s.id, '/b');
      expect(storage.findReferencedMemory(s.id, { memoryId: gone.id, path: null })).toEqual({ state: 'expired' });
      expect(storage.findReferencedMemory(s.id, { memoryId: null, path: '/ttl' })).toEqual({ state: 'expired' });
      expect(storage.findReferencedMemory(s.id, { memoryId: null, path: '/never' })).toEqual({ state: 'missing' });
    });
  });
}
