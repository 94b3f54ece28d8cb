/**
 * Console pages in process (issue 16): a large folder's tree comes a page at a time, and the audit
 * page filters a store's versions by actor, operation and time range exactly as the API does.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { openPostgresStorage } from '../../src/storage/postgres/open.js';
import { inProcessApp, movableClock, type InProcessApp, type MovableClock } from '../helpers/in-process.js';
import { createDatabase, pgSkip } from '../helpers/postgres.js';
import { mintKey } from '../helpers/sdk.js';

async function signIn(app: InProcessApp, key = app.adminKey): Promise<string> {
  const res = await app.raw('POST', '/admin/sign-in', {
    apiKey: null, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ api_key: key }).toString(),
  });
  return `mnemo_console=${/mnemo_console=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')![1]}`;
}

async function html(app: InProcessApp, cookie: string, path: string): Promise<string> {
  const res = await app.raw('GET', path, { apiKey: null, headers: { cookie } });
  expect(res.status, path).toBe(200);
  return res.body as string;
}

const decode = (s: string) => s.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');

/** An in-process app on a fresh SQLite file, or on a fresh PostgreSQL database dropped after the test. */
const appOn = (engine: string) => inProcessApp(engine === 'sqlite' ? {} : {
  openStorage: async (clock: MovableClock) => {
    const db = await createDatabase();
    onTestFinished(db.drop);
    return openPostgresStorage(db.url, { clock });
  },
});

