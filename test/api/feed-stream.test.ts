/**
 * The change feed's event streams in-process (issue 15), with timers the test fires itself: the
 * heartbeat comment, a follower waking for another connection's commit (what `mnemo mount` on the
 * same file looks like), and a stream that ends without leaving a timer or a listener behind.
 */
import { describe, expect, it, vi } from 'vitest';
import type { Every } from '../../src/service/feed.js';
import { openSqliteStorage } from '../../src/storage/sqlite/open.js';
import { newId } from '../../src/service/ids.js';
import { inProcessApp } from '../helpers/in-process.js';
import { mintKey } from '../helpers/sdk.js';
import { openEvents } from '../helpers/sse.js';

/**
 * Waits until `check` stops throwing. vi.waitFor's own deadline is 1 s: what a fired timer sets off
 * (a read, a write to the stream) can take longer than that on a CI host running many test files at
 * once. A deadline, not a timing: a check that never holds still fails.
 */
const waitFor = <T>(check: () => T | Promise<T>) => vi.waitFor(check, { timeout: 20_000, interval: 50 });

/** Timers that run only when the test fires them, and say how many are live. */
function manualTimers() {
  const live = new Map<number, { fn: () => void; ms: number }>();
  let next = 0;
  const every: Every = (fn, ms) => {
    const id = next++;
    live.set(id, { fn, ms });
    return () => live.delete(id);
  };
  return {
    every,
    live: () => live.size,
    /** Runs every live timer of this interval (all of them when none is given). */
    fire: (ms?: number) => {
      for (const t of [...live.values()]) if (ms === undefined || t.ms === ms) t.fn();
    },
  };
}

async function setup() {
  const timers = manualTimers();
  const app = await inProcessApp({ feedEvery: timers.every });
  return { app, timers, fetch: app.fetch };
}

