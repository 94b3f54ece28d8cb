/**
 * Memory stores through the official SDK against the real server: object shape, field limits at
 * their edges, update patches, list filters and pagination, archive rules, deletion.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import type { RunningServer } from '../helpers/server.js';
import { inProcessApp } from '../helpers/in-process.js';
import { expectApiError, useServer } from '../helpers/sdk.js';
import { collect, expectStore, freshStore, walkPages, type Store } from './shapes.js';

let server: RunningServer;
let client: Anthropic;

useServer((s, c) => {
  server = s;
  client = c;
});

const stores = () => client.beta.memoryStores;
const metadataOf = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, `v${i}`]));

describe('create and retrieve', () => {
  it('creates a store with every declared field and retrieves the same object', async () => {
    const s = await stores().create({ name: 'Team Notes', description: 'what the team knows', metadata: { owner: 'ana' } });
    expectStore(s);
    expect(s).toMatchObject({ name: 'Team Notes', description: 'what the team knows', metadata: { owner: 'ana' }, archived_at: null });
    expect(s.updated_at).toBe(s.created_at);
    expect(await stores().retrieve(s.id)).toEqual(s);
  });

  it('defaults description to "" and metadata to {}', async () => {
    const s = await stores().create({ name: 'bare' });
    expect(s.description).toBe('');
    expect(s.metadata).toEqual({});
  });

  it('allows names that are not unique', async () => {
    const a = await stores().create({ name: 'twin' });
    const b = await stores().create({ name: 'twin' });
    expect(a.id).not.toBe(b.id);
  });
});

describe('field limits', () => {
  it.each([
    ['a name of 255 characters', { name: 'n'.repeat(255) }],
    ['a name of 255 three-byte characters', { name: '€'.repeat(255) }],
    ['a description of 1,024 characters', { name: 'x', description: 'd'.repeat(1024) }],
    ['16 metadata pairs', { name: 'x', metadata: metadataOf(16) }],
    ['a metadata key of 64 characters', { name: 'x', metadata: { ['k'.repeat(64)]: 'v' } }],
    ['a metadata value of 512 characters', { name: 'x', metadata: { k: 'v'.repeat(512) } }],
    ['an empty metadata value', { name: 'x', metadata: { k: '' } }],
  ])('accepts %s', async (_, params) => {
    const s = await stores().create(params);
    expect(s).toMatchObject(params);
  });

  it.each([
    ['an empty name', { name: '' }],
    ['a name of 256 characters', { name: 'n'.repeat(256) }],
    ['a name with a control character', { name: 'a\u0007b' }],
    ['a description of 1,025 characters', { name: 'x', description: 'd'.repeat(1025) }],
    ['17 metadata pairs', { name: 'x', metadata: metadataOf(17) }],
    ['a metadata key of 65 characters', { name: 'x', metadata: { ['k'.repeat(65)]: 'v' } }],
    ['an empty metadata key', { name: 'x', metadata: { '': 'v' } }],
    ['a metadata value of 513 characters', { name: 'x', metadata: { k: 'v'.repeat(513) } }],
  ])('refuses %s with 400 invalid_request_error', async (_, params) => {
    await expectApiError(stores().create(params), 400, 'invalid_request_error');
  });

  it('applies the same limits to updates', async () => {
    const s = await freshStore(client);
    await expectApiError(stores().update(s.id, { name: 'n'.repeat(256) }), 400, 'invalid_request_error');
    await expectApiError(stores().update(s.id, { name: '' }), 400, 'invalid_request_error');
    await expectApiError(stores().update(s.id, { description: 'd'.repeat(1025) }), 400, 'invalid_request_error');
    await expectApiError(stores().update(s.id, { metadata: { ['k'.repeat(65)]: 'v' } }), 400, 'invalid_request_error');
    await expectApiError(stores().update(s.id, { metadata: { k: 'v'.repeat(513) } }), 400, 'invalid_request_error');
    const ok = await stores().update(s.id, { name: 'n'.repeat(255), description: 'd'.repeat(1024), metadata: { ['k'.repeat(64)]: 'v'.repeat(512) } });
    expect(ok.name).toHaveLength(255);
    expect(await stores().retrieve(s.id)).toEqual(ok);
  });

  it('counts metadata pairs after the patch is applied: 16 pass, 17 fail', async () => {
    const s = await stores().create({ name: 'meta', metadata: metadataOf(15) });
    const sixteen = await stores().update(s.id, { metadata: { extra: 'x' } });
    expect(Object.keys(sixteen.metadata)).toHaveLength(16);
    await expectApiError(stores().update(s.id, { metadata: { more: 'y' } }), 400, 'invalid_request_error');
    // Removing one and adding one in the same patch stays at 16.
    const swapped = await stores().update(s.id, { metadata: { k0: null, more: 'y' } });
    expect(Object.keys(swapped.metadata)).toHaveLength(16);
    expect(swapped.metadata).not.toHaveProperty('k0');
  });
});

describe('update', () => {
  // In-process, with a clock the test moves: time passes between the two writes without waiting.
  it('patches only the fields it is given and moves updated_at', async () => {
    const { client, clock } = await inProcessApp();
    const stores = client.beta.memoryStores;
    const s = await stores.create({ name: 'before', description: 'desc', metadata: { a: '1', b: '2' } });
    clock.advance(5);
    const u = await stores.update(s.id, { name: 'after' });
    expectStore(u);
    expect(u).toMatchObject({ id: s.id, name: 'after', description: 'desc', metadata: { a: '1', b: '2' }, created_at: s.created_at });
    expect(u.updated_at > s.updated_at).toBe(true);
  });

  it('clears the description with "" and treats null fields as absent', async () => {
    const s = await stores().create({ name: 'n', description: 'desc', metadata: { a: '1' } });
    const cleared = await stores().update(s.id, { description: '' });
    expect(cleared.description).toBe('');
    const same = await stores().update(s.id, { name: null, description: null, metadata: null });
    expect(same).toMatchObject({ name: 'n', description: '', metadata: { a: '1' } });
  });

  it('upserts metadata keys with strings and deletes them with null', async () => {
    const s = await stores().create({ name: 'n', metadata: { keep: '1', change: '2', drop: '3' } });
    const u = await stores().update(s.id, { metadata: { change: 'two', drop: null, add: '4', absent: null } });
    expect(u.metadata).toEqual({ keep: '1', change: 'two', add: '4' });
  });

  // In-process, with a clock the test moves: time passes between the two writes without waiting.
  it('leaves updated_at alone when nothing changes', async () => {
    const { client, clock } = await inProcessApp();
    const stores = client.beta.memoryStores;
    const s = await stores.create({ name: 'still', metadata: { a: '1' } });
    clock.advance(5);
    const u = await stores.update(s.id, { name: 'still', metadata: { a: '1' } });
    expect(u).toEqual(s);
  });
});

describe('list', () => {
  it('lists newest first and pages with no duplicates or gaps (auto-pagination and next_page)', async () => {
    const created: Store[] = [];
    for (let i = 0; i < 7; i++) created.push(await stores().create({ name: `paged ${i}` }));
    const all = (await stores().list({ limit: 100 })).data;
    expect(all.length).toBeLessThan(100);
    for (const s of all) expectStore(s);
    const ids = all.map((s) => s.id);
    // Newest first: the seven just made lead the list, in reverse order of creation.
    expect(ids.slice(0, 7)).toEqual(created.map((s) => s.id).reverse());

    const auto = await collect(stores().list({ limit: 3 }));
    expect(auto.map((s) => s.id)).toEqual(ids);

    const pages = await walkPages((page) => stores().list({ limit: 3, ...(page ? { page } : {}) }));
    expect(pages.slice(0, -1).every((p) => p.length === 3)).toBe(true);
    expect(pages.flat().map((s) => s.id)).toEqual(ids);
  });

  it('defaults to 20 per page and accepts limits 1 and 100', async () => {
    for (let i = 0; i < 21; i++) await stores().create({ name: `many ${i}` });
    const first = await stores().list();
    expect(first.data).toHaveLength(20);
    expect(first.next_page).toMatch(/^page_/);
    expect((await stores().list({ limit: 1 })).data).toHaveLength(1);
    expect((await stores().list({ limit: 100 })).data.length).toBeGreaterThan(20);
  });

  it.each([0, 101, -1])('refuses limit=%s with 400', async (limit) => {
    await expectApiError(stores().list({ limit }), 400, 'invalid_request_error');
  });

  // In-process, with a clock the test moves: each store is made at its own moment without waiting.
  it('filters by created_at[gte] and created_at[lte], both inclusive', async () => {
    const { client, clock } = await inProcessApp();
    const stores = client.beta.memoryStores;
    const made: Store[] = [];
    for (let i = 0; i < 4; i++) {
      made.push(await stores.create({ name: `dated ${i}` }));
      clock.advance(3);
    }
    const [a, b, c, d] = made as [Store, Store, Store, Store];
    const within = (await stores.list({ 'created_at[gte]': b.created_at, 'created_at[lte]': c.created_at, limit: 100 })).data;
    expect(within.map((s) => s.id)).toEqual([c.id, b.id]);
    const after = (await stores.list({ 'created_at[gte]': d.created_at, limit: 100 })).data.map((s) => s.id);
    expect(after).toContain(d.id);
    expect(after).not.toContain(c.id);
    const before = (await stores.list({ 'created_at[lte]': a.created_at, limit: 100 })).data.map((s) => s.id);
    expect(before).toContain(a.id);
    expect(before).not.toContain(b.id);
  });

  it('accepts RFC 3339 timestamps with an offset', async () => {
    const s = await stores().create({ name: 'offset' });
    const ms = Date.parse(s.created_at);
    const plusTwo = new Date(ms + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    const ids = (await stores().list({ 'created_at[gte]': plusTwo, 'created_at[lte]': plusTwo, limit: 100 })).data.map((x) => x.id);
    expect(ids).toContain(s.id);
  });

  it('refuses a created_at filter that is not RFC 3339', async () => {
    await expectApiError(stores().list({ 'created_at[gte]': 'yesterday' }), 400, 'invalid_request_error');
    await expectApiError(stores().list({ 'created_at[lte]': '2026-13-45T00:00:00Z' }), 400, 'invalid_request_error');
  });
});

describe('archive', () => {
  it('archives once: a second archive returns the store unchanged', async () => {
    const s = await freshStore(client);
    const a = await stores().archive(s.id);
    expectStore(a);
    expect(a.archived_at).not.toBeNull();
    expect(a.updated_at).toBe(a.archived_at);
    const again = await stores().archive(s.id);
    expect(again).toEqual(a);
    expect(await stores().retrieve(s.id)).toEqual(a);
  });

  it('leaves archived stores out of lists unless include_archived=true', async () => {
    const live = await freshStore(client);
    const gone = await freshStore(client);
    await stores().archive(gone.id);
    const plain = (await collect(stores().list({ limit: 100 }))).map((s) => s.id);
    expect(plain).toContain(live.id);
    expect(plain).not.toContain(gone.id);
    const explicitFalse = (await collect(stores().list({ include_archived: false, limit: 100 }))).map((s) => s.id);
    expect(explicitFalse).toEqual(plain);
    const all = (await collect(stores().list({ include_archived: true, limit: 100 }))).map((s) => s.id);
    expect(all).toContain(gone.id);
    expect(all).toContain(live.id);
  });

  it('refuses store updates on an archived store with 409 conflict_error', async () => {
    const s = await freshStore(client);
    await stores().archive(s.id);
    await expectApiError(stores().update(s.id, { name: 'renamed' }), 409, 'conflict_error');
    await expectApiError(stores().update(s.id, { metadata: { a: 'b' } }), 409, 'conflict_error');
  });

  it('keeps an archived store readable and deletable', async () => {
    const s = await freshStore(client);
    const m = await stores().memories.create(s.id, { path: '/kept.md', content: 'still here' });
    await stores().archive(s.id);
    expect((await stores().memories.retrieve(m.id, { memory_store_id: s.id })).content).toBe('still here');
    expect((await stores().memories.list(s.id)).data).toHaveLength(1);
    expect((await stores().memoryVersions.list(s.id)).data).toHaveLength(1);
    expect(await stores().delete(s.id)).toEqual({ id: s.id, type: 'memory_store_deleted' });
  });
});

describe('delete', () => {
  it('deletes a store with its memories and versions', async () => {
    const s = await freshStore(client);
    const m = await stores().memories.create(s.id, { path: '/a.md', content: 'a' });
    const [v] = (await stores().memoryVersions.list(s.id)).data;
    const res = await stores().delete(s.id);
    expect(res).toEqual({ id: s.id, type: 'memory_store_deleted' });

    await expectApiError(stores().retrieve(s.id), 404, 'not_found_error');
    await expectApiError(stores().memories.retrieve(m.id, { memory_store_id: s.id }), 404, 'not_found_error');
    await expectApiError(stores().memories.list(s.id), 404, 'not_found_error');
    await expectApiError(stores().memoryVersions.list(s.id), 404, 'not_found_error');
    await expectApiError(stores().memoryVersions.retrieve(v!.id, { memory_store_id: s.id }), 404, 'not_found_error');
    await expectApiError(stores().delete(s.id), 404, 'not_found_error');
    const ids = (await collect(stores().list({ include_archived: true, limit: 100 }))).map((x) => x.id);
    expect(ids).not.toContain(s.id);
  });
});
