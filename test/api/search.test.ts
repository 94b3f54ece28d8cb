/**
 * Search (issue 6) against the real server: bm25 ranking, snippets, the path prefix, pagination,
 * the substring mode, and that updates, deletes, renames, expiry and redaction show at once. Issue
 * 11: every page says whether it came from a capped window, and no query text is ever a 500.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { extensions } from '../helpers/continuity.js';
import type { RunningServer } from '../helpers/server.js';
import { onPostgres } from '../helpers/engine.js';
import { inProcessApp } from '../helpers/in-process.js';
import { expectApiError, rawRequest, useServer } from '../helpers/sdk.js';
import { freshStore, type Store } from './shapes.js';

let server: RunningServer;
let client: Anthropic;
let ext: ReturnType<typeof extensions>;

useServer((s, c) => {
  server = s;
  client = c;
  ext = extensions(client);
});

const paths = (hits: { memory: { path: string } }[]) => hits.map((h) => h.memory.path);

async function seed(tree: Record<string, string>): Promise<Store> {
  const store = await freshStore(client, 'search');
  for (const [path, content] of Object.entries(tree)) await client.beta.memoryStores.memories.create(store.id, { path, content });
  return store;
}

describe('full-text search', () => {
  it('ranks a memory dense in the term above one that mentions it once', async () => {
    const store = await seed({
      '/a/passing.md': 'We talked about lunch, the weather, the roadmap, hiring and once about kubernetes.',
      '/b/focused.md': 'kubernetes upgrade: drain kubernetes nodes, then upgrade kubernetes control plane',
      '/c/unrelated.md': 'Nothing to see here.',
    });
    const { data } = await ext.search(store.id, { q: 'kubernetes' });
    expect(paths(data)).toEqual(['/b/focused.md', '/a/passing.md']);
    expect(data[0]!.score).toBeLessThan(data[1]!.score);
  });

  it('matches every word of the query, in any order, case-insensitively', async () => {
    const store = await seed({ '/x.md': 'Deploy the Billing service on Tuesday', '/y.md': 'billing only' });
    expect(paths((await ext.search(store.id, { q: 'tuesday BILLING' })).data)).toEqual(['/x.md']);
  });

  it('returns a snippet with the matched terms marked', async () => {
    const store = await seed({ '/notes.md': 'Some preamble. The database password rotates every month. Some trailer.' });
    const [hit] = (await ext.search(store.id, { q: 'password' })).data;
    expect(hit!.snippet).toContain('**password**');
    expect(hit!.memory).toMatchObject({ path: '/notes.md', type: 'memory' });
  });

  it('finds memories by words in their path', async () => {
    const store = await seed({ '/projects/zebra/readme.md': 'no match in body', '/other.md': 'nothing' });
    expect(paths((await ext.search(store.id, { q: 'zebra' })).data)).toEqual(['/projects/zebra/readme.md']);
  });

  it('limits results to a path prefix of whole segments', async () => {
    const store = await seed({ '/team/a.md': 'alpha', '/team-b/a.md': 'alpha', '/team/sub/c.md': 'alpha', '/z.md': 'alpha' });
    expect(paths((await ext.search(store.id, { q: 'alpha', path_prefix: '/team/' })).data).sort()).toEqual(['/team/a.md', '/team/sub/c.md']);
    await expectApiError(ext.search(store.id, { q: 'alpha', path_prefix: '/team' }), 400, 'invalid_request_error');
  });

  it('pages with limit and next_page, each hit once', async () => {
    const tree: Record<string, string> = {};
    for (let i = 0; i < 7; i++) tree[`/p/${i}.md`] = `common word ${i}`;
    const store = await seed(tree);
    const seen: string[] = [];
    let page: string | undefined;
    do {
      const res = await ext.search(store.id, { q: 'common', limit: 3, ...(page ? { page } : {}) });
      expect(res.data.length).toBeLessThanOrEqual(3);
      seen.push(...paths(res.data));
      page = res.next_page ?? undefined;
    } while (page);
    expect(seen.sort()).toEqual(Object.keys(tree).sort());
  });

  it('treats query syntax as plain words', async () => {
    const store = await seed({ '/q.md': 'a "quoted" NEAR(thing) OR other - and * stars' });
    expect((await ext.search(store.id, { q: 'NEAR(thing) "quoted' })).data).toHaveLength(1);
    expect((await ext.search(store.id, { q: '*' })).data).toEqual([]);
  });

  it('refuses a blank query, an unknown mode and a foreign cursor', async () => {
    const store = await seed({});
    await expectApiError(ext.search(store.id, { q: '  ' }), 400, 'invalid_request_error');
    await expectApiError(ext.search(store.id, { q: 'x', mode: 'regex' }), 400, 'invalid_request_error');
    await expectApiError(ext.search(store.id, { q: 'x', page: 'nope' }), 400, 'invalid_request_error');
    await expectApiError(ext.search('memstore_missing', { q: 'x' }), 404, 'not_found_error');
  });
});

describe('substring search', () => {
  it('finds an exact phrase case-insensitively, including inside words', async () => {
    const store = await seed({ '/a.md': 'The Quick-Brown fox', '/b.md': 'quick brown', '/c.md': 'ÉCOLE élève' });
    expect(paths((await ext.search(store.id, { q: 'quick-brown', mode: 'substring' })).data)).toEqual(['/a.md']);
    expect(paths((await ext.search(store.id, { q: 'ick-bro', mode: 'substring' })).data)).toEqual(['/a.md']);
    expect(paths((await ext.search(store.id, { q: 'école', mode: 'substring' })).data)).toEqual(['/c.md']);
    const [hit] = (await ext.search(store.id, { q: 'brown fox', mode: 'substring' })).data;
    expect(hit!.snippet).toContain('**Brown fox**');
  });
});

describe('search follows every write at once', () => {
  it('reflects an update, a rename and a delete in the next search', async () => {
    const store = await seed({ '/n.md': 'original flamingo text' });
    const mem = client.beta.memoryStores.memories;
    const [hit] = (await ext.search(store.id, { q: 'flamingo' })).data;
    await mem.update(hit!.memory.id, { memory_store_id: store.id, content: 'now about pelicans' });
    expect((await ext.search(store.id, { q: 'flamingo' })).data).toEqual([]);
    expect(paths((await ext.search(store.id, { q: 'pelicans' })).data)).toEqual(['/n.md']);
    expect((await ext.search(store.id, { q: 'flamingo', mode: 'substring' })).data).toEqual([]);
    await mem.update(hit!.memory.id, { memory_store_id: store.id, path: '/moved/n.md' });
    expect(paths((await ext.search(store.id, { q: 'pelicans' })).data)).toEqual(['/moved/n.md']);
    await mem.delete(hit!.memory.id, { memory_store_id: store.id });
    expect((await ext.search(store.id, { q: 'pelicans' })).data).toEqual([]);
    expect((await ext.search(store.id, { q: 'pelicans', mode: 'substring' })).data).toEqual([]);
  });

  it('never finds redacted content, in either mode', async () => {
    const store = await seed({ '/secret.md': 'api token hunter2secret' });
    const mem = client.beta.memoryStores.memories;
    const [hit] = (await ext.search(store.id, { q: 'hunter2secret' })).data;
    const oldVersion = (await mem.retrieve(hit!.memory.id, { memory_store_id: store.id })).memory_version_id;
    await mem.update(hit!.memory.id, { memory_store_id: store.id, content: 'api token [removed]' });
    await client.beta.memoryStores.memoryVersions.redact(oldVersion, { memory_store_id: store.id });
    expect((await ext.search(store.id, { q: 'hunter2secret' })).data).toEqual([]);
    expect((await ext.search(store.id, { q: 'hunter2', mode: 'substring' })).data).toEqual([]);
    expect(paths((await ext.search(store.id, { q: 'removed' })).data)).toEqual(['/secret.md']);
  });

  // In-process, with a clock the test moves: the expiry passes without waiting for it.
  it('stops finding a memory once it expires', async () => {
    const { client, clock } = await inProcessApp();
    const ext = extensions(client);
    const store = await freshStore(client, 'search');
    await client.post(`/v1/memory_stores/${store.id}/memories`, { body: { path: '/tmp.md', content: 'ephemeral otter', ttl_seconds: 1 } });
    expect(paths((await ext.search(store.id, { q: 'otter' })).data)).toEqual(['/tmp.md']);
    clock.advance(1200);
    expect((await ext.search(store.id, { q: 'otter' })).data).toEqual([]);
    expect((await ext.search(store.id, { q: 'otter', mode: 'substring' })).data).toEqual([]);
  });

  it('does not find memories of another store', async () => {
    const a = await seed({ '/a.md': 'walrus' });
    const b = await seed({ '/b.md': 'walrus' });
    expect(paths((await ext.search(a.id, { q: 'walrus' })).data)).toEqual(['/a.md']);
    expect(paths((await ext.search(b.id, { q: 'walrus' })).data)).toEqual(['/b.md']);
  });
});

describe('what a search page says about its window (issue 11)', () => {
  it('says candidates_capped: false when every match was ranked together, in both modes', async () => {
    const store = await seed({ '/a.md': 'gannet one', '/b.md': 'gannet two' });
    for (const mode of ['fts', 'substring']) {
      const res = await ext.search(store.id, { q: 'gannet', mode });
      expect(res).toMatchObject({ next_page: null, candidates_capped: false });
      expect(res.data).toHaveLength(2);
    }
  });

  it('says candidates_capped: true past a window of 1,000 matches and pages on to every one of them', async () => {
    const store = await freshStore(client, 'search');
    const n = 1010;
    // 40 at once: one key may send at most 48 bodies together (MNEMO_MAX_INFLIGHT_BODIES less the
    // other tenants' reserve); 50 were refused with 503 whenever all 50 overlapped.
    for (let i = 0; i < n; i += 40) {
      await Promise.all(
        Array.from({ length: Math.min(40, n - i) }, (_, k) =>
          client.beta.memoryStores.memories.create(store.id, { path: `/c/${String(i + k).padStart(4, '0')}.md`, content: `cormorant ${i + k}` }),
        ),
      );
    }
    const seen: string[] = [];
    let page: string | undefined;
    do {
      const res = await ext.search(store.id, { q: 'cormorant', limit: 100, ...(page ? { page } : {}) });
      // PostgreSQL ranks over every match (its GIN index finds them all): nothing is capped there (README, what differs).
      expect(res.candidates_capped).toBe(!onPostgres());
      seen.push(...paths(res.data));
      page = res.next_page ?? undefined;
    } while (page);
    expect(seen).toHaveLength(n);
    expect(new Set(seen).size).toBe(n);
  });
});

describe('hostile query text (issue 11)', () => {
  const long = 'ab '.repeat(341) + 'a';
  const nasty = [
    '\0', 'a\0b', '\0\0 kittiwake', '"', "'", '""', '"unterminated', "it's", 'AND', 'OR', 'NOT', 'NEAR', 'NEAR(a b, 2)',
    'a AND', 'OR b', 'NOT x', '*', 'kitti*', '^kittiwake', 'path:kittiwake', 'content : x', '(', ')', '(a OR', '-x', '+', '{a b}', '[x]',
    '!@#$%^&*()_+-=[]{}|;:,.<>?/~`', '\\', '%', '_', '😀', 'kittiwake 😀🐦', 'e\u0301', '\u0301\u0302\u0303', 'Ω≈ç√∫', '\u200b', '\u202e', '\ufeff',
    '\x01\x02\x1f', '\t\n kittiwake \r', long, long + 'b', 'x'.repeat(1025),
  ];

  it('answers every one with a result or a 400, never a 500, in both modes', async () => {
    const store = await seed({ '/k.md': 'kittiwake 😀 e\u0301 "quoted" (paren) it\'s' });
    for (const mode of ['fts', 'substring']) {
      for (const q of nasty) {
        const res = await rawRequest(server.url, 'GET', `/v1/memory_stores/${store.id}/search?mode=${mode}&q=${encodeURIComponent(q)}`, { apiKey: server.adminKey });
        const what = `${mode} ${JSON.stringify(q.slice(0, 40))} → ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
        expect([200, 400], what).toContain(res.status);
        if (res.status === 200) expect(res.body, what).toMatchObject({ data: expect.any(Array), candidates_capped: expect.any(Boolean) });
        else expect(res.body, what).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      }
    }
    // NUL is a word separator in full-text mode and a plain character in substring mode.
    expect(paths((await ext.search(store.id, { q: '\0kittiwake\0' })).data)).toEqual(['/k.md']);
    expect((await ext.search(store.id, { q: 'a\0b', mode: 'substring' })).data).toEqual([]);
    // A lone surrogate is not text: refused, as a write with one would be.
    const bad = await rawRequest(server.url, 'GET', `/v1/memory_stores/${store.id}/search?q=%ED%A0%80`, { apiKey: server.adminKey });
    expect([200, 400]).toContain(bad.status);
  });
});
