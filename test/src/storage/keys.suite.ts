/** The keys role's conformance suite: workspaces, and API keys stored by their hash. */
import { describe, expect, it, onTestFinished } from 'vitest';
import { codeOf } from '../../helpers/core.js';
import { newId } from '../../../src/service/ids.js';
import { fixture, type MakeStorage } from './fixture.js';

export function runKeySuite(makeStorage: MakeStorage): void {
  describe('keys: workspaces and api keys', () => {
    it('a fresh storage has no default workspace', async () => {
      const storage = await makeStorage();
      onTestFinished(() => storage.close());
      expect(await storage.defaultWorkspace()).toBeNull();
      expect(await storage.countApiKeys()).toBe(0);
    });

    it('the default workspace is the one inserted as default', async () => {
      const { storage, workspace } = await fixture(makeStorage);
      await storage.insertWorkspace({ id: newId('workspace'), name: 'other', createdAt: workspace.createdAt }, false);
      expect(await storage.defaultWorkspace()).toEqual(workspace);
    });

    it('a second default workspace is not written: the first stays the default, and the list holds one', async () => {
      const { storage, workspace, now } = await fixture(makeStorage);
      await storage.insertWorkspace({ id: newId('workspace'), name: 'default', createdAt: now() }, true);
      expect(await storage.defaultWorkspace()).toEqual(workspace);
      expect(await storage.listWorkspaces()).toEqual([workspace]);
    });

    it('an api key is found by its hash only, and counted', async () => {
      const { storage, workspace, now } = await fixture(makeStorage);
      const key = { id: newId('apiKey'), workspaceId: workspace.id, name: 'ci', role: 'admin' as const, storeIds: null, allWorkspaces: false, createdAt: now(), revokedAt: null };
      await storage.insertApiKey(key, 'a'.repeat(64));
      expect(await storage.findApiKeyByHash('a'.repeat(64))).toEqual(key);
      expect(await storage.findApiKeyByHash('b'.repeat(64))).toBeNull();
      expect(await storage.countApiKeys()).toBe(1);
    });

    it('workspaces read back by id and list the default one first', async () => {
      const { storage, workspace, now } = await fixture(makeStorage);
      const other = { id: newId('workspace'), name: 'other', createdAt: now() };
      await storage.insertWorkspace(other, false);
      expect(await storage.getWorkspace(other.id)).toEqual(other);
      expect(await storage.getWorkspace(newId('workspace'))).toBeNull();
      expect(await storage.listWorkspaces()).toEqual([workspace, other]);
    });

    it('api keys list and read back only inside their workspace, with their grants', async () => {
      const { storage, workspace, now } = await fixture(makeStorage);
      const other = { id: newId('workspace'), name: 'other', createdAt: now() };
      await storage.insertWorkspace(other, false);
      const scoped = { id: newId('apiKey'), workspaceId: workspace.id, name: 'agent', role: 'read_write' as const, storeIds: ['memstore_a'], allWorkspaces: false, createdAt: now(), revokedAt: null };
      const wide = { id: newId('apiKey'), workspaceId: workspace.id, name: 'ops', role: 'admin' as const, storeIds: null, allWorkspaces: true, createdAt: now(), revokedAt: null };
      await storage.insertApiKey(scoped, 'c'.repeat(64));
      await storage.insertApiKey(wide, 'd'.repeat(64));
      expect(await storage.listApiKeys(workspace.id)).toEqual([scoped, wide]);
      expect(await storage.listApiKeys(other.id)).toEqual([]);
      expect(await storage.getApiKey(workspace.id, scoped.id)).toEqual(scoped);
      expect(await storage.getApiKey(other.id, scoped.id)).toBeNull();
      expect(await storage.getApiKeyById(scoped.id)).toEqual(scoped);
      expect(await storage.getApiKeyById(newId('apiKey'))).toBeNull();
    });

    it('the key mark moves when a key is revoked', async () => {
      const { storage, workspace, now } = await fixture(makeStorage);
      const key = { id: newId('apiKey'), workspaceId: workspace.id, name: 'stream', role: 'read_only' as const, storeIds: null, allWorkspaces: false, createdAt: now(), revokedAt: null };
      await storage.insertApiKey(key, '2'.repeat(64));
      const before = storage.keyMark();
      await storage.revokeApiKey(workspace.id, key.id, now());
      expect(storage.keyMark()).not.toBe(before);
    });

    it('revoking a key sets its revocation time once and stops counting it; an unknown key is not_found', async () => {
      const { storage, workspace, now } = await fixture(makeStorage);
      const key = { id: newId('apiKey'), workspaceId: workspace.id, name: 'ci', role: 'read_only' as const, storeIds: null, allWorkspaces: false, createdAt: now(), revokedAt: null };
      await storage.insertApiKey(key, 'e'.repeat(64));
      const at = now();
      expect(await storage.revokeApiKey(workspace.id, key.id, at)).toEqual({ ...key, revokedAt: at });
      expect((await storage.revokeApiKey(workspace.id, key.id, now())).revokedAt).toBe(at);
      expect((await storage.findApiKeyByHash('e'.repeat(64)))?.revokedAt).toBe(at);
      expect(await storage.countApiKeys()).toBe(0);
      expect(await codeOf(() => storage.revokeApiKey(workspace.id, newId('apiKey'), now()))).toBe('not_found');
    });

    it('the seeded admin key is found with its hash until revoked, and another key can take its place', async () => {
      const { storage, workspace, now } = await fixture(makeStorage);
      const make = (name: string) => ({ id: newId('apiKey'), workspaceId: workspace.id, name, role: 'admin' as const, storeIds: null, allWorkspaces: true, createdAt: now(), revokedAt: null });
      const first = make('seed');
      const next = make('next');
      expect(await storage.seededApiKey()).toBeNull();
      await storage.insertApiKey(first, 'f'.repeat(64), true);
      await storage.insertApiKey(next, '1'.repeat(64));
      expect(await storage.seededApiKey()).toEqual({ key: first, hash: 'f'.repeat(64) });
      await storage.revokeApiKey(workspace.id, first.id, now());
      expect(await storage.seededApiKey()).toBeNull();
      await storage.markApiKeySeeded(next.id);
      expect(await storage.seededApiKey()).toEqual({ key: next, hash: '1'.repeat(64) });
    });
  });
}
