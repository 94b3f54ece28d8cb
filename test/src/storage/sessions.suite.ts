/** The sessions role's conformance suite: mount sessions, active until ended once. */
import { describe, expect, it } from 'vitest';
import { codeOf } from '../../helpers/core.js';
import { newId } from '../../../src/service/ids.js';
import type { Session, SessionResource } from '../../../src/domain/types.js';
import { fixture, type MakeStorage } from './fixture.js';

export function runSessionSuite(makeStorage: MakeStorage): void {
  describe('sessions', () => {
    it('sessions read back, list newest first, and end once', async () => {
      const { storage, workspace, now } = await fixture(makeStorage);
      const make = (): Session => ({ id: newId('session'), workspaceId: workspace.id, status: 'active', resources: [], createdAt: now(), endedAt: null });
      const [a, b] = [make(), make()];
      await storage.insertSession(a);
      await storage.insertSession(b);
      expect(await storage.getSession(workspace.id, a.id)).toEqual(a);
      expect(await storage.getSession(newId('workspace'), a.id)).toBeNull();
      expect((await storage.listSessions(workspace.id, 10, null)).data.map((s) => s.id)).toEqual([b.id, a.id]);
      const first = await storage.listSessions(workspace.id, 1, null);
      expect((await storage.listSessions(workspace.id, 1, first.nextPage)).data.map((s) => s.id)).toEqual([a.id]);
      const at = now();
      expect(await storage.endSession(workspace.id, a.id, at)).toMatchObject({ status: 'ended', endedAt: at });
      expect((await storage.endSession(workspace.id, a.id, now())).endedAt).toBe(at);
      expect((await storage.listActiveSessions()).map((s) => s.id)).toEqual([b.id]);
      expect(await codeOf(() => storage.endSession(workspace.id, newId('session'), now()))).toBe('not_found');
    });

    it('active sessions are counted per workspace, and ending one counts it no more', async () => {
      const { storage, workspace, now } = await fixture(makeStorage);
      const other = { id: newId('workspace'), name: 'other', createdAt: now() };
      await storage.insertWorkspace(other, false);
      const make = (workspaceId: string): Session => ({ id: newId('session'), workspaceId, status: 'active', resources: [], createdAt: now(), endedAt: null });
      const [a, b, c] = [make(workspace.id), make(workspace.id), make(other.id)];
      for (const s of [a, b, c]) await storage.insertSession(s);
      expect(await storage.countActiveSessions(workspace.id)).toBe(2);
      expect(await storage.countActiveSessions(other.id)).toBe(1);
      await storage.endSession(workspace.id, a.id, now());
      expect(await storage.countActiveSessions(workspace.id)).toBe(1);
      expect(await codeOf(() => storage.endSession(other.id, b.id, now()))).toBe('not_found');
    });

    it('moving an active session records its resources and node, and an ended session stays as it ended', async () => {
      const { storage, workspace, now } = await fixture(makeStorage);
      const storeId = newId('store');
      const at = (hostPath: string): SessionResource[] => [{
        type: 'memory_store', storeId, access: 'read_write', instructions: null, name: 'notes',
        description: '', slug: 'notes', mountPath: '/mnt/memory/notes', hostPath,
      }];
      const make = (): Session => ({ id: newId('session'), workspaceId: workspace.id, status: 'active', resources: at('/old/notes'), createdAt: now(), endedAt: null });
      const [live, ended] = [make(), make()];
      await storage.insertSession(live);
      await storage.insertSession(ended);
      await storage.endSession(workspace.id, ended.id, now());
      await storage.moveSession(workspace.id, live.id, at('/new/notes'), 'host-a');
      await storage.moveSession(workspace.id, ended.id, at('/new/notes'), 'host-a');
      expect(await storage.getSession(workspace.id, live.id)).toEqual({ ...live, resources: at('/new/notes'), nodeId: 'host-a' });
      expect(await storage.getSession(workspace.id, ended.id)).toMatchObject({ status: 'ended', resources: ended.resources });
      expect((await storage.getSession(workspace.id, ended.id))?.nodeId).toBeUndefined();
    });

    it('a session keeps the key that created it, and a key\'s active sessions are listed, in any workspace, until they end', async () => {
      const { storage, workspace, now } = await fixture(makeStorage);
      const other = { id: newId('workspace'), name: 'other', createdAt: now() };
      await storage.insertWorkspace(other, false);
      const [key, otherKey] = [newId('apiKey'), newId('apiKey')];
      const make = (workspaceId: string, apiKeyId: string | null): Session => ({
        id: newId('session'), workspaceId, status: 'active', resources: [], createdAt: now(), endedAt: null,
        ...(apiKeyId === null ? {} : { createdBy: { type: 'api_actor' as const, apiKeyId } }),
      });
      const [a, b, c, none] = [make(workspace.id, key), make(other.id, key), make(workspace.id, otherKey), make(workspace.id, null)];
      for (const s of [a, b, c, none]) await storage.insertSession(s);
      expect(await storage.getSession(workspace.id, a.id)).toEqual(a);
      expect(await storage.getSession(workspace.id, none.id)).toEqual(none);
      expect(await storage.listActiveSessionsOfKey(key)).toEqual([a, b]);
      await storage.endSession(workspace.id, a.id, now());
      expect((await storage.listActiveSessionsOfKey(key)).map((s) => s.id)).toEqual([b.id]);
      expect((await storage.listActiveSessionsOfKey(otherKey)).map((s) => s.id)).toEqual([c.id]);
    });

    it('sessions served by a mnemo mount process are listed apart from the server\'s', async () => {
      const { storage, workspace, now } = await fixture(makeStorage);
      const resources: SessionResource[] = [{
        type: 'memory_store', storeId: newId('store'), access: 'read_write', instructions: null, name: 'notes',
        description: '', slug: 'notes', mountPath: '/mnt/memory/notes', hostPath: '/tmp/mnemo/notes',
      }];
      const served: Session = { id: newId('session'), workspaceId: workspace.id, status: 'active', resources, createdAt: now(), endedAt: null };
      const local: Session = { ...served, id: newId('session'), localPid: 4242 };
      await storage.insertSession(served);
      await storage.insertSession(local);
      expect((await storage.listActiveSessions()).map((s) => s.id)).toEqual([served.id]);
      expect(await storage.listActiveLocalSessions()).toEqual([local]);
      expect((await storage.getSession(workspace.id, served.id))?.resources).toEqual(resources);
      await storage.endSession(workspace.id, local.id, now());
      expect(await storage.listActiveLocalSessions()).toEqual([]);
    });
  });
}
