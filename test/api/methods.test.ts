/**
 * A known path with a method it does not take answers 405 with an `Allow` header read from the
 * app's route table, in the error envelope (invalid_request_error). Unknown paths stay 404. Under
 * /v1 and /mcp authentication comes first: without a valid key the answer is 401, whatever the method.
 */
import { describe, expect, it } from 'vitest';
import { methodsByPath, openApiPath, routeTable } from '../../api/route-table.js';
import { openApp } from '../helpers/app.js';
import { expectRawError, rawRequest, useServer } from '../helpers/sdk.js';
import type { RunningServer } from '../helpers/server.js';
import { freshStore } from './shapes.js';

let server: RunningServer;
let storeId: string;

useServer(async (s, c) => {
  server = s;
  storeId = (await freshStore(c, 'methods')).id;
});

const withKey = (method: string, path: string) => rawRequest(server.url, method, path, { apiKey: server.adminKey });

describe('405 Method Not Allowed', () => {
  it('PUT /v1/memory_stores is a 405 that lists GET, HEAD and POST', async () => {
    const res = await withKey('PUT', '/v1/memory_stores');
    expectRawError(res, 405, 'invalid_request_error');
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
    expect((res.body as { error: { message: string } }).error.message).toContain('PUT');
  });

  it('PATCH /v1/memory_stores/{id} is a 405 that lists DELETE, GET, HEAD and POST', async () => {
    const res = await withKey('PATCH', `/v1/memory_stores/${storeId}`);
    expectRawError(res, 405, 'invalid_request_error');
    expect(res.headers.get('allow')).toBe('DELETE, GET, HEAD, POST');
  });

  it('answers 405 for a path of an object that does not exist: the method is wrong before the id is looked up', async () => {
    const res = await withKey('PUT', '/v1/memory_stores/memstore_nope/memories/mem_nope');
    expectRawError(res, 405, 'invalid_request_error');
    expect(res.headers.get('allow')).toBe('DELETE, GET, HEAD, POST');
  });

  it('answers 405 on the unauthenticated routes without a key', async () => {
    const res = await rawRequest(server.url, 'POST', '/openapi.json');
    expectRawError(res, 405, 'invalid_request_error');
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect((await rawRequest(server.url, 'DELETE', '/docs')).headers.get('allow')).toBe('GET, HEAD');
  });

  it('answers 405 on /mcp for every method but POST, GET, HEAD and DELETE included (a stateless MCP server)', async () => {
    for (const method of ['GET', 'DELETE', 'PUT', 'PATCH']) {
      const res = await withKey(method, '/mcp');
      expectRawError(res, 405, 'invalid_request_error');
      expect(res.headers.get('allow'), method).toBe('POST');
    }
    const head = await fetch(`${server.url}/mcp`, { method: 'HEAD', headers: { 'x-api-key': server.adminKey, accept: 'text/event-stream' } });
    expect(head.status).toBe(405);
    expect(head.headers.get('allow')).toBe('POST');
    expect(await head.text()).toBe('');
  });

  it('authenticates first: a wrong method without a valid key is a 401, not a 405', async () => {
    for (const [method, path] of [
      ['PUT', '/v1/memory_stores'],
      ['PATCH', `/v1/memory_stores/${storeId}`],
      ['PUT', '/mcp'],
    ] as const) {
      const res = await rawRequest(server.url, method, path);
      expectRawError(res, 401, 'authentication_error');
      expect(res.headers.get('allow')).toBeNull();
      expectRawError(await rawRequest(server.url, method, path, { apiKey: 'wrong' }), 401, 'authentication_error');
    }
  });

  it('keeps unknown paths a 404, with any method', async () => {
    for (const [method, path] of [
      ['GET', '/v1/nope'],
      ['PUT', '/v1/nope'],
      ['GET', `/v1/memory_stores/${storeId}/memories/mem_x/extra`],
      ['GET', '/v1/memory_stores/'],
      ['GET', '/nope'],
    ] as const) {
      const res = await withKey(method, path);
      expectRawError(res, 404, 'not_found_error');
      expect(res.headers.get('allow')).toBeNull();
    }
  });

  it('derives Allow from the route table for every route the app registers', async () => {
    const { app, adminKey } = await openApp();
    // The web console authenticates by its cookie, not a key: its 405s are pinned in console-sessions.test.ts.
    const routes = routeTable(app).filter((r) => !r.path.startsWith('/admin'));
    const byPath = new Map<string, Set<string>>();
    for (const r of routes) byPath.set(r.path, (byPath.get(r.path) ?? new Set()).add(r.method));
    const allowOf = methodsByPath(routes);
    for (const [path, methods] of byPath) {
      const concrete = path.replace(/:[A-Za-z0-9_]+/g, 'x_1');
      const expected = [...methods, ...(methods.has('GET') ? ['HEAD'] : [])].sort();
      expect(allowOf(concrete), openApiPath(path)).toEqual(expected);
      const res = await app.request(concrete, { method: 'PUT', headers: { 'x-api-key': adminKey } });
      expect(res.status, `PUT ${path}`).toBe(405);
      expect(res.headers.get('allow'), `PUT ${path}`).toBe(expected.join(', '));
    }
  });
});
