/**
 * The change feed (issue 15) against the real server: JSON pages in commit order from opaque
 * cursors, the refusals, grants, and server-sent events through a real HTTP client while four
 * writers run, with a consumer that hangs up and resumes at random points (Last-Event-ID).
 */
import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it, vi } from 'vitest';
import { startServer, type RunningServer } from '../helpers/server.js';
import { createWorkspace, expectRawError, mintKey, rawRequest, sdkClient, setupPost, useServer } from '../helpers/sdk.js';
import { openEvents, type SseEvent, type SseStream } from '../helpers/sse.js';
import { collect, expectVersionShape, freshStore, type Version } from './shapes.js';

let server: RunningServer;
let client: Anthropic;

useServer((s, c) => {
  server = s;
  client = c;
});

interface Item {
  cursor: string;
  memory_version: Version;
}
interface FeedPage {
  data: Item[];
  next_after: string;
}

const memories = () => client.beta.memoryStores.memories;
const get = (path: string, key = server.adminKey) => rawRequest(server.url, 'GET', path, { apiKey: key });

/**
 * Waits until `check` stops throwing. vi.waitFor's own deadline is 1 s: a server that ends a stream a
 * moment after its client hangs up can take longer than that on a CI host running many test files
 * at once. A deadline, not a timing: a check that never holds still fails.
 */
const waitFor = <T>(check: () => T | Promise<T>) => vi.waitFor(check, { timeout: 20_000, interval: 50 });

