/**
 * Memory versions through the official SDK against the real server: the version object and its
 * views, every list filter (memory_id, operation, created_at, api_key_id with a second key minted
 * by the CLI), pagination, and redaction.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { runCli, type RunningServer } from '../helpers/server.js';
import { inProcessApp } from '../helpers/in-process.js';
import { expectApiError, sdkClient, useServer } from '../helpers/sdk.js';
import { bytes, collect, expectVersionShape, freshStore, sha256, timestamp, walkPages, type Store, type Version } from './shapes.js';

let server: RunningServer;
let client: Anthropic;
let store: Store;

useServer((s, c) => {
  server = s;
  client = c;
});

const memories = () => client.beta.memoryStores.memories;
const versions = () => client.beta.memoryStores.memoryVersions;

async function newStore(): Promise<Store> {
  store = await freshStore(client, 'versions');
  return store;
}
const allVersions = (params: Parameters<ReturnType<typeof versions>['list']>[1] = {}) =>
  collect(versions().list(store.id, { limit: params?.view === 'full' ? 20 : 100, ...params }));

/** Creates, modifies, renames and deletes one memory; returns its id and versions oldest first. */
async function history(): Promise<{ memoryId: string; created: Version; modified: Version; renamed: Version; deleted: Version }> {
  const m = await memories().create(store.id, { path: '/h.md', content: 'one' });
  await memories().update(m.id, { memory_store_id: store.id, content: 'two' });
  await memories().update(m.id, { memory_store_id: store.id, path: '/h2.md' });
  await memories().delete(m.id, { memory_store_id: store.id });
  const [deleted, renamed, modified, created] = (await allVersions({ memory_id: m.id, view: 'full' })) as [Version, Version, Version, Version];
  return { memoryId: m.id, created, modified, renamed, deleted };
}

describe('version objects', () => {
  it('records created, modified (content and rename) and deleted versions, newest first', async () => {
    await newStore();
    const h = await history();
    for (const v of [h.created, h.modified, h.renamed, h.deleted]) {
      expectVersionShape(v);
      expect(v).toMatchObject({ memory_store_id: store.id, memory_id: h.memoryId, redacted_at: null, redacted_by: null });
    }
    expect(h.created).toMatchObject({ operation: 'created', path: '/h.md', content: 'one', content_sha256: sha256('one'), content_size_bytes: 3 });
    expect(h.modified).toMatchObject({ operation: 'modified', path: '/h.md', content: 'two', content_sha256: sha256('two') });
    expect(h.renamed).toMatchObject({ operation: 'modified', path: '/h2.md', content: 'two', content_size_bytes: bytes('two') });
    // A deleted row names the path it removed; the content belongs to the version before it.
    expect(h.deleted).toMatchObject({ operation: 'deleted', path: '/h2.md', content: null, content_sha256: null, content_size_bytes: null });
  });

  it('lists with view=basic by default (content null) and full on request; retrieve defaults to full', async () => {
    await newStore();
    const m = await memories().create(store.id, { path: '/v.md', content: 'body' });
    const [basic] = (await versions().list(store.id)).data as [Version];
    expectVersionShape(basic);
    expect(basic).toMatchObject({ id: m.memory_version_id, content: null, content_sha256: sha256('body'), content_size_bytes: 4, path: '/v.md' });
    const [full] = (await versions().list(store.id, { view: 'full' })).data as [Version];
    expect(full).toEqual({ ...basic, content: 'body' });
    expect(await versions().retrieve(m.memory_version_id, { memory_store_id: store.id })).toEqual(full);
    expect(await versions().retrieve(m.memory_version_id, { memory_store_id: store.id, view: 'basic' })).toEqual(basic);
  });

  it('keeps the version list of a deleted memory, including its deleted row', async () => {
    await newStore();
    const h = await history();
    await expectApiError(memories().retrieve(h.memoryId, { memory_store_id: store.id }), 404, 'not_found_error');
    const ops = (await allVersions({ memory_id: h.memoryId })).map((v) => v.operation);
    expect(ops).toEqual(['deleted', 'modified', 'modified', 'created']);
    expect((await versions().retrieve(h.created.id, { memory_store_id: store.id })).content).toBe('one');
  });

  it('does not find a version through another store', async () => {
    await newStore();
    const m = await memories().create(store.id, { path: '/x.md', content: 'x' });
    const other = await freshStore(client);
    await expectApiError(versions().retrieve(m.memory_version_id, { memory_store_id: other.id }), 404, 'not_found_error');
    await expectApiError(versions().redact(m.memory_version_id, { memory_store_id: other.id }), 404, 'not_found_error');
    expect((await versions().list(other.id)).data).toEqual([]);
  });
});

