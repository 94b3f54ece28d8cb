/**
 * Expiring memories on the wire (issue 6): ttl_seconds / expires_at on create and update, the
 * expires_at field, and an expired memory gone from reads and lists with its path free again.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import type { RunningServer } from '../helpers/server.js';
import { inProcessApp } from '../helpers/in-process.js';
import { expectApiError, useServer } from '../helpers/sdk.js';
import { freshStore, type Memory } from './shapes.js';

let server: RunningServer;
let client: Anthropic;

useServer((s, c) => {
  server = s;
  client = c;
});

type Expiring = Memory & { expires_at?: string };
const create = (store: string, body: Record<string, unknown>) => client.post<Expiring>(`/v1/memory_stores/${store}/memories`, { body });
const update = (store: string, id: string, body: Record<string, unknown>) =>
  client.post<Expiring>(`/v1/memory_stores/${store}/memories/${id}`, { body });

describe('memory TTL', () => {
  it('sets expires_at from ttl_seconds, and leaves it off memories that never expire', async () => {
    const store = await freshStore(client, 'ttl');
    const before = Date.now();
    const m = await create(store.id, { path: '/t.md', content: 'x', ttl_seconds: 3600 });
    const at = Date.parse(m.expires_at!);
    expect(at).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
    expect(at).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000);
    const plain = await client.beta.memoryStores.memories.create(store.id, { path: '/p.md', content: 'y' });
    expect(plain).not.toHaveProperty('expires_at');
  });

  it('takes an absolute expires_at, and an update renews or clears it', async () => {
    const store = await freshStore(client, 'ttl');
    const at = new Date(Date.now() + 60_000).toISOString();
    const m = await create(store.id, { path: '/a.md', content: 'x', expires_at: at });
    expect(m.expires_at).toBe(at);
    const later = new Date(Date.now() + 120_000).toISOString();
    const renewed = await update(store.id, m.id, { expires_at: later });
    expect(renewed.expires_at).toBe(later);
    expect(renewed.memory_version_id).toBe(m.memory_version_id);
    const cleared = await update(store.id, m.id, { expires_at: null });
    expect(cleared).not.toHaveProperty('expires_at');
  });

  // In-process, with a clock the test moves: the expiry passes without waiting for it.
  it('hides an expired memory from reads and lists, and frees its path', async () => {
    const { client, clock } = await inProcessApp();
    const store = await freshStore(client, 'ttl');
    const m = await client.post<Expiring>(`/v1/memory_stores/${store.id}/memories`, { body: { path: '/dir/gone.md', content: 'x', ttl_seconds: 1 } });
    clock.advance(1200);
    await expectApiError(client.beta.memoryStores.memories.retrieve(m.id, { memory_store_id: store.id }), 404, 'not_found_error');
    expect((await client.beta.memoryStores.memories.list(store.id, { depth: 1 })).data).toEqual([]);
    await expectApiError(client.beta.memoryStores.memories.update(m.id, { memory_store_id: store.id, content: 'late' }), 404, 'not_found_error');
    const again = await client.beta.memoryStores.memories.create(store.id, { path: '/dir', content: 'a file now' });
    expect(again.id).not.toBe(m.id);
  });

  it("deletes an expired memory at the server's expiry sweep, with a deleted version dated at its expiry", async () => {
    const { client, clock, service } = await inProcessApp();
    const store = await freshStore(client, 'ttl');
    const m = await client.post<Expiring>(`/v1/memory_stores/${store.id}/memories`, { body: { path: '/swept.md', content: 'x', ttl_seconds: 60 } });
    expect(await service.purgeExpiredMemories()).toBe(0);
    clock.advance(61_000);
    expect(await service.purgeExpiredMemories()).toBe(1);
    const [latest] = (await client.beta.memoryStores.memoryVersions.list(store.id, { memory_id: m.id })).data;
    expect(latest).toMatchObject({ operation: 'deleted', created_at: m.expires_at });
    expect(await service.purgeExpiredMemories()).toBe(0);
  });

  it.each([
    ['both fields', { ttl_seconds: 10, expires_at: '2999-01-01T00:00:00Z' }, 'not both'],
    ['a zero ttl', { ttl_seconds: 0 }, 'ttl_seconds'],
    ['a fractional ttl', { ttl_seconds: 1.5 }, 'ttl_seconds'],
    ['a past expires_at', { expires_at: '2001-01-01T00:00:00Z' }, 'in the future'],
    ['a malformed expires_at', { expires_at: 'tomorrow' }, 'RFC 3339'],
  ])('refuses %s with 400', async (_name, extra, mention) => {
    const store = await freshStore(client, 'ttl');
    const err = await expectApiError(create(store.id, { path: '/x.md', content: 'x', ...extra }), 400, 'invalid_request_error');
    expect(err.message).toContain(mention);
  });
});
