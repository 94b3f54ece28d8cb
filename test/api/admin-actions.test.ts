/**
 * GET /v1/admin_actions (issue 16): the service records each admin action through the API in the
 * action's own transaction; only admin keys read the log; an action that changes nothing or fails
 * records nothing.
 */
import { describe, expect, it } from 'vitest';
import { inProcessApp } from '../helpers/in-process.js';
import { mintKey } from '../helpers/sdk.js';

interface Entry { action: string; target_id: string; memory_store_id: string | null; actor: { type: string; api_key_id?: string }; summary: string }

describe('GET /v1/admin_actions', () => {
  it('lists keys created and revoked, versions redacted, stores archived and deleted, newest first', async () => {
    const app = await inProcessApp();
    const key = await mintKey(app, 'read_write', { body: { name: 'robot' } });
    await app.raw('POST', `/v1/api_keys/${key.id}/revoke`);
    await app.raw('POST', `/v1/api_keys/${key.id}/revoke`); // already revoked: no second entry
    const store = await app.client.beta.memoryStores.create({ name: 'notes' });
    const m = await app.client.beta.memoryStores.memories.create(store.id, { path: '/a.md', content: 'one' });
    const head = await app.client.beta.memoryStores.memories.update(m.id, { memory_store_id: store.id, content: 'two' });
    // The head of a live memory cannot be redacted: the refusal records nothing.
    expect((await app.raw('POST', `/v1/memory_stores/${store.id}/memory_versions/${head.memory_version_id}/redact`)).status).toBe(409);
    await app.raw('POST', `/v1/memory_stores/${store.id}/archive`);
    await app.raw('POST', `/v1/memory_stores/${store.id}/archive`);
    await app.raw('DELETE', `/v1/memory_stores/${store.id}`);
    const res = await app.raw('GET', '/v1/admin_actions?limit=3');
    expect(res.status).toBe(200);
    const page = res.body as { data: Entry[]; next_page: string | null };
    expect(page.data.map((e) => e.action)).toEqual(['memory_store.deleted', 'memory_store.archived', 'api_key.revoked']);
    expect(page.data[0]).toMatchObject({ target_id: store.id, memory_store_id: store.id, summary: 'notes', actor: { type: 'api_actor' } });
    const rest = (await app.raw('GET', `/v1/admin_actions?page=${page.next_page}`)).body as { data: Entry[]; next_page: string | null };
    expect(rest).toMatchObject({ next_page: null });
    expect(rest.data.map((e) => e.action)).toEqual(['api_key.created']);
    expect(rest.data[0]).toMatchObject({ target_id: key.id, summary: 'robot (read_write)' });
  });

  it('records a redaction with the version and its memory', async () => {
    const app = await inProcessApp();
    const store = await app.client.beta.memoryStores.create({ name: 'notes' });
    const m = await app.client.beta.memoryStores.memories.create(store.id, { path: '/a.md', content: 'secret' });
    await app.client.beta.memoryStores.memories.update(m.id, { memory_store_id: store.id, content: 'clean' });
    await app.client.beta.memoryStores.memoryVersions.redact(m.memory_version_id, { memory_store_id: store.id });
    await app.client.beta.memoryStores.memoryVersions.redact(m.memory_version_id, { memory_store_id: store.id });
    const { data } = (await app.raw('GET', '/v1/admin_actions')).body as { data: Entry[] };
    expect(data).toEqual([expect.objectContaining({ action: 'memory_version.redacted', target_id: m.memory_version_id, memory_store_id: store.id, summary: `created version of memory ${m.id}` })]);
  });

  it('is refused to keys that are not admin', async () => {
    const app = await inProcessApp();
    const minted = await mintKey(app, 'read_write', { body: { name: 'writer' } });
    const res = await app.raw('GET', '/v1/admin_actions', { apiKey: minted.secret });
    expect(res.status).toBe(403);
  });
});
