/**
 * Authentication against the real server: x-api-key and Authorization: Bearer both work; a
 * missing or wrong key is 401 authentication_error on every route, and the SDK raises
 * AuthenticationError.
 */
import Anthropic, { AuthenticationError } from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../helpers/server.js';
import { expectApiError, expectRawError, rawRequest, sdkClient } from '../helpers/sdk.js';
import { freshStore, type Store } from './shapes.js';

let server: RunningServer;
let store: Store;

beforeAll(async () => {
  server = await startServer();
  store = await freshStore(sdkClient(server.url, server.adminKey), 'auth');
});
afterAll(async () => {
  await server?.stop();
});

/** Every route, as [method, path] with real ids so only authentication can fail. */
const routes = (): [string, string][] => [
  ['POST', '/v1/memory_stores'],
  ['GET', '/v1/memory_stores'],
  ['GET', `/v1/memory_stores/${store.id}`],
  ['POST', `/v1/memory_stores/${store.id}`],
  ['POST', `/v1/memory_stores/${store.id}/archive`],
  ['DELETE', `/v1/memory_stores/${store.id}`],
  ['POST', `/v1/memory_stores/${store.id}/memories`],
  ['GET', `/v1/memory_stores/${store.id}/memories`],
  ['GET', `/v1/memory_stores/${store.id}/memories/mem_x`],
  ['POST', `/v1/memory_stores/${store.id}/memories/mem_x`],
  ['DELETE', `/v1/memory_stores/${store.id}/memories/mem_x`],
  ['GET', `/v1/memory_stores/${store.id}/memory_versions`],
  ['GET', `/v1/memory_stores/${store.id}/memory_versions/memver_x`],
  ['POST', `/v1/memory_stores/${store.id}/memory_versions/memver_x/redact`],
  ['GET', '/v1/sessions'],
  ['POST', '/v1/sessions'],
];

describe('authentication', () => {
  it('accepts the key in x-api-key (the SDK default)', async () => {
    const client = sdkClient(server.url, server.adminKey);
    expect((await client.beta.memoryStores.retrieve(store.id)).id).toBe(store.id);
  });

  it('accepts the key as Authorization: Bearer, through the SDK and raw', async () => {
    const bearer = new Anthropic({ baseURL: server.url, apiKey: null, authToken: server.adminKey, maxRetries: 0 });
    expect((await bearer.beta.memoryStores.retrieve(store.id)).id).toBe(store.id);
    for (const header of [`Bearer ${server.adminKey}`, `bearer ${server.adminKey}`, `Bearer   ${server.adminKey}  `]) {
      const res = await rawRequest(server.url, 'GET', `/v1/memory_stores/${store.id}`, { headers: { authorization: header } });
      expect(res.status, header).toBe(200);
    }
  });

  it('answers 401 authentication_error without a key on every route', async () => {
    for (const [method, path] of routes()) {
      const res = await rawRequest(server.url, method, path, method === 'POST' ? { body: '{}' } : {});
      expect(res.status, `${method} ${path}`).toBe(401);
      expectRawError(res, 401, 'authentication_error');
    }
    // The store is untouched by all of that.
    expect((await sdkClient(server.url, server.adminKey).beta.memoryStores.retrieve(store.id)).archived_at).toBeNull();
  });

  it('answers 401 authentication_error with a wrong key on every route', async () => {
    for (const [method, path] of routes()) {
      const res = await rawRequest(server.url, method, path, { apiKey: 'mnemo-sk-wrong', ...(method === 'POST' ? { body: '{}' } : {}) });
      expectRawError(res, 401, 'authentication_error');
    }
  });

  it('raises the SDK AuthenticationError for a wrong key', async () => {
    const wrong = sdkClient(server.url, `${server.adminKey}x`);
    await expect(wrong.beta.memoryStores.list()).rejects.toBeInstanceOf(AuthenticationError);
    await expectApiError(wrong.beta.memoryStores.retrieve(store.id), 401, 'authentication_error');
    await expectApiError(wrong.beta.memoryStores.create({ name: 'x' }), 401, 'authentication_error');
    await expectApiError(wrong.beta.memoryStores.memories.list(store.id), 401, 'authentication_error');
    await expectApiError(wrong.beta.memoryStores.memoryVersions.list(store.id), 401, 'authentication_error');
  });

  it('refuses an empty key, a malformed Authorization header and a Bearer with a wrong token', async () => {
    const url = `/v1/memory_stores/${store.id}`;
    for (const headers of [
      { 'x-api-key': '' },
      { authorization: 'Bearer' },
      { authorization: 'Bearer ' },
      { authorization: `Basic ${Buffer.from(`u:${server.adminKey}`).toString('base64')}` },
      { authorization: server.adminKey },
      { authorization: 'Bearer wrong' },
    ] as Record<string, string>[]) {
      const res = await rawRequest(server.url, 'GET', url, { headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expectRawError(res, 401, 'authentication_error');
    }
  });

  it('checks authentication before reading the body or the ids', async () => {
    const malformed = await rawRequest(server.url, 'POST', '/v1/memory_stores', { body: '{nope' });
    expectRawError(malformed, 401, 'authentication_error');
    const unknown = await rawRequest(server.url, 'GET', '/v1/memory_stores/memstore_unknown');
    expectRawError(unknown, 401, 'authentication_error');
  });

  it('serves /health without a key', async () => {
    const res = await rawRequest(server.url, 'GET', '/health');
    expect(res).toMatchObject({ status: 200, body: { status: 'ok' } });
  });
});
