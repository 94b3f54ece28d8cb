/**
 * `mnemo check`, `mnemo backup` and `mnemo restore`: the domain invariants are checked and each broken
 * one is reported by name; a backup taken while the server writes is consistent and restores. (issue 4)
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openCore } from '../helpers/core.js';
import { sdkClient } from '../helpers/sdk.js';
import { runCli, startServer } from '../helpers/server.js';
import { tmpDir } from '../helpers/tmp.js';
import { collect } from '../api/shapes.js';

async function populated() {
  const core = await openCore();
  const s = await core.service.createStore(core.caller, { name: 'checked', description: '', metadata: {} });
  const a = await core.service.createMemory(core.caller, s.id, { path: '/a/b.md', content: 'hello' });
  await core.service.updateMemory(core.caller, s.id, a.id, { content: 'hello again' });
  await core.service.createMemory(core.caller, s.id, { path: '/c.md', content: 'sea' });
  return { core, store: s, memory: a };
}

describe('mnemo check', () => {
  it('finds nothing wrong in a database written through the service', async () => {
    const { core } = await populated();
    expect(await core.storage.integrityCheck()).toEqual([]);
    expect(await core.storage.domainCheck()).toEqual([]);
    core.close();
    const res = await runCli(['check', '--data-dir', core.dir]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^ok: /);
  });

  it('reports a version whose stored text is gone, a text no version holds, and a text that does not hash to its key (invariant 19)', async () => {
    const { core } = await populated();
    core.close();
    const db = new Database(core.file);
    const held = db.prepare("SELECT v.id, v.content_sha256 AS sha FROM versions v JOIN memories m ON m.version_id = v.id WHERE m.path = '/c.md'").get() as { id: string; sha: string };
    db.prepare('DELETE FROM contents WHERE sha256 = ?').run(held.sha);
    db.prepare("INSERT INTO contents (sha256, content) VALUES ('00', 'held by nobody')").run();
    db.close();
    const res = await runCli(['check', '--data-dir', core.dir]);
    expect(res.code).toBe(1);
    expect(res.stdout).toContain(`version ${held.id} in `);
    // The memory row names the same text by sha: its check says the text is gone too.
    expect(res.stdout).toMatch(/memory \S+ \(\/c\.md\) in \S+: its content is not stored/);
    expect(res.stdout).toContain('its content is not stored');
    expect(res.stdout).toContain('content 00: stored, but no version holds it');
    expect(res.stdout).toContain('content 00: its text does not hash to its key');
  });

  it("reports a version without its content time or its memory's creation, which an as_of mount would date 1970 (invariant 20)", async () => {
    const { core, memory } = await populated();
    await core.close();
    const db = new Database(core.file);
    const v = db.prepare('SELECT id, store_id FROM versions WHERE memory_id = ? ORDER BY seq LIMIT 1').get(memory.id) as { id: string; store_id: string };
    // Only an older writer's append leaves them out; plain SQL stands in for it here.
    const trigger = (db.prepare("SELECT sql FROM sqlite_master WHERE name = 'versions_append_only_update'").pluck().get() as string);
    db.exec('DROP TRIGGER versions_append_only_update');
    db.prepare('UPDATE versions SET content_at = NULL, memory_created_at = NULL WHERE id = ?').run(v.id);
    db.exec(trigger);
    db.close();
    const res = await runCli(['check', '--data-dir', core.dir]);
    expect(res.code).toBe(1);
    expect(res.stdout).toContain(`version ${v.id} in ${v.store_id}: has no content_at or memory_created_at`);
  });

  it('reports a head version that does not match, a missing head, overlapping paths and a dangling receipt', async () => {
    const { core, store, memory } = await populated();
    core.close();
    const db = new Database(core.file);
    // The row names its text by sha: a text stored under a wrong key makes the same mismatch.
    db.prepare("INSERT INTO contents (sha256, content) VALUES ('tampered', 'tampered')").run();
    db.prepare("UPDATE memories SET content_sha256 = 'tampered' WHERE id = ?").run(memory.id);
    db.prepare("UPDATE memories SET version_id = 'memver_missing' WHERE path = '/c.md'").run();
    db.prepare(
      `INSERT INTO memories (id, store_id, path, content_sha256, content_size_bytes, version_id, created_at, updated_at)
       SELECT 'mem_overlap', store_id, '/a', content_sha256, 0, version_id, created_at, updated_at FROM memories WHERE path = '/c.md'`,
    ).run();
    db.prepare(
      `INSERT INTO idempotency_receipts (workspace_id, api_key_id, route, idem_key, fingerprint, status, body, store_id, version_id, created_at, expires_at)
       VALUES ('wrkspc_x', 'apikey_x', 'POST /v1/memory_stores/{id}/memories', 'k1', 'f', 200, '{}', ?, 'memver_gone', '2026-01-01T00:00:00.000Z', '2999-01-01T00:00:00.000Z')`,
    ).run(store.id);
    db.close();

    const res = await runCli(['check', '--data-dir', core.dir]);
    expect(res.code).toBe(1);
    const lines = res.stdout.trim().split('\n');
    expect(lines.every((l) => l.startsWith('problem: '))).toBe(true);
    expect(res.stdout).toContain(`memory ${memory.id} (/a/b.md)`);
    expect(res.stdout).toContain('content_sha256 does not match its content');
    expect(res.stdout).toContain('head version memver_missing does not exist');
    expect(res.stdout).toContain('path overlaps the live memory at /a');
    expect(res.stdout).toContain('points at version memver_gone, which does not exist');
  });
});

describe('backup and restore', () => {
  it('backs up while the server writes, refuses to restore under a live server, and restores after it stops', async () => {
    const dataDir = tmpDir('mnemo-backup-');
    const server = await startServer({ dataDir });
    const env = { MNEMO_ADMIN_KEY: server.adminKey };
    const client = sdkClient(server.url, server.adminKey);
    const store = await client.beta.memoryStores.create({ name: 'backed up' });
    for (let i = 0; i < 20; i++) await client.beta.memoryStores.memories.create(store.id, { path: `/m${i}.md`, content: `n${i}` });

    // Writers keep going while the backup runs.
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) {
        await client.beta.memoryStores.memories.create(store.id, { path: `/during/${written}.md`, content: 'x' });
        written++;
      }
    })();
    const file = join(tmpDir('mnemo-backup-out-'), 'copy.db');
    const backup = await runCli(['backup', file, '--data-dir', dataDir]);
    writing = false;
    await writer;
    expect(backup.code, backup.stderr).toBe(0);
    expect(existsSync(file)).toBe(true);

    const refused = await runCli(['restore', file, '--data-dir', dataDir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/running/);

    await server.stop();
    // The copy is consistent on its own: check it in a data dir of its own.
    const copyDir = tmpDir('mnemo-backup-check-');
    expect((await runCli(['restore', file, '--data-dir', copyDir])).code).toBe(0);
    expect((await runCli(['check', '--data-dir', copyDir])).code).toBe(0);

    const restored = await runCli(['restore', file, '--data-dir', dataDir]);
    expect(restored.code, restored.stderr).toBe(0);
    const again = await startServer({ dataDir, env });
    try {
      const c = sdkClient(again.url, again.adminKey);
      const memories = await collect(c.beta.memoryStores.memories.list(store.id, { limit: 100 }));
      const versions = await collect(c.beta.memoryStores.memoryVersions.list(store.id, { limit: 100 }));
      expect(memories.length).toBeGreaterThanOrEqual(20);
      expect(memories.length).toBeLessThanOrEqual(20 + written);
      expect(versions.length).toBe(memories.length);
    } finally {
      await again.stop();
    }
    expect((await runCli(['check', '--data-dir', dataDir])).code).toBe(0);
  });

  it('refuses a file that is not a mnemo database', async () => {
    const dir = tmpDir('mnemo-restore-bad-');
    const res = await runCli(['restore', join(dir, 'nope.db'), '--data-dir', dir]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/refusing to restore/);
  });

  it("reports versions that share a number at their path, or have none (the mount's .history)", async () => {
    const { core, memory } = await populated();
    core.close();
    const db = new Database(core.file);
    // Plain SQL past the append-only trigger: what a hand edit could do.
    db.exec('DROP TRIGGER versions_append_only_update');
    db.prepare('UPDATE versions SET path_seq = 1 WHERE memory_id = ?').run(memory.id);
    db.prepare("UPDATE versions SET path_seq = NULL WHERE path = '/c.md'").run();
    db.close();
    const res = await runCli(['check', '--data-dir', core.dir]);
    expect(res.code).toBe(1);
    expect(res.stdout).toContain('2 versions at "/a/b.md" share number 1 (.history)');
    expect(res.stdout).toContain('1 version(s) at "/c.md" have no number at their path (.history)');
  });
});