describe('filters', () => {
  it('filters by memory_id and operation, alone and together', async () => {
    await newStore();
    const h = await history();
    const other = await memories().create(store.id, { path: '/other.md', content: 'o' });
    await memories().update(other.id, { memory_store_id: store.id, content: 'p' });

    expect((await allVersions({ memory_id: other.id })).map((v) => v.operation)).toEqual(['modified', 'created']);
    expect((await allVersions({ operation: 'created' })).map((v) => v.memory_id)).toEqual([other.id, h.memoryId]);
    expect((await allVersions({ operation: 'deleted' })).map((v) => v.id)).toEqual([h.deleted.id]);
    expect((await allVersions({ operation: 'modified', memory_id: h.memoryId })).map((v) => v.id)).toEqual([h.renamed.id, h.modified.id]);
    expect(await allVersions({ memory_id: 'mem_doesnotexist' })).toEqual([]);
    await expectApiError(versions().list(store.id, { operation: 'renamed' as 'created' }), 400, 'invalid_request_error');
  });

  // In-process, with a clock the test moves: each version is made at its own moment without waiting.
  it('filters by created_at[gte] and created_at[lte], both inclusive', async () => {
    const { client, clock } = await inProcessApp();
    const { memories, memoryVersions: versions } = client.beta.memoryStores;
    const store = await freshStore(client, 'versions');
    const allVersions = (params: Parameters<typeof versions.list>[1] = {}) => collect(versions.list(store.id, { limit: 100, ...params }));
    const m = await memories.create(store.id, { path: '/t.md', content: '0' });
    for (let i = 1; i <= 5; i++) {
      clock.advance(3);
      await memories.update(m.id, { memory_store_id: store.id, content: String(i) });
    }
    const all = await allVersions();
    expect(all).toHaveLength(6);
    const times = all.map((v) => v.created_at);
    const [hi, lo] = [times[1]!, times[4]!];
    const expected = all.filter((v) => v.created_at >= lo && v.created_at <= hi).map((v) => v.id);
    expect(expected.length).toBeGreaterThanOrEqual(4);
    expect((await allVersions({ 'created_at[gte]': lo, 'created_at[lte]': hi })).map((v) => v.id)).toEqual(expected);
    expect((await allVersions({ 'created_at[gte]': hi })).map((v) => v.id)).toEqual(all.filter((v) => v.created_at >= hi).map((v) => v.id));
    expect((await allVersions({ 'created_at[lte]': lo })).map((v) => v.id)).toEqual(all.filter((v) => v.created_at <= lo).map((v) => v.id));
    expect(await allVersions({ 'created_at[gte]': '2999-01-01T00:00:00Z' })).toEqual([]);
    await expectApiError(versions.list(store.id, { 'created_at[gte]': 'not a time' }), 400, 'invalid_request_error');
  });

  it('attributes versions to the API key that wrote them and filters by api_key_id', async () => {
    await newStore();
    const mine = await memories().create(store.id, { path: '/admin.md', content: 'a' });
    const adminKeyId = (await versions().retrieve(mine.memory_version_id, { memory_store_id: store.id })).created_by;
    expect(adminKeyId).toMatchObject({ type: 'api_actor', api_key_id: expect.stringMatching(/^apikey_/) });

    // A second key, minted by the CLI against the live server's data dir.
    const cli = await runCli(['keys', 'create', '--role', 'admin', '--name', 'second', '--data-dir', server.dataDir]);
    expect(cli.code, cli.stderr).toBe(0);
    const secret = cli.stdout.trim().split('\n')[0]!;
    expect(secret.length).toBeGreaterThan(16);
    const second = sdkClient(server.url, secret);
    const theirs = await second.beta.memoryStores.memories.create(store.id, { path: '/second.md', content: 'b' });
    await second.beta.memoryStores.memories.update(theirs.id, { memory_store_id: store.id, content: 'c' });
    const [secondVersion] = (await allVersions({ memory_id: theirs.id })) as [Version];
    const secondKeyId = (secondVersion.created_by as { api_key_id: string }).api_key_id;
    const adminId = (adminKeyId as { api_key_id: string }).api_key_id;
    expect(secondKeyId).toMatch(/^apikey_/);
    expect(secondKeyId).not.toBe(adminId);
    const printed = /apikey_[0-9A-Za-z]+/.exec(cli.stderr)?.[0];
    if (printed !== undefined) expect(secondKeyId).toBe(printed);

    const bySecond = await allVersions({ api_key_id: secondKeyId });
    expect(bySecond.map((v) => v.memory_id)).toEqual([theirs.id, theirs.id]);
    expect(bySecond.every((v) => (v.created_by as { api_key_id: string }).api_key_id === secondKeyId)).toBe(true);
    const byAdmin = await allVersions({ api_key_id: adminId });
    expect(byAdmin.map((v) => v.memory_id)).toEqual([mine.id]);
    expect(await allVersions({ api_key_id: 'apikey_nobody' })).toEqual([]);
    expect(await allVersions({ session_id: 'sesn_nobody' })).toEqual([]);

    // Redaction is attributed too.
    await memories().update(mine.id, { memory_store_id: store.id, content: 'a2' });
    const redacted = await second.beta.memoryStores.memoryVersions.redact(mine.memory_version_id, { memory_store_id: store.id });
    expect(redacted.redacted_by).toEqual({ type: 'api_actor', api_key_id: secondKeyId });
    expect(redacted.created_by).toEqual({ type: 'api_actor', api_key_id: adminId });
  });

  it('refuses limits outside 1–100 with 400 in either view', async () => {
    await newStore();
    await memories().create(store.id, { path: '/l.md', content: 'x' });
    expect((await versions().list(store.id, { limit: 100 })).data).toHaveLength(1);
    for (const [limit, view] of [[0, 'basic'], [101, 'basic'], [101, 'full']] as const) {
      await expectApiError(versions().list(store.id, { limit, view }), 400, 'invalid_request_error');
    }
  });

  it('caps a view=full page at 20 versions when a larger limit is asked for', async () => {
    await newStore();
    const m = await memories().create(store.id, { path: '/cap.md', content: 'v0' });
    for (let i = 1; i < 22; i++) await memories().update(m.id, { memory_store_id: store.id, content: `v${i}` });
    const page = await versions().list(store.id, { limit: 21, view: 'full' });
    expect(page.data).toHaveLength(20);
    expect(page.data[0]!.content).toBe('v21');
    expect((await versions().list(store.id, { limit: 21 })).data).toHaveLength(21);
  });
});