describe('change feed streams', () => {
  it('sends a comment heartbeat on its interval (15 s unless the server is told otherwise)', async () => {
    const { app, timers, fetch } = await setup();
    const store = await app.client.beta.memoryStores.create({ name: 'beat' });
    const stream = await openEvents(`http://mnemo.in-process/v1/memory_stores/${store.id}/changes`, { 'x-api-key': app.adminKey }, fetch);
    try {
      await memoriesCreate(app, store.id, '/a.md');
      await stream.next();
      const before = stream.comments.filter((c) => c === 'heartbeat').length;
      timers.fire(15_000);
      timers.fire(15_000);
      await waitFor(() => expect(stream.comments.filter((c) => c === 'heartbeat').length).toBe(before + 2));
    } finally {
      await stream.close();
    }
  });

  it('wakes for a commit made on another connection to the file, by its poll', async () => {
    const { app, timers, fetch } = await setup();
    const store = await app.client.beta.memoryStores.create({ name: 'outside' });
    const stream = await openEvents(`http://mnemo.in-process/v1/memory_stores/${store.id}/changes`, { 'x-api-key': app.adminKey }, fetch);
    const outside = openSqliteStorage(app.file, { readers: 0 });
    try {
      await memoriesCreate(app, store.id, '/own.md');
      expect(JSON.parse((await stream.next()).data).memory_version.path).toBe('/own.md');
      await outside.createMemory({
        actor: { type: 'session_actor', sessionId: newId('session') }, now: new Date().toISOString(), versionId: newId('version'),
        storeId: store.id, memoryId: newId('memory'), path: '/outside.md', content: 'from another process',
      });
      const next = stream.next();
      // The other connection's commit shows in the change mark within 100 ms; each poll looks again.
      const poll = setInterval(() => timers.fire(500), 20);
      try {
        expect(JSON.parse((await next).data).memory_version).toMatchObject({ path: '/outside.md', created_by: { type: 'session_actor' } });
      } finally {
        clearInterval(poll);
      }
    } finally {
      await outside.close();
      await stream.close();
    }
  });

  it('a store deleted while it streams ends the stream with an error event carrying the envelope', async () => {
    const { app, timers, fetch } = await setup();
    const store = await app.client.beta.memoryStores.create({ name: 'doomed' });
    const stream = await openEvents(`http://mnemo.in-process/v1/memory_stores/${store.id}/changes`, { 'x-api-key': app.adminKey }, fetch);
    try {
      await memoriesCreate(app, store.id, '/a.md');
      await stream.next();
      await app.client.beta.memoryStores.delete(store.id);
      const next = stream.next();
      timers.fire(500);
      const e = await next;
      expect(e.event).toBe('error');
      expect(JSON.parse(e.data)).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
      await expect(stream.next()).rejects.toThrow(/ended/);
      await waitFor(() => expect(timers.live()).toBe(0));
    } finally {
      await stream.close();
    }
  });

  it('an idle stream ends with an authentication error at the poll after its key is revoked, with no write', async () => {
    const { app, timers, fetch } = await setup();
    const store = await app.client.beta.memoryStores.create({ name: 'idle revoked' });
    const { id, secret } = await mintReader(app);
    const stream = await openEvents(`http://mnemo.in-process/v1/memory_stores/${store.id}/changes`, { 'x-api-key': secret }, fetch);
    try {
      await memoriesCreate(app, store.id, '/a.md');
      await stream.next();
      expect((await app.raw('POST', `/v1/api_keys/${id}/revoke`, { apiKey: app.adminKey })).status).toBe(200);
      const next = stream.next();
      timers.fire(500);
      const e = await next;
      expect(e.event).toBe('error');
      expect(JSON.parse(e.data)).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
      await expect(stream.next()).rejects.toThrow(/ended/);
      await waitFor(() => expect(timers.live()).toBe(0));
    } finally {
      await stream.close();
    }
  });

  it('a key revoked by another connection to the file (`mnemo keys revoke` beside the server) ends its idle stream by the poll', async () => {
    const { app, timers, fetch } = await setup();
    const store = await app.client.beta.memoryStores.create({ name: 'revoked outside' });
    const { id, secret } = await mintReader(app);
    const stream = await openEvents(`http://mnemo.in-process/v1/memory_stores/${store.id}/changes`, { 'x-api-key': secret }, fetch);
    const outside = openSqliteStorage(app.file, { readers: 0 });
    try {
      await memoriesCreate(app, store.id, '/a.md');
      await stream.next();
      await outside.revokeApiKey((await outside.defaultWorkspace())!.id, id, new Date().toISOString());
      const next = stream.next();
      // The other connection's commit shows in the key mark within 100 ms; each poll looks again.
      const poll = setInterval(() => timers.fire(500), 20);
      try {
        const e = await next;
        expect(e.event).toBe('error');
        expect(JSON.parse(e.data)).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
      } finally {
        clearInterval(poll);
      }
    } finally {
      await outside.close();
      await stream.close();
    }
  });

  it('an idle stream reads its key again only when the key mark moves, not at every poll', async () => {
    const { app, timers, fetch } = await setup();
    const store = await app.client.beta.memoryStores.create({ name: 'key reads' });
    const { secret } = await mintReader(app);
    const stream = await openEvents(`http://mnemo.in-process/v1/memory_stores/${store.id}/changes`, { 'x-api-key': secret }, fetch);
    const reads = vi.spyOn(app.storage, 'getApiKeyById');
    try {
      await memoriesCreate(app, store.id, '/a.md');
      await stream.next();
      await waitFor(() => expect(reads).toHaveBeenCalled());
      const before = reads.mock.calls.length;
      // Twenty polls, two of them reading a page (every tenth), none with a revoke: no key read.
      for (let i = 0; i < 20; i++) timers.fire(500);
      await new Promise((r) => setTimeout(r, 50));
      expect(reads.mock.calls.length).toBe(before);
    } finally {
      reads.mockRestore();
      await stream.close();
    }
  });

  it('idle streams share one poll: one timer and one read of the change mark per poll, however many are open', async () => {
    const { app, timers, fetch } = await setup();
    const store = await app.client.beta.memoryStores.create({ name: 'shared poll' });
    const streams = await Promise.all(
      Array.from({ length: 5 }, () => openEvents(`http://mnemo.in-process/v1/memory_stores/${store.id}/changes`, { 'x-api-key': app.adminKey }, fetch)),
    );
    const marks = vi.spyOn(app.storage, 'changeMark');
    try {
      await memoriesCreate(app, store.id, '/x.md');
      for (const s of streams) await s.next();
      expect(timers.live()).toBe(5 + 1);
      const before = marks.mock.calls.length;
      for (let i = 0; i < 10; i++) timers.fire(500);
      expect(marks.mock.calls.length - before).toBe(10);
    } finally {
      marks.mockRestore();
      for (const s of streams) await s.close();
    }
    await waitFor(() => expect(timers.live()).toBe(0));
  });

  it('a client that hangs up ends its stream: no timer, listener or follower is left', async () => {
    const { app, timers, fetch } = await setup();
    const store = await app.client.beta.memoryStores.create({ name: 'hangup' });
    expect(timers.live()).toBe(0);
    const streams = await Promise.all(
      [1, 2, 3].map(() => openEvents(`http://mnemo.in-process/v1/memory_stores/${store.id}/changes`, { 'x-api-key': app.adminKey }, fetch)),
    );
    await memoriesCreate(app, store.id, '/x.md');
    for (const s of streams) await s.next();
    // Each stream: a heartbeat; and one poll for all of them.
    expect(timers.live()).toBe(4);
    expect(app.service.feed.following()).toBe(3);
    expect(app.service.feed.listeners()).toBe(3);
    for (const s of streams) await s.close();
    await waitFor(() => {
      expect(timers.live()).toBe(0);
      expect(app.service.feed.following()).toBe(0);
      expect(app.service.feed.listeners()).toBe(0);
    });
    // A later commit finds nothing listening.
    await memoriesCreate(app, store.id, '/y.md');
    expect(timers.live()).toBe(0);
  });
});

/** A read-only key minted through the API: its id and its secret. */
function mintReader(app: Awaited<ReturnType<typeof inProcessApp>>): Promise<{ id: string; secret: string }> {
  return mintKey(app, 'read_only', { body: { name: 'stream reader' } });
}

function memoriesCreate(app: Awaited<ReturnType<typeof inProcessApp>>, storeId: string, path: string) {
  return app.client.beta.memoryStores.memories.create(storeId, { path, content: `content of ${path}` });
}