async function page(storeId: string, query = ''): Promise<FeedPage> {
  const res = await get(`/v1/memory_stores/${storeId}/changes${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as FeedPage;
}

/** Every version of the store, oldest first, from the version list (newest first). */
async function versionsOldestFirst(storeId: string): Promise<Version[]> {
  return (await collect(client.beta.memoryStores.memoryVersions.list(storeId, { limit: 100 }))).reverse();
}

/** The server's mnemo_feed_streams gauge: the event streams open now. */
async function feedStreams(on: RunningServer = server): Promise<number> {
  const text = await (await fetch(`${on.url}/metrics`, { headers: { 'x-api-key': on.adminKey } })).text();
  return Number(/^mnemo_feed_streams (\d+)$/m.exec(text)?.[1]);
}

/** A small deterministic generator, so a failing run can be repeated. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('change feed pages', () => {
  it('lists every version once in commit order, in the basic view, with a cursor each', async () => {
    const store = await freshStore(client, 'feed');
    const m = await memories().create(store.id, { path: '/a.md', content: 'one' });
    await memories().update(m.id, { memory_store_id: store.id, content: 'two' });
    await memories().create(store.id, { path: '/b.md', content: 'bee' });
    await memories().delete(m.id, { memory_store_id: store.id });
    const p = await page(store.id);
    const all = await versionsOldestFirst(store.id);
    expect(p.data.map((i) => i.memory_version)).toEqual(all);
    for (const item of p.data) {
      expectVersionShape(item.memory_version);
      expect(item.memory_version.content).toBeNull();
      expect(item.cursor).toEqual(expect.any(String));
    }
    expect(new Set(p.data.map((i) => i.cursor)).size).toBe(4);
    expect(p.next_after).toBe(p.data[3]!.cursor);
  });

  it('resumes after any cursor it returned, pages by limit, and an empty page when caught up keeps the cursor', async () => {
    const store = await freshStore(client, 'feed paging');
    for (let i = 0; i < 7; i++) await memories().create(store.id, { path: `/m${i}.md`, content: `${i}` });
    const all = (await page(store.id)).data;
    const walked: Item[] = [];
    let after = '';
    for (;;) {
      const p = await page(store.id, `?limit=3${after ? `&after=${after}` : ''}`);
      expect(p.data.length).toBeLessThanOrEqual(3);
      walked.push(...p.data);
      if (p.data.length === 0) {
        expect(p.next_after).toBe(after);
        break;
      }
      after = p.next_after;
    }
    expect(walked).toEqual(all);
    expect((await page(store.id, `?after=${all[4]!.cursor}`)).data).toEqual(all.slice(5));
    // Caught up: poll again later with the same cursor and get the new version only.
    await memories().create(store.id, { path: '/late.md', content: 'late' });
    expect((await page(store.id, `?after=${after}`)).data.map((i) => i.memory_version.path)).toEqual(['/late.md']);
  });

  it('an empty store answers an empty page whose next_after resumes from its first version', async () => {
    const store = await freshStore(client, 'feed empty');
    const empty = await page(store.id);
    expect(empty.data).toEqual([]);
    expect(empty.next_after).toEqual(expect.any(String));
    await memories().create(store.id, { path: '/first.md', content: '1' });
    expect((await page(store.id, `?after=${empty.next_after}`)).data.map((i) => i.memory_version.path)).toEqual(['/first.md']);
  });

  it('a redacted version appears at its place with its fields redacted', async () => {
    const store = await freshStore(client, 'feed redacted');
    const m = await memories().create(store.id, { path: '/secret.md', content: 'hunter2' });
    await memories().update(m.id, { memory_store_id: store.id, content: 'fine' });
    await client.beta.memoryStores.memoryVersions.redact(m.memory_version_id, { memory_store_id: store.id });
    const [first, second] = (await page(store.id)).data;
    expect(first!.memory_version).toMatchObject({ id: m.memory_version_id, path: null, content_sha256: null, content_size_bytes: null, redacted_at: expect.any(String) });
    expect(second!.memory_version).toMatchObject({ operation: 'modified', path: '/secret.md', redacted_at: null });
  });

  it('refuses a cursor it did not issue and a limit outside 1 to 1000 with 400, and an unknown store with 404', async () => {
    const store = await freshStore(client, 'feed refusals');
    for (const q of ['?after=garbage', '?after=c1.', '?after=c1.LTE', '?after=page_eyJzIjoxfQ', '?limit=0', '?limit=1001', '?limit=x']) {
      expectRawError(await get(`/v1/memory_stores/${store.id}/changes${q}`), 400, 'invalid_request_error');
    }
    expect((await get(`/v1/memory_stores/${store.id}/changes?limit=1000`)).status).toBe(200);
    expectRawError(await get('/v1/memory_stores/memstore_nope/changes'), 404, 'not_found_error');
  });

  it("refuses a cursor of another store's feed with 400, and still takes a c1 cursor of an earlier release", async () => {
    const a = await freshStore(client, 'feed cursor A');
    const b = await freshStore(client, 'feed cursor B');
    for (const p of ['/a1', '/a2', '/a3']) await memories().create(a.id, { path: p, content: p });
    for (const p of ['/a0', '/b1', '/b2']) await memories().create(b.id, { path: p, content: p });
    const first = await page(a.id, '?limit=2');
    const res = await get(`/v1/memory_stores/${b.id}/changes?after=${first.next_after}`);
    expectRawError(res, 400, 'invalid_request_error');
    expect((res.body as { error: { message: string } }).error.message).toBe("after: a cursor of another store's change feed; start this store's feed without it");
    expect((await page(a.id, `?after=${first.next_after}`)).data.map((i) => i.memory_version.path)).toEqual(['/a3']);
    // c1.Mg is commit 2 as earlier releases spelled it: clients keep such cursors as their place.
    expect((await page(b.id, '?after=c1.Mg')).data.map((i) => i.memory_version.path)).toEqual(['/b2']);
  });

  it('honours store grants: a key scoped to another store gets 404, a read-only key reads', async () => {
    const store = await freshStore(client, 'feed granted');
    const other = await freshStore(client, 'feed other');
    await memories().create(store.id, { path: '/x.md', content: 'x' });
    const scoped = (await mintKey(server, 'read_write', { body: { name: 'feed key', memory_store_ids: [other.id] } })).secret;
    expectRawError(await get(`/v1/memory_stores/${store.id}/changes`, scoped), 404, 'not_found_error');
    const reader = (await mintKey(server, 'read_only', { body: { name: 'feed key' } })).secret;
    expect(((await get(`/v1/memory_stores/${store.id}/changes`, reader)).body as FeedPage).data).toHaveLength(1);
    // The stream refuses the same way, as an envelope before any event.
    const res = await fetch(`${server.url}/v1/memory_stores/${store.id}/changes`, { headers: { accept: 'text/event-stream', 'x-api-key': scoped } });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });
});

describe('change feed events', () => {
  const eventsOf = (storeId: string, headers: Record<string, string> = {}, query = '') =>
    openEvents(`${server.url}/v1/memory_stores/${storeId}/changes${query}`, { 'x-api-key': server.adminKey, ...headers });

  it('streams the items as server-sent events: id the cursor, event memory_version, data the item', async () => {
    const store = await freshStore(client, 'feed sse');
    await memories().create(store.id, { path: '/before.md', content: 'b' });
    const stream = await eventsOf(store.id);
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const first = await stream.next();
      const created = await memories().create(store.id, { path: '/after.md', content: 'a' });
      const second = await stream.next();
      const items = (await page(store.id)).data;
      expect([first, second]).toEqual(items.map((i): SseEvent => ({ id: i.cursor, event: 'memory_version', data: JSON.stringify(i) })));
      expect(JSON.parse(second.data).memory_version.id).toBe(created.memory_version_id);
    } finally {
      await stream.close();
    }
  });

  it('resumes from Last-Event-ID, which wins over after', async () => {
    const store = await freshStore(client, 'feed resume');
    for (let i = 0; i < 4; i++) await memories().create(store.id, { path: `/r${i}.md`, content: `${i}` });
    const items = (await page(store.id)).data;
    const stream = await eventsOf(store.id, { 'last-event-id': items[1]!.cursor }, `?after=${items[0]!.cursor}`);
    try {
      expect((await stream.next()).id).toBe(items[2]!.cursor);
      expect((await stream.next()).id).toBe(items[3]!.cursor);
    } finally {
      await stream.close();
    }
    const bad = await fetch(`${server.url}/v1/memory_stores/${store.id}/changes`, { headers: { accept: 'text/event-stream', 'x-api-key': server.adminKey, 'last-event-id': 'nope' } });
    expect(bad.status).toBe(400);
  });

  it("refuses a cursor of another store's feed with a 400 envelope before any stream opens, naming the field it came in", async () => {
    const a = await freshStore(client, 'feed stream cursor A');
    const b = await freshStore(client, 'feed stream cursor B');
    await memories().create(a.id, { path: '/a.md', content: 'a' });
    const foreign = (await page(a.id)).next_after;
    const cases: [string, Record<string, string>, string][] = [
      ['after', {}, `?after=${foreign}`],
      ['Last-Event-ID', { 'last-event-id': foreign }, ''],
    ];
    for (const [field, headers, query] of cases) {
      const res = await fetch(`${server.url}/v1/memory_stores/${b.id}/changes${query}`, { headers: { accept: 'text/event-stream', 'x-api-key': server.adminKey, ...headers } });
      // An EventSource reconnects after a 200 that ends; only a refusal before the stream stops it.
      expect(res.status, field).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toMatchObject({
        type: 'error',
        error: { type: 'invalid_request_error', message: `${field}: a cursor of another store's change feed; start this store's feed without it` },
      });
    }
    await waitFor(async () => expect(await feedStreams()).toBe(0));
  });

  it('a client that hangs up ends its stream on the server (the mnemo_feed_streams gauge goes back)', async () => {
    const store = await freshStore(client, 'feed hangup');
    await memories().create(store.id, { path: '/h.md', content: 'h' });
    const gauge = feedStreams;
    // The earlier tests' streams end on the server a moment after their clients hang up: from none.
    await waitFor(async () => expect(await gauge()).toBe(0));
    const streams = [await eventsOf(store.id), await eventsOf(store.id)];
    for (const s of streams) await s.next();
    expect(await gauge()).toBe(2);
    for (const s of streams) await s.close();
    await waitFor(async () => expect(await gauge()).toBe(0));
  });

  it('a stream whose key is revoked ends with an authentication error event and delivers nothing written after the revoke', async () => {
    const store = await freshStore(client, 'feed revoked');
    await memories().create(store.id, { path: '/before.md', content: 'b' });
    const { id, secret } = await mintKey(server, 'read_only', { body: { name: 'feed reader' } });
    const stream = await eventsOf(store.id, { 'x-api-key': secret });
    try {
      expect(JSON.parse((await stream.next()).data).memory_version.path).toBe('/before.md');
      expect((await rawRequest(server.url, 'POST', `/v1/api_keys/${id}/revoke`, { apiKey: server.adminKey })).status).toBe(200);
      await memories().create(store.id, { path: '/after.md', content: 'a' });
      const e = await stream.next();
      expect(e.event).toBe('error');
      expect(JSON.parse(e.data)).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
      await expect(stream.next()).rejects.toThrow(/ended/);
    } finally {
      await stream.close();
    }
  });

  it.each([
    ['text/event-stream;q=0, application/json', 'json'],
    ['application/json, text/event-stream', 'json'],
    ['text/event-stream;q=0.5, application/json;q=0.9', 'json'],
    ['*/*', 'json'],
    ['text/html', 'json'],
    ['text/event-stream', 'events'],
    ['application/json;q=0.5, text/event-stream', 'events'],
    ['text/event-stream, application/json', 'events'],
    ['*/*;q=0.1, text/event-stream', 'events'],
  ])('Accept: %s is answered with %s (q-values weigh; on a tie the first listed wins)', async (accept, want) => {
    const store = await freshStore(client, 'feed accept');
    // HEAD: the same negotiation as GET, and no stream left open.
    const res = await fetch(`${server.url}/v1/memory_stores/${store.id}/changes`, { method: 'HEAD', headers: { accept, 'x-api-key': server.adminKey } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(want === 'json' ? /^application\/json/ : /^text\/event-stream/);
  });

  it('a HEAD asking for events answers the headers and leaves no stream behind', async () => {
    const store = await freshStore(client, 'feed head');
    await memories().create(store.id, { path: '/h.md', content: 'h' });
    await waitFor(async () => expect(await feedStreams()).toBe(0));
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${server.url}/v1/memory_stores/${store.id}/changes`, { method: 'HEAD', headers: { accept: 'text/event-stream', 'x-api-key': server.adminKey } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    }
    // Each HEAD's stream opened on the server; none is left following the store.
    await waitFor(async () => expect(await feedStreams()).toBe(0));
  });

  it('twelve streams at once leave the server\'s stderr free of a MaxListenersExceededWarning', async () => {
    // A server of its own: its stderr holds only what these streams cause.
    const own = await startServer();
    const streams: SseStream[] = [];
    try {
      const store = await freshStore(sdkClient(own.url, own.adminKey), 'feed many');
      await sdkClient(own.url, own.adminKey).beta.memoryStores.memories.create(store.id, { path: '/m.md', content: 'm' });
      for (let i = 0; i < 12; i++) {
        streams.push(await openEvents(`${own.url}/v1/memory_stores/${store.id}/changes`, { 'x-api-key': own.adminKey }));
      }
      // Each stream delivered its first event, so each is following the store.
      for (const s of streams) await s.next();
      await waitFor(async () => expect(await feedStreams(own)).toBe(12));
      // Node prints the warning on a later tick; the last stream's listener was added a request ago.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(own.stderr().split('\n').filter((l) => l.includes('MaxListenersExceededWarning'))).toEqual([]);
    } finally {
      for (const s of streams) await s.close();
      await own.stop();
    }
  });

  it('a workspace past MNEMO_WORKSPACE_MAX_FEED_STREAMS gets 503 overloaded_error before a stream opens, while other workspaces and the operator still stream', async () => {
    const own = await startServer({ env: { MNEMO_WORKSPACE_MAX_FEED_STREAMS: '2' } });
    const streams: SseStream[] = [];
    try {
      const store = await freshStore(sdkClient(own.url, own.adminKey), 'feed capped');
      const reader = (await mintKey(own, 'read_only', { body: { name: 'many streams' } })).secret;
      const wsB = (await createWorkspace(own, 'other tenant')).id;
      const inB = { 'anthropic-workspace-id': wsB };
      const keyB = (await mintKey(own, 'read_only', { headers: inB, body: { name: 'b reader' } })).secret;
      const storeB = (await setupPost<{ id: string }>(own, '/v1/memory_stores', { name: 'b store' }, { headers: inB })).id;
      const open = (storeId: string, key: string) => openEvents(`${own.url}/v1/memory_stores/${storeId}/changes`, { 'x-api-key': key });
      for (let i = 0; i < 2; i++) streams.push(await open(store.id, reader));
      expect(streams.map((s) => s.status)).toEqual([200, 200]);

      const refused = await fetch(`${own.url}/v1/memory_stores/${store.id}/changes`, { headers: { accept: 'text/event-stream', 'x-api-key': reader } });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('content-type')).toMatch(/^application\/json/);
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await refused.json()).toMatchObject({
        type: 'error', error: { type: 'overloaded_error', message: expect.stringContaining('(MNEMO_WORKSPACE_MAX_FEED_STREAMS=2)') },
      });
      // JSON pages are not streams: still answered.
      expect((await rawRequest(own.url, 'GET', `/v1/memory_stores/${store.id}/changes`, { apiKey: reader })).status).toBe(200);
      // Another workspace, and the operator key (its own tenant), still open streams.
      streams.push(await open(storeB, keyB), await open(store.id, own.adminKey));
      expect(streams.slice(2).map((s) => s.status)).toEqual([200, 200]);

      // A stream that ends gives its place back.
      await streams.shift()!.close();
      await waitFor(async () => {
        const again = await open(store.id, reader);
        streams.push(again);
        expect(again.status).toBe(200);
      });
    } finally {
      for (const s of streams) await s.close();
      await own.stop();
    }
  });

  it('four concurrent writers and a consumer that hangs up and resumes at random points: every version exactly once, in commit order', async () => {
    const store = await freshStore(client, 'feed concurrency');
    const WRITERS = 4;
    const WRITES = 30;
    const rand = random(0x15feed);
    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      const c = sdkClient(server.url, server.adminKey);
      const m = await c.beta.memoryStores.memories.create(store.id, { path: `/w${w}/doc.md`, content: 'v0' });
      for (let i = 1; i < WRITES; i++) {
        if (i % 10 === 0) await c.beta.memoryStores.memories.create(store.id, { path: `/w${w}/n${i}.md`, content: `${i}` });
        else await c.beta.memoryStores.memories.update(m.id, { memory_store_id: store.id, content: `v${i}` });
      }
    });
    const total = WRITERS * WRITES;
    const received: SseEvent[] = [];
    let lastId: string | undefined;
    let reconnects = 0;
    const consume = (async () => {
      while (received.length < total) {
        const stream = await eventsOf(store.id, lastId ? { 'last-event-id': lastId } : {});
        reconnects += 1;
        const take = 1 + Math.floor(rand() * 12);
        try {
          for (let i = 0; i < take && received.length < total; i++) {
            const e = await stream.next();
            received.push(e);
            lastId = e.id;
          }
        } finally {
          await stream.close();
        }
      }
    })();
    await Promise.all([...writers, consume]);
    const all = await versionsOldestFirst(store.id);
    expect(all).toHaveLength(total);
    const items = received.map((e) => JSON.parse(e.data) as Item);
    // Exactly once each, in commit order (the JSON feed's order), and every one of them.
    expect(items.map((i) => i.memory_version.id)).toEqual((await page(store.id, '?limit=1000')).data.map((i) => i.memory_version.id));
    expect(new Set(items.map((i) => i.memory_version.id)).size).toBe(total);
    expect(new Set(items.map((i) => i.memory_version.id))).toEqual(new Set(all.map((v) => v.id)));
    expect(received.every((e) => e.event === 'memory_version' && e.id === JSON.parse(e.data).cursor)).toBe(true);
    // Each writer's own versions arrive in the order it wrote them.
    for (let w = 0; w < WRITERS; w++) {
      const mine = items.filter((i) => i.memory_version.path === `/w${w}/doc.md`).map((i) => i.memory_version.content_sha256);
      const listed = all.filter((v) => v.path === `/w${w}/doc.md`).map((v) => v.content_sha256);
      expect(mine).toEqual(listed);
    }
    expect(reconnects).toBeGreaterThan(3);
  });
});
