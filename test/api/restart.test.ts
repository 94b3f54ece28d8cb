/**
 * Durability through the API: everything written (stores, memories, updates, renames, deletes,
 * a redaction, an archive) reads back identically after a SIGTERM restart and after kill -9.
 */
import { rmSync } from 'node:fs';
import type Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, startServer, type RunningServer } from '../helpers/server.js';
import { sdkClient } from '../helpers/sdk.js';
import { collect, type Memory, type Store } from './shapes.js';

let dataDir: string;
let adminKey: string;
let running: RunningServer | null = null;

beforeAll(() => {
  dataDir = makeTempDir('mnemo-restart-');
});
afterAll(async () => {
  await running?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(): Promise<Anthropic> {
  running = await startServer({ dataDir, ...(adminKey ? { env: { MNEMO_ADMIN_KEY: adminKey } } : {}) });
  adminKey = running.adminKey;
  return sdkClient(running.url, adminKey);
}

/** Everything the API can show about the workspace, through lists and retrieves. */
async function snapshot(client: Anthropic) {
  const ms = client.beta.memoryStores;
  const stores = await collect(ms.list({ include_archived: true, limit: 2 }));
  const out = [];
  for (const s of stores) {
    const memories = (await collect(ms.memories.list(s.id, { view: 'full', limit: 2 }))) as Memory[];
    const topLevel = await collect(ms.memories.list(s.id, { depth: 1, limit: 2 }));
    const versions = await collect(ms.memoryVersions.list(s.id, { view: 'full', limit: 3 }));
    const retrievedMemories = await Promise.all(memories.map((m) => ms.memories.retrieve(m.id, { memory_store_id: s.id })));
    const retrievedVersions = await Promise.all(versions.map((v) => ms.memoryVersions.retrieve(v.id, { memory_store_id: s.id })));
    out.push({ store: await ms.retrieve(s.id), memories, topLevel, versions, retrievedMemories, retrievedVersions });
  }
  return out;
}

async function populate(client: Anthropic): Promise<Store[]> {
  const ms = client.beta.memoryStores;
  const a = await ms.create({ name: 'Durable', description: 'survives restarts', metadata: { team: 'core', tier: 'gold' } });
  const b = await ms.create({ name: 'Archived one' });
  const c = await ms.create({ name: 'Doomed' });
  const notes = await ms.memories.create(a.id, { path: '/notes/today.md', content: 'line one\n' });
  await ms.memories.update(notes.id, { memory_store_id: a.id, content: 'line one\nline two ✓\n' });
  const secret = await ms.memories.create(a.id, { path: '/secret.txt', content: 'token=abc123' });
  await ms.memories.update(secret.id, { memory_store_id: a.id, content: 'token=<rotated>' });
  await ms.memoryVersions.redact(secret.memory_version_id, { memory_store_id: a.id });
  const moved = await ms.memories.create(a.id, { path: '/old/place.md', content: 'moving' });
  await ms.memories.update(moved.id, { memory_store_id: a.id, path: '/new/place.md' });
  const gone = await ms.memories.create(a.id, { path: '/tmp/gone.md', content: 'bye' });
  await ms.memories.delete(gone.id, { memory_store_id: a.id });
  await ms.memories.create(a.id, { path: '/empty.md', content: '' });
  await ms.memories.create(a.id, { path: '/deep/a/b/c/d.md', content: 'x'.repeat(10_000) });
  await ms.memories.create(b.id, { path: '/kept.md', content: 'kept' });
  await ms.archive(b.id);
  await ms.memories.create(c.id, { path: '/c.md', content: 'c' });
  await ms.delete(c.id);
  return [a, b, c];
}

describe('restart', () => {
  it('reads back everything unchanged after SIGTERM and a start on the same data dir', async () => {
    const first = await start();
    const [a, , deleted] = await populate(first);
    const before = await snapshot(first);
    expect(before).toHaveLength(2);
    expect(before.find((s) => s.store.id === a!.id)!.versions.length).toBe(10);
    expect(before.flatMap((s) => s.versions).filter((v) => v.redacted_at !== null)).toHaveLength(1);
    expect(before.filter((s) => s.store.archived_at !== null)).toHaveLength(1);
    const pid = running!.pid;
    await running!.stop();
    running = null;

    const second = await start();
    expect(running!.pid).not.toBe(pid);
    expect(await snapshot(second)).toEqual(before);
    await expect(second.beta.memoryStores.retrieve(deleted!.id)).rejects.toMatchObject({ status: 404 });

    // The restarted server keeps working: writes land and old rules still hold.
    const ms = second.beta.memoryStores;
    const m = await ms.memories.create(a!.id, { path: '/after-restart.md', content: 'new' });
    expect((await ms.memoryVersions.list(a!.id, { limit: 1 })).data[0]!.id).toBe(m.memory_version_id);
    await expect(ms.memories.create(a!.id, { path: '/notes', content: 'x' })).rejects.toMatchObject({ status: 409 });
  });

  it('a page cursor issued before a restart pages on after it', async () => {
    const client = running ? sdkClient(running.url, adminKey) : await start();
    const ms = client.beta.memoryStores;
    const s = await ms.create({ name: 'paged across a restart' });
    for (const p of ['/p1.md', '/p2.md', '/p3.md']) await ms.memories.create(s.id, { path: p, content: p });
    const first = await ms.memories.list(s.id, { limit: 1 });
    await running!.stop();
    running = null;

    const after = await start();
    const rest = await after.beta.memoryStores.memories.list(s.id, { limit: 10, page: first.next_page! });
    expect(rest.data.map((m) => (m as { path: string }).path)).toEqual(['/p2.md', '/p3.md']);
  });

  it('loses no acknowledged write when the server is killed with SIGKILL', async () => {
    const client = running ? sdkClient(running.url, adminKey) : await start();
    const ms = client.beta.memoryStores;
    const s = await ms.create({ name: 'crash' });
    const m = await ms.memories.create(s.id, { path: '/c.md', content: 'v0' });
    for (let i = 1; i <= 5; i++) await ms.memories.update(m.id, { memory_store_id: s.id, content: `v${i}` });
    const before = await snapshot(client);
    await running!.kill9();
    running = null;

    const after = await start();
    expect(await snapshot(after)).toEqual(before);
    expect((await after.beta.memoryStores.memories.retrieve(m.id, { memory_store_id: s.id })).content).toBe('v5');
  });
});
