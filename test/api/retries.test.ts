/**
 * The official SDK retries a 409 unless the answer says `x-should-retry: false`. mnemo's 409s say
 * what is (a path taken, a precondition not met, an archived store, a reused Idempotency-Key): the
 * same request meets them again, so each reaches the server once. Counted in the server's request
 * log. The 503s, which do pass, stay retryable.
 */
import Anthropic, { ConflictError } from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { jsonRequest, rawRequest, useServer } from '../helpers/sdk.js';
import type { RunningServer } from '../helpers/server.js';
import { freshStore } from './shapes.js';

let server: RunningServer;
/** The SDK as shipped: two retries with backoff. */
let client: Anthropic;

useServer((s) => {
  server = s;
  client = new Anthropic({ baseURL: s.url, apiKey: s.adminKey });
});

/** The request lines the server logged for `route` with `status`. */
function logged(route: string, status: number): number {
  return server.stderr().split('\n').filter((l) => {
    if (!l.startsWith('{')) return false;
    const line = JSON.parse(l) as { msg?: string; route?: string; status?: number };
    return line.msg === 'request' && line.route === route && line.status === status;
  }).length;
}

describe('409s are not retried', () => {
  it('a create at a taken path throws ConflictError after exactly one request', async () => {
    const store = await freshStore(client, 'retries');
    await client.beta.memoryStores.memories.create(store.id, { path: '/taken.md', content: 'a' });
    const before = logged('/v1/memory_stores/:store/memories', 409);
    const err = await client.beta.memoryStores.memories.create(store.id, { path: '/taken.md', content: 'b' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as ConflictError).headers.get('x-should-retry')).toBe('false');
    expect(logged('/v1/memory_stores/:store/memories', 409) - before).toBe(1);
  });

  it('a precondition not met, a write to an archived store and a reused Idempotency-Key each say x-should-retry: false', async () => {
    const store = await freshStore(client, 'retries 2');
    const m = await client.beta.memoryStores.memories.create(store.id, { path: '/p.md', content: 'a' });
    const call = (method: string, path: string, body: unknown, headers: Record<string, string> = {}) => jsonRequest(server, method, path, server.adminKey, body, headers);
    const precondition = await call('POST', `/v1/memory_stores/${store.id}/memories/${m.id}`, { content: 'b', precondition: { type: 'content_sha256', content_sha256: '0'.repeat(64) } });
    const keyed = { 'idempotency-key': 'retries-key' };
    await call('POST', `/v1/memory_stores/${store.id}/memories`, { path: '/i.md', content: 'i' }, keyed);
    const reused = await call('POST', `/v1/memory_stores/${store.id}/memories`, { path: '/j.md', content: 'j' }, keyed);
    await client.beta.memoryStores.archive(store.id);
    const archived = await call('POST', `/v1/memory_stores/${store.id}/memories`, { path: '/k.md', content: 'k' });
    for (const res of [precondition, reused, archived]) {
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      expect(res.headers.get('x-should-retry')).toBe('false');
    }
  });

  it('other errors carry no x-should-retry of ours', async () => {
    const res = await rawRequest(server.url, 'GET', '/v1/memory_stores/memstore_nope', { apiKey: server.adminKey });
    expect(res.status).toBe(404);
    expect(res.headers.get('x-should-retry')).toBeNull();
  });
});
