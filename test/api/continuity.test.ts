/**
 * The continuity test issue 6 exists for: an agent session writes records and a checkpoint, the
 * server is killed with SIGKILL and started again on the same data, and a restore within the
 * default budget gives back everything the agent needs, with the status of each reference.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { extensions } from '../helpers/continuity.js';
import { makeTempDir, startServer, type RunningServer } from '../helpers/server.js';
import { sdkClient } from '../helpers/sdk.js';
import { freshStore } from './shapes.js';

const dataDir = makeTempDir('mnemo-continuity-');
const adminKey = 'mnemo-test-continuity-admin-key-0123456789';
const running: RunningServer[] = [];

afterAll(async () => {
  for (const s of running) await s.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function boot(): Promise<RunningServer> {
  const s = await startServer({ dataDir, env: { MNEMO_ADMIN_KEY: adminKey } });
  running.push(s);
  return s;
}

describe('agent continuity across a crash', () => {
  it('restores goal, constraints, decisions, open tasks, next action and references after kill -9 and restart', async () => {
    const first = await boot();
    const client = sdkClient(first.url, adminKey);
    const store = await freshStore(client, 'agent memory');
    const mem = client.beta.memoryStores.memories;
    const plan = await mem.create(store.id, { path: '/task/plan.md', content: '1. migrate\n2. verify\n' });
    const log = await mem.create(store.id, { path: '/task/log.md', content: 'migrated users table\n' });
    const scratch = await mem.create(store.id, { path: '/task/scratch.md', content: 'temp' });
    const saved = await extensions(client).checkpoint(store.id, {
      agent_id: 'coder',
      session_id: 'run-42',
      goal: 'Migrate the database to the new schema',
      summary: 'Long narrative of everything tried so far.',
      constraints: ['no downtime', 'keep the old columns until verified'],
      decisions: ['migrate table by table'],
      open_tasks: ['verify row counts', 'drop old columns'],
      next_action: 'verify row counts on users',
      capsule: 'You are migrating the database; users is done, verify it next.',
      references: [
        { path: '/task/plan.md', content_sha256: plan.content_sha256 },
        { memory_id: log.id, content_sha256: log.content_sha256, note: 'what was done' },
        { path: '/task/scratch.md', content_sha256: scratch.content_sha256 },
      ],
    });
    // After the checkpoint, the agent keeps working: one record changes, one goes away.
    await mem.update(log.id, { memory_store_id: store.id, content: 'migrated users table\nstarted orders\n' });
    await mem.delete(scratch.id, { memory_store_id: store.id });

    await first.kill9();
    const second = await boot();
    const restored = await extensions(sdkClient(second.url, adminKey)).restoreLatest(store.id, 'coder', 'run-42');

    expect(restored).toMatchObject({
      type: 'checkpoint_restore',
      checkpoint_id: saved.id,
      revision: 1,
      locator: saved.locator,
      goal: 'Migrate the database to the new schema',
      constraints: ['no downtime', 'keep the old columns until verified'],
      decisions: ['migrate table by table'],
      open_tasks: ['verify row counts', 'drop old columns'],
      next_action: 'verify row counts on users',
      capsule: 'You are migrating the database; users is done, verify it next.',
      summary: 'Long narrative of everything tried so far.',
      omitted: [],
      max_bytes: 32 * 1024,
    });
    expect(restored.references.map((r) => [r.path ?? r.memory_id, r.status])).toEqual([
      ['/task/plan.md', 'ok'],
      [log.id, 'changed'],
      ['/task/scratch.md', 'missing'],
    ]);
    expect(restored.size_bytes).toBeLessThanOrEqual(32 * 1024);
  });
});