describe('console pages', () => {
  it('a folder of 60 memories opens 50 at a time, with a link to the rest', async () => {
    const app = await inProcessApp();
    const store = await app.client.beta.memoryStores.create({ name: 'big' });
    for (let i = 0; i < 60; i++) await app.client.beta.memoryStores.memories.create(store.id, { path: `/big/m${String(i).padStart(2, '0')}.md`, content: `${i}` });
    const cookie = await signIn(app);
    const first = await html(app, cookie, `/admin/stores/${store.id}/tree?prefix=/big/`);
    expect(first.match(/\/memories\/mem_/g)).toHaveLength(50);
    const more = /hx-get="([^"]+)"[^>]*>More in this folder/.exec(first)![1]!;
    const second = await html(app, cookie, decode(more));
    expect(second.match(/\/memories\/mem_/g)).toHaveLength(10);
    expect(second).toContain('m59.md');
    expect(second).not.toContain('More in this folder');
  });

  it('the audit page filters versions by actor, operation and time range', async () => {
    const app = await inProcessApp();
    const store = await app.client.beta.memoryStores.create({ name: 'audited' });
    const writer = await mintKey(app, 'read_write', { body: { name: 'writer' } });
    const m = await app.client.beta.memoryStores.memories.create(store.id, { path: '/by-admin.md', content: 'a' });
    app.clock.advance(3600_000);
    const other = await app.raw('POST', `/v1/memory_stores/${store.id}/memories`, { apiKey: writer.secret, body: JSON.stringify({ path: '/by-writer.md', content: 'w' }) });
    expect(other.status).toBe(200);
    await app.client.beta.memoryStores.memories.update(m.id, { memory_store_id: store.id, content: 'b' });
    const cookie = await signIn(app);
    const rows = (page: string) => [...page.matchAll(/<tr><td data-label="Memory"><a [^>]*>([^<]+)<\/a><\/td><td data-label="Operation">(\w+)/g)].map((r) => `${r[2]} ${r[1]}`);
    const base = `/admin/stores/${store.id}/versions`;
    expect(rows(await html(app, cookie, base))).toEqual(['modified /by-admin.md', 'created /by-writer.md', 'created /by-admin.md']);
    expect(rows(await html(app, cookie, `${base}?actor=${writer.id}`))).toEqual(['created /by-writer.md']);
    expect(rows(await html(app, cookie, `${base}?operation=modified`))).toEqual(['modified /by-admin.md']);
    const start = new Date(Date.parse(app.clock()) - 1800_000).toISOString().slice(0, 19);
    expect(rows(await html(app, cookie, `${base}?from=${start}`))).toEqual(['modified /by-admin.md', 'created /by-writer.md']);
    expect(rows(await html(app, cookie, `${base}?to=${start}`))).toEqual(['created /by-admin.md']);
    const bad = await app.raw('GET', `${base}?from=yesterday`, { apiKey: null, headers: { cookie } });
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('created_at[gte]');
  });

  it('a "To" given to the second (or the minute) includes every version within that second (or minute)', async () => {
    const app = await inProcessApp({ clock: movableClock(Date.parse('2026-12-07T06:28:45.500Z')) });
    const store = await app.client.beta.memoryStores.create({ name: 'audited to the second' });
    await app.client.beta.memoryStores.memories.create(store.id, { path: '/n.md', content: 'n' });
    const cookie = await signIn(app);
    const paths = (page: string) => [...page.matchAll(/<td data-label="Memory"><a [^>]*>([^<]+)<\/a>/g)].map((r) => r[1]);
    const base = `/admin/stores/${store.id}/versions`;
    // The page dates the version "06:28:45Z": that second as From and To is the auditor's obvious query.
    expect(await html(app, cookie, base)).toContain('2026-12-07 06:28:45Z');
    expect(paths(await html(app, cookie, `${base}?from=2026-12-07T06:28:45&to=2026-12-07T06:28:45`))).toEqual(['/n.md']);
    expect(paths(await html(app, cookie, `${base}?to=2026-12-07T06:28:45`))).toEqual(['/n.md']);
    // A browser that sends the minute alone (HH:MM) means the whole minute.
    expect(paths(await html(app, cookie, `${base}?from=2026-12-07T06:28&to=2026-12-07T06:28`))).toEqual(['/n.md']);
    expect(paths(await html(app, cookie, `${base}?to=2026-12-07T06:28:44`))).toEqual([]);
    expect(paths(await html(app, cookie, `${base}?to=2026-12-07T06:27`))).toEqual([]);
  });

  it.each(['sqlite', 'postgres'])('the store page counts and sizes only live memories: one expired but not yet swept is left out (%s)', async (engine) => {
    if (engine === 'postgres' && pgSkip !== null) return;
    const app = await appOn(engine);
    const store = await app.client.beta.memoryStores.create({ name: 'expiring' });
    const ms = app.client.beta.memoryStores.memories;
    await ms.create(store.id, { path: '/keep.md', content: 'k'.repeat(2048) });
    await app.client.post(`/v1/memory_stores/${store.id}/memories`, { body: { path: '/exp/x.md', content: 'x'.repeat(3072), ttl_seconds: 2 } });
    const cookie = await signIn(app);
    const counts = async () => {
      const page = await html(app, cookie, `/admin/stores/${store.id}`);
      return { memories: /<dt>Memories<\/dt><dd>(\d+)<\/dd>/.exec(page)?.[1], size: /<dt>Size<\/dt><dd>([^<]+)</.exec(page)?.[1]?.trim() };
    };
    expect(await counts()).toEqual({ memories: '2', size: '5.0 KB' });
    app.clock.advance(3000);
    // No write and no sweep since: the memory's row is still there, but every reader hides it.
    expect((await ms.list(store.id, { depth: 1 })).data.map((m) => m.path)).toEqual(['/keep.md']);
    expect(await counts()).toEqual({ memories: '1', size: '2.0 KB' });
    expect(await app.service.purgeExpiredMemories()).toBe(1);
    expect(await counts()).toEqual({ memories: '1', size: '2.0 KB' });
  });

  it.each(['sqlite', 'postgres'])("the store page shows its live memories' bytes apart from its size, which counts its checkpoints too, as the API lists them (%s)", async (engine) => {
    if (engine === 'postgres' && pgSkip !== null) return;
    const app = await appOn(engine);
    const store = await app.client.beta.memoryStores.create({ name: 'with checkpoints' });
    const ms = app.client.beta.memoryStores.memories;
    await ms.create(store.id, { path: '/keep.md', content: 'k'.repeat(2048) });
    await ms.create(store.id, { path: '/more.md', content: 'é'.repeat(512) });
    await app.client.post(`/v1/memory_stores/${store.id}/memories`, { body: { path: '/exp/x.md', content: 'x'.repeat(3072), ttl_seconds: 2 } });
    const saved = await app.raw('POST', `/v1/memory_stores/${store.id}/checkpoints`, { body: JSON.stringify({ agent_id: 'coder', session_id: 'run-1', goal: 'g'.repeat(6000) }) });
    expect(saved.status).toBe(200);
    const checkpointBytes = (saved.body as { size_bytes: number }).size_bytes;
    const cookie = await signIn(app);
    const facts = async () => {
      const page = await html(app, cookie, `/admin/stores/${store.id}`);
      return { size: /<dt>Size<\/dt><dd>([^<]+)</.exec(page)?.[1]?.trim(), content: /<dt>Memory content<\/dt><dd>([^<]+)</.exec(page)?.[1]?.trim() };
    };
    const listed = async () => (await ms.list(store.id)).data.reduce((n, m) => n + (m.type === 'memory' ? m.content_size_bytes : 0), 0);
    const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
    expect(await listed()).toBe(2048 + 1024 + 3072);
    expect(await facts()).toEqual({ size: kb(2048 + 1024 + 3072 + checkpointBytes), content: kb(2048 + 1024 + 3072) });
    app.clock.advance(3000);
    expect(await listed()).toBe(2048 + 1024);
    expect(await facts()).toEqual({ size: kb(2048 + 1024 + checkpointBytes), content: kb(2048 + 1024) });
  });

  it('the keys page shows 100 keys at a time with a link to the rest, and the audit page names only the keys of its actors', async () => {
    const app = await inProcessApp();
    // Made at one instant of the injected clock: the pages take the ids' order among equal times.
    const made: string[] = [];
    for (let i = 0; i < 130; i++) {
      made.push((await mintKey(app, 'read_write', { body: { name: `agent-${String(i).padStart(3, '0')}` } })).secret);
    }
    const cookie = await signIn(app);
    const names = (page: string) => [...page.matchAll(/<td data-label="Name">agent-(\d{3})/g)].map((m) => m[1]);
    const first = await html(app, cookie, '/admin/keys');
    const next = /<a href="([^"]+)">Next page/.exec(first)![1]!;
    const second = await html(app, cookie, decode(next));
    expect(second).not.toContain('Next page');
    const shown = [...names(first), ...names(second)];
    expect(new Set(shown).size).toBe(130);
    expect(shown).toHaveLength(130);
    // The audit page's actor list holds the keys that wrote what it shows, not the workspace's 131.
    const store = await app.client.beta.memoryStores.create({ name: 'few writers' });
    const writes = await app.raw('POST', `/v1/memory_stores/${store.id}/memories`, { apiKey: made[7]!, body: JSON.stringify({ path: '/seven.md', content: '7' }) });
    expect(writes.status).toBe(200);
    const audit = await html(app, cookie, `/admin/stores/${store.id}/versions`);
    expect([...audit.matchAll(/<option value="apikey_\w+">([^<]+)/g)].map((m) => m[1]).sort()).toEqual(['agent-007', 'in-process-admin']);
    expect(audit).toContain('key <strong>agent-007</strong>');
  });
});
