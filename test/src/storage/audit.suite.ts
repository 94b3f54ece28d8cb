/** The audit role's conformance suite: the append-only log of admin actions, per workspace, newest first. */
import { describe, expect, it } from 'vitest';
import { newId } from '../../../src/service/ids.js';
import type { AdminAction } from '../../../src/domain/types.js';
import { fixture, type MakeStorage } from './fixture.js';

export function runAuditSuite(makeStorage: MakeStorage): void {
  describe('audit: admin actions', () => {
    it('entries read back per workspace, newest first, a page at a time', async () => {
      const { storage, workspace, actor, now } = await fixture(makeStorage);
      const other = { id: newId('workspace'), name: 'other', createdAt: now() };
      await storage.insertWorkspace(other, false);
      const entry = (workspaceId: string, action: AdminAction['action'], storeId: string | null = null): AdminAction => ({
        id: newId('adminAction'), workspaceId, action, actor, targetId: newId('apiKey'), storeId, summary: `${action} summary`, createdAt: now(),
      });
      const [a, b, c] = [entry(workspace.id, 'api_key.created'), entry(workspace.id, 'memory_store.deleted', newId('store')), entry(other.id, 'session.ended')];
      for (const e of [a, b, c]) await storage.insertAdminAction(e);
      expect((await storage.listAdminActions(workspace.id, 10, null)).data).toEqual([b, a]);
      const first = await storage.listAdminActions(workspace.id, 1, null);
      expect(first.data).toEqual([b]);
      const second = await storage.listAdminActions(workspace.id, 1, first.nextPage);
      expect(second).toEqual({ data: [a], nextPage: null });
      expect((await storage.listAdminActions(other.id, 10, null)).data).toEqual([c]);
    });

    it('an entry written inside atomic rolls back with the action it records', async () => {
      const { storage, workspace, actor, now } = await fixture(makeStorage);
      const e: AdminAction = { id: newId('adminAction'), workspaceId: workspace.id, action: 'memory_store.archived', actor, targetId: 'x', storeId: null, summary: '', createdAt: now() };
      await expect(storage.atomic(async (tx) => {
        await tx.insertAdminAction(e);
        throw new Error('the action failed');
      })).rejects.toThrow('the action failed');
      expect((await storage.listAdminActions(workspace.id, 10, null)).data).toEqual([]);
    });

    it('an entry outlives the store it names', async () => {
      const { storage, workspace, actor, now, addStore } = await fixture(makeStorage);
      const store = await addStore('gone');
      const e: AdminAction = { id: newId('adminAction'), workspaceId: workspace.id, action: 'memory_store.deleted', actor, targetId: store.id, storeId: store.id, summary: 'gone', createdAt: now() };
      await storage.atomic(async (tx) => {
        await tx.deleteStore(workspace.id, store.id);
        await tx.insertAdminAction(e);
      });
      expect((await storage.listAdminActions(workspace.id, 10, null)).data).toEqual([e]);
    });
  });
}
