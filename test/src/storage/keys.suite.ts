/** The keys role's conformance suite: workspaces, and API keys stored by their hash. */
import { describe, expect, it, onTestFinished } from 'vitest';
import { codeOf } from '../../helpers/core.js';
import { newId } from '../../../src/service/ids.js';
import { fixture, type MakeStorage } from './fixture.js';

export function runKeySuite(makeStorage: MakeStorage): void {
  describe('keys: workspaces and api keys', () => {
    it('a fresh storage has no default workspace', () => {
      const storage = makeStorage();
      onTestFinished(() => storage.close());
      expect(storage.defaultWorkspace()).toBeNull();
      expect(storage.countApiKeys()).toBe(0);
    });

    it('the default workspace is the one inserted as default', () => {
      const { storage, workspace } = fixture(makeStorage);
      storage.insertWorkspace({ id: newId('workspace'), name: 'other', createdAt: workspace.createdAt }, false);
      expect(storage.defaultWorkspace()).toEqual(workspace);
    });

    it('an api key is found by its hash only, and counted', () => {
      const { storage, workspace, now } = fixture(makeStorage);
      const key = { id: newId('apiKey'), workspaceId: workspace.id, name: 'ci', role: 'admin' as const, storeIds: null, allWorkspaces: false, createdAt: now(), revokedAt: null };
      storage.insertApiKey(key, 'a'.repeat(64));
      expect(storage.findApiKeyByHash('a'.repeat(64))).toEqual(key);
      expect(storage.findApiKeyByHash('b'.repeat(64))).toBeNull();
      expect(storage.countApiKeys()).toBe(1);
    });

    it('workspaces read back by id and list the default one first', () => {
      const { storage, workspace, now } = fixture(makeStorage);
      const other = { id: newId('workspace'), name: 'other', createdAt: now() };
      storage.insertWorkspace(other, false);
      expect(storage.getWorkspace(other.id)).toEqual(other);
      expect(storage.getWorkspace(newId('workspace'))).toBeNull();
      expect(storage.listWorkspaces()).toEqual([workspace, other]);
    });

    it('api keys list and read back only inside their workspace, with their grants', () => {
      const { storage, workspace, now } = fixture(makeStorage);
      const other = { id: newId('workspace'), name: 'other', createdAt: now() };
      storage.insertWorkspace(other, false);
      const scoped = { id: newId('apiKey'), workspaceId: workspace.id, name: 'agent', role: 'read_write' as const, storeIds: ['memstore_a'], allWorkspaces: false, createdAt: now(), revokedAt: null };
      const wide = { id: newId('apiKey'), workspaceId: workspace.id, name: 'ops', role: 'admin' as const, storeIds: null, allWorkspaces: true, createdAt: now(), revokedAt: null };
      storage.insertApiKey(scoped, 'c'.repeat(64));
      storage.insertApiKey(wide, 'd'.repeat(64));
      expect(storage.listApiKeys(workspace.id)).toEqual([scoped, wide]);
      expect(storage.listApiKeys(other.id)).toEqual([]);
      expect(storage.getApiKey(workspace.id, scoped.id)).toEqual(scoped);
      expect(storage.getApiKey(other.id, scoped.id)).toBeNull();
    });

    it('revoking a key sets its revocation time once and stops counting it; an unknown key is not_found', () => {
      const { storage, workspace, now } = fixture(makeStorage);
      const key = { id: newId('apiKey'), workspaceId: workspace.id, name: 'ci', role: 'read_only' as const, storeIds: null, allWorkspaces: false, createdAt: now(), revokedAt: null };
      storage.insertApiKey(key, 'e'.repeat(64));
      const at = now();
      expect(storage.revokeApiKey(workspace.id, key.id, at)).toEqual({ ...key, revokedAt: at });
      expect(storage.revokeApiKey(workspace.id, key.id, now()).revokedAt).toBe(at);
      expect(storage.findApiKeyByHash('e'.repeat(64))?.revokedAt).toBe(at);
      expect(storage.countApiKeys()).toBe(0);
      expect(codeOf(() => storage.revokeApiKey(workspace.id, newId('apiKey'), now()))).toBe('not_found');
    });

    it('the seeded admin key is found with its hash until revoked, and another key can take its place', () => {
      const { storage, workspace, now } = fixture(makeStorage);
      const make = (name: string) => ({ id: newId('apiKey'), workspaceId: workspace.id, name, role: 'admin' as const, storeIds: null, allWorkspaces: true, createdAt: now(), revokedAt: null });
      const first = make('seed');
      const next = make('next');
      expect(storage.seededApiKey()).toBeNull();
      storage.insertApiKey(first, 'f'.repeat(64), true);
      storage.insertApiKey(next, '1'.repeat(64));
      expect(storage.seededApiKey()).toEqual({ key: first, hash: 'f'.repeat(64) });
      storage.revokeApiKey(workspace.id, first.id, now());
      expect(storage.seededApiKey()).toBeNull();
      storage.markApiKeySeeded(next.id);
      expect(storage.seededApiKey()).toEqual({ key: next, hash: '1'.repeat(64) });
    });
  });
}
