/**
 * Migration 7 and the seeded admin key in storage: a database from before it, holding two bootstrap
 * operator keys (the old bug: a restart with another MNEMO_ADMIN_KEY added one), keeps exactly one
 * seeded key, the newest; and storage never holds two unrevoked seeded keys.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/service/keys.js';
import { MIGRATIONS } from '../../src/storage/sqlite/schema/migrations.js';
import { openSqliteStorage } from '../../src/storage/sqlite/open.js';
import { tmpDir } from '../helpers/tmp.js';

describe('the seeded admin key in storage', () => {
  it('migration 7 marks the newest unrevoked bootstrap key of an older database as the one seeded key', async () => {
    const file = join(tmpDir(), 'mnemo.db');
    const raw = new Database(file);
    for (const m of MIGRATIONS.filter((x) => x.version <= 5)) {
      raw.exec(m.sql);
      raw.pragma(`user_version = ${m.version}`);
    }
    raw.prepare("INSERT INTO workspaces (id, name, is_default, created_at) VALUES ('wrkspc_a', 'default', 1, '2026-01-01T00:00:00.000Z')").run();
    const insert = raw.prepare(
      "INSERT INTO api_keys (id, workspace_id, name, role, key_hash, created_at, all_workspaces) VALUES (?, 'wrkspc_a', ?, 'admin', ?, ?, 1)",
    );
    insert.run('apikey_old', 'admin (MNEMO_ADMIN_KEY)', hashSecret('old'), '2026-01-01T00:00:01.000Z');
    insert.run('apikey_new', 'admin (MNEMO_ADMIN_KEY)', hashSecret('new'), '2026-01-02T00:00:01.000Z');
    insert.run('apikey_made', 'admin (made by hand)', hashSecret('other'), '2026-01-03T00:00:01.000Z');
    raw.close();

    const storage = openSqliteStorage(file);
    try {
      expect(await storage.seededApiKey()).toMatchObject({ key: { id: 'apikey_new' }, hash: hashSecret('new') });
    } finally {
      await storage.close();
    }
  });

  it('refuses a second unrevoked seeded key', async () => {
    const storage = openSqliteStorage(join(tmpDir(), 'mnemo.db'));
    try {
      const ws = { id: 'wrkspc_b', name: 'default', createdAt: '2026-01-01T00:00:00.000Z' };
      await storage.insertWorkspace(ws, true);
      const key = (id: string) => ({
        id,
        workspaceId: ws.id,
        name: id,
        role: 'admin' as const,
        storeIds: null,
        allWorkspaces: true,
        createdAt: ws.createdAt,
        revokedAt: null,
      });
      await storage.insertApiKey(key('apikey_1'), hashSecret('one'), true);
      await expect(storage.insertApiKey(key('apikey_2'), hashSecret('two'), true)).rejects.toThrow(/UNIQUE/);
      await storage.revokeApiKey(ws.id, 'apikey_1', '2026-01-02T00:00:00.000Z');
      expect(await storage.seededApiKey()).toBeNull();
      await storage.insertApiKey(key('apikey_3'), hashSecret('three'), true);
      expect((await storage.seededApiKey())?.key.id).toBe('apikey_3');
    } finally {
      await storage.close();
    }
  });
});
