/** The console-sessions role's conformance suite: sign-ins found by their hash, touched, ended one by one and by idleness. */
import { describe, expect, it } from 'vitest';
import { newId } from '../../../src/service/ids.js';
import type { StoredConsoleSession } from '../../../src/storage/port.js';
import { fixture, type MakeStorage } from './fixture.js';

export function runConsoleSessionSuite(makeStorage: MakeStorage): void {
  describe('console sessions', () => {
    async function withKey() {
      const f = await fixture(makeStorage);
      const key = { id: newId('apiKey'), workspaceId: f.workspace.id, name: 'console', role: 'admin' as const, storeIds: null, allWorkspaces: false, createdAt: f.now(), revokedAt: null };
      await f.storage.insertApiKey(key, 'k'.repeat(64));
      const session = (idHash: string, lastSeenAt: string): StoredConsoleSession => ({
        idHash, csrf: `csrf-${idHash}`, keyId: key.id, keyHash: 'k'.repeat(64), createdAt: lastSeenAt, lastSeenAt,
      });
      return { ...f, key, session };
    }

    it('a session is found by its hash only, and its last request time moves when touched', async () => {
      const { storage, session } = await withKey();
      const s = session('a'.repeat(64), '2026-03-01T00:00:00.000Z');
      await storage.insertConsoleSession(s);
      expect(await storage.findConsoleSession(s.idHash)).toEqual(s);
      expect(await storage.findConsoleSession('b'.repeat(64))).toBeNull();
      await storage.touchConsoleSession(s.idHash, '2026-03-01T05:00:00.000Z');
      expect(await storage.findConsoleSession(s.idHash)).toEqual({ ...s, lastSeenAt: '2026-03-01T05:00:00.000Z' });
    });

    it('deleting ends one session; purging ends exactly those idle since before the given time', async () => {
      const { storage, session } = await withKey();
      const old = session('1'.repeat(64), '2026-03-01T00:00:00.000Z');
      const recent = session('2'.repeat(64), '2026-03-01T10:00:00.000Z');
      const gone = session('3'.repeat(64), '2026-03-01T10:00:00.000Z');
      for (const s of [old, recent, gone]) await storage.insertConsoleSession(s);
      await storage.deleteConsoleSession(gone.idHash);
      expect(await storage.findConsoleSession(gone.idHash)).toBeNull();
      expect(await storage.purgeConsoleSessions('2026-03-01T10:00:00.000Z')).toBe(1);
      expect(await storage.findConsoleSession(old.idHash)).toBeNull();
      expect(await storage.findConsoleSession(recent.idHash)).toEqual(recent);
    });

    it('a session of a key that does not exist is refused by the schema', async () => {
      const { storage, session } = await withKey();
      await expect(storage.insertConsoleSession({ ...session('c'.repeat(64), '2026-03-01T00:00:00.000Z'), keyId: newId('apiKey') })).rejects.toThrow();
    });
  });
}
