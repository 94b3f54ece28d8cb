/**
 * Expiring memories on the wire (issue 6): ttl_seconds / expires_at on create and update, the
 * expires_at field, an expired memory gone from reads and lists with its path free again, and its
 * current version redactable at once, before the sweep.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { dirname } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openPostgresStorage } from '../../src/storage/postgres/open.js';
import type { RunningServer } from '../helpers/server.js';
import { onPostgres } from '../helpers/engine.js';
import { inProcessApp, type MovableClock } from '../helpers/in-process.js';
import { filesUnder, holding } from '../helpers/files.js';
import { createDatabase } from '../helpers/postgres.js';
import { expectApiError, useServer } from '../helpers/sdk.js';
import { collect, freshStore, type Memory } from './shapes.js';

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

/** The app in-process on this file's engine: a fresh PostgreSQL database when test/api/on-postgres/ runs it. */
function engineApp() {
  if (!onPostgres()) return inProcessApp();
  return inProcessApp({
    openStorage: async (clock: MovableClock) => {
      const db = await createDatabase();
      onTestFinished(db.drop);
      return openPostgresStorage(db.url, { clock });
    },
  });
}

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

  it('keeps an expires_at as late as 9999-12-31 UTC, and refuses with 400 any later one, also one an offset carries past that year', async () => {
    const store = await freshStore(client, 'ttl far');
    const last = await create(store.id, { path: '/last.md', content: 'x', expires_at: '9999-12-31T23:59:59.999Z' });
    expect(last.expires_at).toBe('9999-12-31T23:59:59.999Z');
    expect((await client.beta.memoryStores.memories.retrieve(last.id, { memory_store_id: store.id })).path).toBe('/last.md');
    expect((await collect(client.beta.memoryStores.memories.list(store.id))).map((m) => m.path)).toEqual(['/last.md']);
    // 10000-01-01T00:30Z in UTC: kept as "+010000-…", it compared as text before every date, so it
    // was refused as "not in the future" (and would read as expired at once).
    for (const at of ['9999-12-31T23:30:00-01:00', '+010000-01-01T00:00:00Z', '275760-09-13T00:00:00Z']) {
      const err = await expectApiError(create(store.id, { path: '/far.md', content: 'x', expires_at: at }), 400, 'invalid_request_error');
      expect(err.message).toMatch(/^expires_at: must be (from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59\.999Z in UTC|an RFC 3339 timestamp)/);
      await expectApiError(update(store.id, last.id, { expires_at: at }), 400, 'invalid_request_error');
    }
    expect((await client.beta.memoryStores.memories.retrieve(last.id, { memory_store_id: store.id })) as Expiring).toMatchObject({ expires_at: '9999-12-31T23:59:59.999Z' });
    const err = await expectApiError(
      client.get(`/v1/memory_stores/${store.id}/memory_versions`, { query: { 'created_at[lte]': '9999-12-31T23:30:00-01:00' } }),
      400,
      'invalid_request_error',
    );
    expect(err.message).toMatch(/^created_at\[lte\]: must be from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59\.999Z in UTC/);
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

  it.each([false, true])(
    'the current version of an expired memory is redacted at once, before any sweep (archived store: %s), and its text leaves the store',
    async (archived) => {
      const { client, clock, service, storage, file } = await engineApp();
      const ms = client.beta.memoryStores;
      const store = await freshStore(client, 'ttl leak');
      const secret = `leaked${Math.random().toString(36).slice(2)}token`;
      const m = await client.post<Expiring>(`/v1/memory_stores/${store.id}/memories`, { body: { path: '/leak.md', content: secret, ttl_seconds: 1 } });
      if (archived) await ms.archive(store.id);
      const texts = await storage.countContents();
      clock.advance(1200);
      await expectApiError(ms.memories.update(m.id, { memory_store_id: store.id, content: 'late' }), 404, 'not_found_error');
      const redacted = await ms.memoryVersions.redact(m.memory_version_id, { memory_store_id: store.id });
      expect(redacted).toMatchObject({ id: m.memory_version_id, content: null, path: null });
      expect(redacted.redacted_at).not.toBeNull();
      // Deleted as the sweep would have: a `deleted` version dated at its expiry; the sweep finds nothing left.
      const versions = await collect(ms.memoryVersions.list(store.id, { memory_id: m.id }));
      expect(versions.map((v) => [v.operation, v.created_at])).toEqual([['deleted', m.expires_at], ['created', m.created_at]]);
      expect(await service.purgeExpiredMemories()).toBe(0);
      expect(await storage.countContents()).toBe(texts - 1);
      expect(await storage.domainCheck()).toEqual([]);
      // No byte of it left in the database's files (its row, the search index, the WAL).
      if (!onPostgres()) expect(holding(filesUnder(dirname(file)), secret)).toEqual([]);
    },
  );

  it('refuses to set or clear an expiry under a stale content_sha256 precondition, unless that expiry is already in place', async () => {
    const store = await freshStore(client, 'ttl precondition');
    const at = new Date(Date.now() + 600_000).toISOString();
    const m = await create(store.id, { path: '/note.md', content: 'v1', expires_at: at });
    const stale = { type: 'content_sha256', content_sha256: m.content_sha256 };
    // Someone else changes the note: the caller holding v1's hash must not expire (delete) v2.
    const v2 = await update(store.id, m.id, { content: 'v2 - agent work' });
    for (const change of [{ ttl_seconds: 2 }, { expires_at: null }, { content: 'v2 - agent work', ttl_seconds: 2 }]) {
      await expectApiError(update(store.id, m.id, { ...change, precondition: stale }), 409, 'memory_precondition_failed_error');
    }
    const kept = await client.beta.memoryStores.memories.retrieve(m.id, { memory_store_id: store.id });
    expect(kept).toMatchObject({ content: 'v2 - agent work', memory_version_id: v2.memory_version_id });
    expect((kept as Expiring).expires_at).toBe(at);
    // A retry of what is already in place (content and expiry) still succeeds.
    const retried = await update(store.id, m.id, { content: 'v2 - agent work', expires_at: at, precondition: stale });
    expect(retried).toMatchObject({ memory_version_id: v2.memory_version_id, expires_at: at });
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