describe('pagination', () => {
  it('pages through 23 versions with no duplicates or gaps, also under a filter', async () => {
    await newStore();
    const m = await memories().create(store.id, { path: '/page.md', content: 'v0' });
    for (let i = 1; i < 20; i++) await memories().update(m.id, { memory_store_id: store.id, content: `v${i}` });
    const n = await memories().create(store.id, { path: '/page2.md', content: 'w0' });
    await memories().update(n.id, { memory_store_id: store.id, content: 'w1' });
    await memories().delete(n.id, { memory_store_id: store.id });

    const all = (await versions().list(store.id, { limit: 100 })).data;
    expect(all).toHaveLength(23);
    const ids = all.map((v) => v.id);
    expect(new Set(ids).size).toBe(23);

    const auto = await collect(versions().list(store.id, { limit: 5 }));
    expect(auto.map((v) => v.id)).toEqual(ids);
    const pages = await walkPages((page) => versions().list(store.id, { limit: 5, ...(page ? { page } : {}) }));
    expect(pages.map((p) => p.length)).toEqual([5, 5, 5, 5, 3]);
    expect(pages.flat().map((v) => v.id)).toEqual(ids);

    const full = await walkPages((page) => versions().list(store.id, { limit: 4, view: 'full', memory_id: m.id, ...(page ? { page } : {}) }));
    expect(full.flat().map((v) => v.content)).toEqual(Array.from({ length: 20 }, (_, i) => `v${19 - i}`));
    const modified = await collect(versions().list(store.id, { limit: 3, operation: 'modified' }));
    expect(modified).toHaveLength(20);
  });
});

describe('redaction', () => {
  it('nulls content, path, sha256 and size, stamps redacted_at/redacted_by, and keeps the rest', async () => {
    await newStore();
    const m = await memories().create(store.id, { path: '/secret.md', content: 'password=hunter2' });
    const current = await memories().update(m.id, { memory_store_id: store.id, content: 'password=<removed>', view: 'full' });
    const before = await versions().retrieve(m.memory_version_id, { memory_store_id: store.id });

    const r = await versions().redact(m.memory_version_id, { memory_store_id: store.id });
    expectVersionShape(r);
    expect(r).toEqual({
      ...before,
      path: null,
      content: null,
      content_sha256: null,
      content_size_bytes: null,
      redacted_at: timestamp(),
      redacted_by: { type: 'api_actor', api_key_id: expect.stringMatching(/^apikey_/) },
      content_still_held_by: 0,
      content_still_held_in: { data: [], has_more: false },
    });
    const stored = { ...r, content_still_held_by: undefined, content_still_held_in: undefined };
    expect(await versions().retrieve(r.id, { memory_store_id: store.id })).toEqual(stored);
    expect(await versions().retrieve(r.id, { memory_store_id: store.id, view: 'basic' })).toEqual(stored);
    const listed = (await allVersions({ view: 'full' })).find((v) => v.id === r.id);
    expect(listed).toEqual(stored);
    // The current memory is untouched.
    expect(await memories().retrieve(m.id, { memory_store_id: store.id })).toEqual(current);
  });

  it('refuses to redact the head version of a live memory with 409', async () => {
    await newStore();
    const m = await memories().create(store.id, { path: '/head.md', content: 'x' });
    await expectApiError(versions().redact(m.memory_version_id, { memory_store_id: store.id }), 409, 'conflict_error');
    const v = await versions().retrieve(m.memory_version_id, { memory_store_id: store.id });
    expect(v).toMatchObject({ content: 'x', redacted_at: null });
  });

  it('allows redaction of the former head after an update, and of every version after a delete', async () => {
    await newStore();
    const h = await history();
    for (const v of [h.renamed, h.deleted, h.created, h.modified]) {
      const r = await versions().redact(v.id, { memory_store_id: store.id });
      expect(r).toMatchObject({ id: v.id, operation: v.operation, path: null, content: null, content_sha256: null, content_size_bytes: null });
      expect(r.redacted_at).not.toBeNull();
    }
    const listed = await allVersions({ memory_id: h.memoryId, view: 'full' });
    expect(listed.every((v) => v.redacted_at !== null && v.path === null && v.content === null)).toBe(true);
  });

  // In-process, with a clock the test moves: time passes between the two redactions without waiting.
  it('is idempotent: a second redact returns the same version with the first redacted_at', async () => {
    const { client, clock } = await inProcessApp();
    const { memories, memoryVersions: versions } = client.beta.memoryStores;
    const store = await freshStore(client, 'versions');
    const m = await memories.create(store.id, { path: '/twice.md', content: 'x' });
    await memories.update(m.id, { memory_store_id: store.id, content: 'y' });
    const first = await versions.redact(m.memory_version_id, { memory_store_id: store.id });
    clock.advance(5);
    const second = await versions.redact(m.memory_version_id, { memory_store_id: store.id });
    // Only the redaction that erased the text counts who else holds it.
    expect((first as { content_still_held_by?: number }).content_still_held_by).toBe(0);
    expect(second).toEqual({ ...first, content_still_held_by: undefined, content_still_held_in: undefined });
  });

  it('is allowed in an archived store', async () => {
    await newStore();
    const m = await memories().create(store.id, { path: '/arch.md', content: 'x' });
    await memories().update(m.id, { memory_store_id: store.id, content: 'y' });
    await client.beta.memoryStores.archive(store.id);
    const r = await versions().redact(m.memory_version_id, { memory_store_id: store.id });
    expect(r.redacted_at).not.toBeNull();
  });

  it('answers 404 for an unknown version id', async () => {
    await newStore();
    await expectApiError(versions().redact('memver_doesnotexist', { memory_store_id: store.id }), 404, 'not_found_error');
    await expectApiError(versions().retrieve('memver_doesnotexist', { memory_store_id: store.id }), 404, 'not_found_error');
  });
});
