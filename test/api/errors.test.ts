/**
 * Bad input never yields a 500: malformed and oversized bodies, wrong types, unknown fields,
 * invalid UTF-8, lone surrogates, bad percent-encoding, bad query values, garbage cursors and
 * unknown ids of every kind. Also pins the error envelope and the request-id header.
 */
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { makeTempDir, startServer, type RunningServer } from '../helpers/server.js';
import { type ErrorEnvelope, expectApiError, expectRawError, mintKey, type RawOptions, rawRequest, type RawResponse, sdkClient, useServer } from '../helpers/sdk.js';
import { freshStore, type Memory, type Store } from './shapes.js';

let server: RunningServer;
let client: Anthropic;
let store: Store;
let memory: Memory;

useServer(async (s, c) => {
  server = s;
  client = c;
  store = await freshStore(client, 'errors');
  memory = await client.beta.memoryStores.memories.create(store.id, { path: '/existing.md', content: 'x' });
  await client.beta.memoryStores.memories.update(memory.id, { memory_store_id: store.id, content: 'y' });
});

const raw = (method: string, path: string, opts: RawOptions = {}): Promise<RawResponse> =>
  rawRequest(server.url, method, path, { apiKey: server.adminKey, ...opts });
const memoriesPath = () => `/v1/memory_stores/${store.id}/memories`;
const utf8 = (s: string) => new TextEncoder().encode(s);

/** The routes that take a JSON body, as [name, method, path]. */
const bodyRoutes = (): [string, string, string][] => [
  ['store create', 'POST', '/v1/memory_stores'],
  ['store update', 'POST', `/v1/memory_stores/${store.id}`],
  ['memory create', 'POST', memoriesPath()],
  ['memory update', 'POST', `${memoriesPath()}/${memory.id}`],
];

describe('the error envelope', () => {
  it('sends a request-id header on successful responses', async () => {
    const { data, response } = await client.beta.memoryStores.retrieve(store.id).withResponse();
    expect(data.id).toBe(store.id);
    expect(response.headers.get('request-id')).toMatch(/^req_\w+$/);
    const list = await client.beta.memoryStores.memories.list(store.id).withResponse();
    expect(list.response.headers.get('request-id')).toMatch(/^req_\w+$/);
    const health = await rawRequest(server.url, 'GET', '/health');
    expect(health.status).toBe(200);
    expect(health.headers.get('request-id')).toMatch(/^req_\w+$/);
  });

  it('gives every request its own id', async () => {
    const a = await raw('GET', `/v1/memory_stores/${store.id}`);
    const b = await raw('GET', `/v1/memory_stores/${store.id}`);
    expect(a.headers.get('request-id')).not.toBe(b.headers.get('request-id'));
  });

  it('renders errors as {type:"error", error:{type, message}, request_id} and nothing else', async () => {
    const res = await raw('GET', '/v1/memory_stores/memstore_nope');
    expectRawError(res, 404, 'not_found_error');
    expect(Object.keys(res.body as object).sort()).toEqual(['error', 'request_id', 'type']);
    expect(Object.keys((res.body as { error: object }).error).sort()).toEqual(['message', 'type']);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });
});

describe('malformed bodies', () => {
  it.each([
    ['malformed JSON', '{"name": '],
    ['trailing garbage', '{"name": "a"} x'],
    ['a JSON array', '[{"name": "a"}]'],
    ['a JSON string', '"name"'],
    ['a JSON number', '42'],
    ['JSON null', 'null'],
    ['single quotes', "{'name': 'a'}"],
  ])('refuses %s with 400 on every body route', async (_, body) => {
    for (const [name, method, path] of bodyRoutes()) {
      const res = await raw(method, path, { body });
      expect(res.status, name).toBe(400);
      expectRawError(res, 400, 'invalid_request_error');
    }
  });

  it('refuses deeply nested JSON without a 500', async () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    const res = await raw('POST', '/v1/memory_stores', { body: deep });
    expectRawError(res, 400, 'invalid_request_error');
  });

  it('refuses a body over the size limit with 413 request_too_large (Content-Length and chunked)', async () => {
    const huge = JSON.stringify({ path: '/big.md', content: 'a'.repeat(2 * 1024 * 1024) });
    const res = await raw('POST', memoriesPath(), { body: huge });
    expectRawError(res, 413, 'request_too_large');

    const chunk = utf8('a'.repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(utf8('{"path":"/big2.md","content":"'));
        if (sent >= 40) {
          controller.enqueue(utf8('"}'));
          controller.close();
          return;
        }
        controller.enqueue(chunk);
        sent++;
      },
    });
    const chunked = await raw('POST', memoriesPath(), { body: stream });
    expectRawError(chunked, 413, 'request_too_large');
    expect((await client.beta.memoryStores.memories.list(store.id)).data.map((m) => m.path)).toEqual(['/existing.md']);
  });

  it('accepts a chunked body within the limit and a Content-Length body alike', async () => {
    const parts = ['{"path":"/streamed.md",', '"content":"sent in ', 'three chunks"}'];
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = parts.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(utf8(next));
      },
    });
    const chunked = await raw('POST', memoriesPath(), { body: stream });
    expect(chunked.status, JSON.stringify(chunked.body)).toBe(200);
    const plain = await raw('POST', memoriesPath(), { body: JSON.stringify({ path: '/plain.md', content: 'sent whole' }) });
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);
    const listed = await client.beta.memoryStores.memories.list(store.id, { view: 'full' } as never);
    const byPath = new Map(listed.data.map((m) => [m.path, (m as { content?: string }).content]));
    expect([byPath.get('/streamed.md'), byPath.get('/plain.md')]).toEqual(['sent in three chunks', 'sent whole']);
  });

  it('reads an oversized body through, so the 413 arrives and the next request on the same client succeeds', async () => {
    const huge = JSON.stringify({ name: 'n'.repeat(2 * 1024 * 1024) });
    for (let i = 0; i < 6; i++) {
      const res = await raw('POST', '/v1/memory_stores', { body: huge });
      expectRawError(res, 413, 'request_too_large');
      expect(res.headers.get('connection')).not.toBe('close'); // read through: the connection stays usable
      expect((await client.beta.memoryStores.retrieve(store.id)).id).toBe(store.id);
    }
  });

  /** Sends `request` as raw bytes on a new connection and returns everything the server answers before it closes. */
  function rawExchange(request: string): Promise<string> {
    const { hostname, port } = new URL(server.url);
    return new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write(request));
      let got = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => (got += d));
      socket.on('end', () => resolve(got));
      socket.on('error', reject);
      socket.setTimeout(10_000, () => reject(new Error(`no response: ${got}`)));
    });
  }

  it('answers a declared body far over the limit with 413 and Connection: close, without reading it', async () => {
    const { hostname } = new URL(server.url);
    const head = await rawExchange(
      `POST /v1/memory_stores HTTP/1.1\r\nHost: ${hostname}\r\nx-api-key: ${server.adminKey}\r\n` +
        'content-type: application/json\r\ncontent-length: 900000000\r\n\r\n{"name":',
    );
    expect(head).toMatch(/^HTTP\/1\.1 413 /);
    expect(head).toMatch(/\r\nconnection: close\r\n/i);
    expect(head).toMatch(/"type":"request_too_large"/);
  });

  it('answers a request line or headers past 16 KiB (refused by Node before any handler) with 431 and the error envelope', async () => {
    const { hostname } = new URL(server.url);
    for (const request of [
      `GET /v1/memory_stores/${'x'.repeat(20_000)} HTTP/1.1\r\nHost: ${hostname}\r\nx-api-key: ${server.adminKey}\r\n\r\n`,
      `GET /v1/memory_stores HTTP/1.1\r\nHost: ${hostname}\r\nx-api-key: ${server.adminKey}\r\nx-big: ${'y'.repeat(20_000)}\r\n\r\n`,
    ]) {
      const answer = await rawExchange(request);
      expect(answer).toMatch(/^HTTP\/1\.1 431 /);
      expect(answer).toMatch(/\r\nconnection: close\r\n/i);
      expect(answer).toMatch(/\r\nrequest-id: req_\w+\r\n/i);
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { type: string; error: { type: string; message: string }; request_id: string };
      expect(body).toMatchObject({ type: 'error', error: { type: 'request_too_large' } });
      expect(body.error.message).toMatch(/16 KiB/);
    }
  });

  it('answers a malformed HTTP request with 400 and the error envelope', async () => {
    const answer = await rawExchange('GARBAGE\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/"type":"invalid_request_error"/);
    expect(answer).toMatch(/"request_id":"req_\w+"/);
  });

  it('answers a request pipelined ahead of a malformed one first, then refuses the malformed one and closes', async () => {
    const { hostname } = new URL(server.url);
    const body = JSON.stringify({ path: '/pipelined.md', content: 'kept' });
    const answer = await rawExchange(
      `POST ${memoriesPath()} HTTP/1.1\r\nHost: ${hostname}\r\nx-api-key: ${server.adminKey}\r\ncontent-type: application/json\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}GARBAGE / HTTP/1.1\r\n\r\n`,
    );
    // The create's answer was lost: the refusal went out ahead of it and the connection closed.
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    const refusal = answer.indexOf('HTTP/1.1 400 ');
    expect(refusal, answer).toBeGreaterThan(0);
    expect(answer.slice(0, refusal)).toContain('"path":"/pipelined.md"');
    expect(answer.slice(refusal)).toMatch(/\r\nconnection: close\r\n/i);
    expect(answer.slice(refusal)).toContain('malformed HTTP request (HPE_INVALID_METHOD)');
  });

  it('answers a request target that is not a path (OPTIONS *, an absolute URL) with 400 and the error envelope', async () => {
    const { hostname } = new URL(server.url);
    for (const target of ['*', `http://${hostname}/v1/memory_stores`]) {
      const answer = await rawExchange(`OPTIONS ${target} HTTP/1.1\r\nHost: ${hostname}\r\nconnection: close\r\n\r\n`);
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toMatch(/\r\nrequest-id: req_\w+\r\n/i);
      expect(answer).toMatch(/"type":"invalid_request_error"/);
      expect(answer).toMatch(/the request target must be a path/);
    }
  });

  /** Sends a head with Expect: 100-continue and resolves with the server's first answer (up to its blank line); `body` is sent once that is 100 Continue, and then the final answer is added. */
  function expectContinue(head: string, body: string): Promise<string> {
    const { hostname, port } = new URL(server.url);
    return new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write(head));
      let got = '';
      let sent = false;
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => {
        got += d;
        if (!sent && got.startsWith('HTTP/1.1 100 ') && got.includes('\r\n\r\n')) {
          sent = true;
          socket.write(body);
        } else if (!got.startsWith('HTTP/1.1 100 ') || (sent && /\r\n\r\n[^]*\r\n\r\n/.test(got))) {
          socket.destroy();
          resolve(got);
        }
      });
      socket.on('error', reject);
      socket.setTimeout(5_000, () => reject(new Error(`no answer: ${got}`)));
    });
  }

  it('answers Expect: 100-continue only once the key is known and the declared body is within the limit', async () => {
    const { hostname } = new URL(server.url);
    const body = '{"name":"expect"}';
    const head = (key: string, length = body.length) =>
      `POST /v1/memory_stores HTTP/1.1\r\nHost: ${hostname}\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\n` +
      `content-length: ${length}\r\nexpect: 100-continue\r\n\r\n`;
    expect(await expectContinue(head('mnemo-sk-not-a-key'), body)).toMatch(/^HTTP\/1\.1 401 /);
    expect(await expectContinue(head(server.adminKey, 5_000_000), body)).toMatch(/^HTTP\/1\.1 413 /);
    const ok = await expectContinue(head(server.adminKey), body);
    expect(ok).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
  });

  it('names a huge unknown id in its 404 by its first 100 characters, not all of it', async () => {
    const res = await raw('GET', `/v1/memory_stores/${'z'.repeat(8000)}`);
    expectRawError(res, 404, 'not_found_error');
    const message = (res.body as { error: { message: string } }).error.message;
    expect(message).toBe(`memory store not found: ${'z'.repeat(100)}… (8000 characters)`);
  });

  it('refuses invalid UTF-8 bytes in a body, including inside a path string', async () => {
    const bad = (prefix: string, suffix: string) => new Uint8Array([...utf8(prefix), 0xff, 0xfe, ...utf8(suffix)]);
    expectRawError(await raw('POST', memoriesPath(), { body: bad('{"path":"/a', '.md","content":"x"}') }), 400, 'invalid_request_error');
    expectRawError(await raw('POST', memoriesPath(), { body: bad('{"path":"/ok.md","content":"', '"}') }), 400, 'invalid_request_error');
    const overlong = new Uint8Array([...utf8('{"name":"'), 0xc0, 0xaf, ...utf8('"}')]);
    expectRawError(await raw('POST', '/v1/memory_stores', { body: overlong }), 400, 'invalid_request_error');
    const surrogateBytes = new Uint8Array([...utf8('{"name":"'), 0xed, 0xa0, 0x80, ...utf8('"}')]);
    expectRawError(await raw('POST', '/v1/memory_stores', { body: surrogateBytes }), 400, 'invalid_request_error');
  });

  it.each([
    ['a memory path', memoriesPath, '{"path":"/a\\ud800.md","content":"x"}'],
    ['memory content', memoriesPath, '{"path":"/lone.md","content":"x\\udc00y"}'],
    ['a store name', () => '/v1/memory_stores', '{"name":"a\\ud800"}'],
    ['a store description', () => '/v1/memory_stores', '{"name":"a","description":"\\udfff"}'],
    ['a metadata key', () => '/v1/memory_stores', '{"name":"a","metadata":{"\\ud800":"v"}}'],
    ['a metadata value', () => '/v1/memory_stores', '{"name":"a","metadata":{"k":"\\ud800"}}'],
  ])('refuses a lone surrogate escape in %s with 400', async (_, path, body) => {
    expectRawError(await raw('POST', path(), { body }), 400, 'invalid_request_error');
  });

  it('refuses a lone surrogate in a rename with 400', async () => {
    const res = await raw('POST', `${memoriesPath()}/${memory.id}`, { body: '{"path":"/x\\ud800"}' });
    expectRawError(res, 400, 'invalid_request_error');
  });

  it('accepts a properly paired surrogate escape', async () => {
    const res = await raw('POST', memoriesPath(), { body: '{"path":"/emoji-\\ud83d\\ude00.md","content":"\\ud83d\\ude00"}' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ path: '/emoji-😀.md', content_size_bytes: 4 });
    await client.beta.memoryStores.memories.delete((res.body as Memory).id, { memory_store_id: store.id });
  });

  it('refuses a body in a content-coding other than identity with 415 naming Content-Encoding, and stores nothing', async () => {
    const gz = gzipSync(JSON.stringify({ path: '/gz.md', content: 'hello' }));
    const br = JSON.stringify({ path: '/br.md', content: 'hello' });
    for (const [coding, body] of [['gzip', gz], ['br', br], ['identity, gzip', gz]] as const) {
      const res = await raw('POST', memoriesPath(), { headers: { 'content-encoding': coding }, body });
      expectRawError(res, 415, 'invalid_request_error');
      expect((res.body as ErrorEnvelope).error.message).toBe(
        `Content-Encoding: ${coding} is not supported; send the request body uncompressed (no Content-Encoding, or identity)`,
      );
      expect(res.headers.get('accept-encoding')).toBe('identity');
    }
    const paths = (await client.beta.memoryStores.memories.list(store.id)).data.map((m) => m.path);
    expect(paths).not.toContain('/gz.md');
    expect(paths).not.toContain('/br.md');
    const plain = await raw('POST', memoriesPath(), { headers: { 'content-encoding': 'identity' }, body: JSON.stringify({ path: '/identity-coded.md', content: 'hello' }) });
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);
    await client.beta.memoryStores.memories.delete((plain.body as Memory).id, { memory_store_id: store.id });
  });

  it('treats an empty body as {} and reports the missing field', async () => {
    const res = await raw('POST', '/v1/memory_stores', { body: '' });
    expectRawError(res, 400, 'invalid_request_error');
    expect((res.body as { error: { message: string } }).error.message).toMatch(/name/);
  });
});

describe('wrong types and unknown fields', () => {
  it.each([
    ['a number for name', '/v1/memory_stores', { name: 42 }],
    ['null for name', '/v1/memory_stores', { name: null }],
    ['an array for name', '/v1/memory_stores', { name: ['a'] }],
    ['a missing name', '/v1/memory_stores', { description: 'd' }],
    ['a number for description', '/v1/memory_stores', { name: 'a', description: 5 }],
    ['an array for metadata', '/v1/memory_stores', { name: 'a', metadata: ['a'] }],
    ['a string for metadata', '/v1/memory_stores', { name: 'a', metadata: 'k=v' }],
    ['a number as a metadata value', '/v1/memory_stores', { name: 'a', metadata: { k: 1 } }],
    ['null as a metadata value on create', '/v1/memory_stores', { name: 'a', metadata: { k: null } }],
    ['an unknown store field', '/v1/memory_stores', { name: 'a', owner: 'me' }],
  ])('refuses %s on store create with 400', async (_, path, body) => {
    expectRawError(await raw('POST', path, { body: JSON.stringify(body) }), 400, 'invalid_request_error');
  });

  it.each([
    ['a number for path', { path: 7, content: 'x' }],
    ['null for path', { path: null, content: 'x' }],
    ['a missing path', { content: 'x' }],
    ['a missing content', { path: '/m.md' }],
    ['a number for content', { path: '/m.md', content: 1 }],
    ['an object for content', { path: '/m.md', content: { text: 'x' } }],
    ['an unknown memory field', { path: '/m.md', content: 'x', metadata: {} }],
    ['a precondition on create', { path: '/m.md', content: 'x', precondition: { type: 'content_sha256' } }],
  ])('refuses %s on memory create with 400', async (_, body) => {
    expectRawError(await raw('POST', memoriesPath(), { body: JSON.stringify(body) }), 400, 'invalid_request_error');
  });

  it.each([
    ['a number for path', { path: 1 }],
    ['a boolean for content', { content: true }],
    ['an unknown field', { content: 'z', mode: 420 }],
    ['an unknown precondition type', { content: 'z', precondition: { type: 'etag', content_sha256: 'a'.repeat(64) } }],
    ['an unknown precondition field', { content: 'z', precondition: { type: 'content_sha256', content_sha256: 'a'.repeat(64), x: 1 } }],
    ['a string precondition', { content: 'z', precondition: 'a'.repeat(64) }],
  ])('refuses %s on memory update with 400', async (_, body) => {
    expectRawError(await raw('POST', `${memoriesPath()}/${memory.id}`, { body: JSON.stringify(body) }), 400, 'invalid_request_error');
  });

  it.each([
    ['an unknown field', { name: 'n', archived: true }],
    ['a number for name', { name: 5 }],
    ['a number as a metadata value', { metadata: { k: 5 } }],
  ])('refuses %s on store update with 400', async (_, body) => {
    expectRawError(await raw('POST', `/v1/memory_stores/${store.id}`, { body: JSON.stringify(body) }), 400, 'invalid_request_error');
  });

  it.each<[string, () => string, unknown, string]>([
    ['a number for content', memoriesPath, { path: '/t.md', content: 123 }, 'content: must be a string (got 123)'],
    ['a string for ttl_seconds', memoriesPath, { path: '/t.md', content: 'x', ttl_seconds: '10' }, 'ttl_seconds: must be a number (got a string)'],
    ['null for path', memoriesPath, { path: null, content: 'x' }, 'path: must be a string (got null)'],
    ['no content', memoriesPath, { path: '/t.md' }, 'content: is required'],
    ['a number for name', () => '/v1/memory_stores', { name: 123 }, 'name: must be a string (got 123)'],
    ['a fraction for retention.keep_last', () => '/v1/memory_stores', { name: 'a', retention: { keep_last: 1.5 } }, 'retention.keep_last: must be an integer (got 1.5)'],
    ['no name', () => '/v1/memory_stores', { description: 'd' }, 'name: is required'],
  ])('a body with %s is a 400 saying what the field must be, or that it is required', async (_, path, body, message) => {
    const res = await raw('POST', path(), { body: JSON.stringify(body) });
    expectRawError(res, 400, 'invalid_request_error');
    expect((res.body as ErrorEnvelope).error.message).toBe(message);
  });

  it('refuses an unknown field through the SDK too', async () => {
    const params = { name: 'x', unexpected: 1 } as unknown as { name: string };
    await expectApiError(client.beta.memoryStores.create(params), 400, 'invalid_request_error');
  });

  it('stores metadata keys that name Object.prototype members as ordinary keys', async () => {
    // Built with JSON.parse: an object literal's __proto__ would set the prototype instead.
    const metadata = JSON.parse('{"constructor":"c","toString":"t","__proto__":"p"}') as Record<string, string>;
    const res = await raw('POST', '/v1/memory_stores', { body: JSON.stringify({ name: 'proto', metadata }) });
    expect(res.status).toBe(200);
    const created = res.body as Store;
    expect(Object.entries(created.metadata)).toEqual(Object.entries(metadata));
    expect(Object.entries((await client.beta.memoryStores.retrieve(created.id)).metadata)).toEqual(Object.entries(metadata));

    const patched = await raw('POST', `/v1/memory_stores/${created.id}`, { body: '{"metadata":{"__proto__":"q","constructor":null}}' });
    expect(patched.status).toBe(200);
    expect(Object.entries((patched.body as Store).metadata)).toEqual([['toString', 't'], ['__proto__', 'q']]);
    const removed = await raw('POST', `/v1/memory_stores/${created.id}`, { body: '{"metadata":{"__proto__":null}}' });
    expect(Object.entries((removed.body as Store).metadata)).toEqual([['toString', 't']]);
  });
});

describe('bad query strings', () => {
  it.each([
    ['path_prefix=%FF/', 'path_prefix=%FF/'],
    ['a truncated escape', 'path_prefix=/a%E2%82/'],
    ['a non-hex escape', 'path_prefix=/%zz/'],
    ['a lone percent', 'limit=%'],
    ['an encoded lone surrogate', 'path_prefix=/%ED%A0%80/'],
  ])('refuses invalid percent-encoding (%s) with 400', async (_, qs) => {
    expectRawError(await raw('GET', `${memoriesPath()}?${qs}`), 400, 'invalid_request_error');
  });

  it('accepts a correctly percent-encoded UTF-8 path_prefix', async () => {
    const res = await raw('GET', `${memoriesPath()}?path_prefix=${encodeURIComponent('/日本/')}`);
    expect(res.status).toBe(200);
  });

  it.each([
    ['limit=abc', 'memories'],
    ['limit=1.5', 'memories'],
    ['limit=', 'memories'],
    ['limit=1e2', 'stores'],
    ['limit=-5', 'versions'],
    ['limit=99999999999', 'versions'],
    ['view=everything', 'memories'],
    ['view=', 'versions'],
    ['depth=abc', 'memories'],
    ['depth=', 'memories'],
    ['depth=1.0', 'memories'],
    ['include_archived=yes', 'stores'],
    ['created_at[gte]=1700000000', 'stores'],
    ['created_at[lte]=2026-02-30T00:00:00Z', 'versions'],
    ['operation=renamed', 'versions'],
  ])('refuses %s on %s lists with 400', async (qs, kind) => {
    const path = kind === 'stores' ? '/v1/memory_stores' : kind === 'memories' ? memoriesPath() : `/v1/memory_stores/${store.id}/memory_versions`;
    expectRawError(await raw('GET', `${path}?${qs}`), 400, 'invalid_request_error');
  });

  it('refuses a bad view on retrieve, create and update', async () => {
    expectRawError(await raw('GET', `${memoriesPath()}/${memory.id}?view=raw`), 400, 'invalid_request_error');
    expectRawError(await raw('GET', `/v1/memory_stores/${store.id}/memory_versions/${memory.memory_version_id}?view=raw`), 400, 'invalid_request_error');
    expectRawError(await raw('POST', `${memoriesPath()}?view=raw`, { body: '{"path":"/v.md","content":""}' }), 400, 'invalid_request_error');
  });

  it('refuses a malformed expected_content_sha256 on delete', async () => {
    for (const sha of ['', 'xyz', 'A'.repeat(64)]) {
      expectRawError(await raw('DELETE', `${memoriesPath()}/${memory.id}?expected_content_sha256=${sha}`), 400, 'invalid_request_error');
    }
    expect((await client.beta.memoryStores.memories.retrieve(memory.id, { memory_store_id: store.id })).content).toBe('y');
  });
});

describe('page cursors', () => {
  const b64 = (v: unknown) => 'page_' + Buffer.from(JSON.stringify(v)).toString('base64url');
  const garbage = [
    'garbage',
    'page_',
    'page_!!!!',
    'page_' + Buffer.from('not json').toString('base64url'),
    b64([1, 2]),
    b64('string'),
    b64(null),
    b64({ s: 'x' }),
    b64({ s: 1.5 }),
    b64({ k: 5 }),
    b64({ k: '/a', x: 'y' }),
    b64({}),
  ];

  it.each(garbage.map((g) => [g]))('refuses page=%s with 400 on every list', async (page) => {
    const lists = [
      () => client.beta.memoryStores.list({ page }),
      () => client.beta.memoryStores.memories.list(store.id, { page }),
      () => client.beta.memoryStores.memories.list(store.id, { page, depth: 1 }),
      () => client.beta.memoryStores.memoryVersions.list(store.id, { page }),
    ];
    let refused = 0;
    for (const list of lists) {
      const res = await list().then(
        () => 'ok',
        (e: unknown) => e,
      );
      if (res === 'ok') continue; // a shape one list happens to understand is fine, as long as it is not a 500
      await expectApiError(Promise.reject(res), 400, 'invalid_request_error');
      refused++;
    }
    expect(refused).toBeGreaterThanOrEqual(garbage.slice(0, 8).includes(page) ? 4 : 1);
  });

  it('refuses a cursor issued for another store or other filters with 400, and resumes its own list', async () => {
    const ms = client.beta.memoryStores;
    const a = await freshStore(client, 'cursor A');
    const b = await freshStore(client, 'cursor B');
    for (const p of ['/a1', '/a2', '/a3']) await ms.memories.create(a.id, { path: p, content: `note ${p}` });
    for (const p of ['/a0', '/b1', '/b2']) await ms.memories.create(b.id, { path: p, content: `note ${p}` });
    const another = async (call: Promise<unknown>) =>
      expect((await expectApiError(call, 400, 'invalid_request_error')).message).toBe(
        'page: a cursor of another list (another store or other filters); start this list without page',
      );
    const page = (await ms.memories.list(a.id, { limit: 2 })).next_page!;
    await another(ms.memories.list(b.id, { page }));
    await another(ms.memories.list(a.id, { page, path_prefix: '/a1/' }));
    await another(ms.memories.list(a.id, { page, depth: 1 }));
    expect((await ms.memories.list(a.id, { page })).data.map((m) => (m as { path: string }).path)).toEqual(['/a3']);
    const versions = (await ms.memoryVersions.list(a.id, { limit: 1 })).next_page!;
    await another(ms.memoryVersions.list(b.id, { page: versions }));
    await another(ms.memoryVersions.list(a.id, { page: versions, operation: 'created' }));
    expect((await ms.memoryVersions.list(a.id, { page: versions })).data).toHaveLength(2);
    const stores = (await ms.list({ limit: 1 })).next_page!;
    await another(ms.list({ page: stores, include_archived: true }));
    const search = (q: string, store: string, page?: string) =>
      raw('GET', `/v1/memory_stores/${store}/search?q=${q}&limit=1${page ? `&page=${page}` : ''}`);
    const hits = (await search('note', a.id)).body as { next_page: string };
    for (const res of [await search('note', b.id, hits.next_page), await search('a1', a.id, hits.next_page)]) {
      expectRawError(res, 400, 'invalid_request_error');
      expect((res.body as ErrorEnvelope).error.message).toContain('a cursor of another list');
    }
    expect((await search('note', a.id, hits.next_page)).status).toBe(200);
  });

  const notIssued = async (call: Promise<unknown>) =>
    expect((await expectApiError(call, 400, 'invalid_request_error')).message).toBe('page: not a cursor this server issued');

  it('a cursor shows nothing of the place it resumes at: decoded, it holds no JSON, row number or path', async () => {
    const ms = client.beta.memoryStores;
    const s = await freshStore(client, 'opaque cursors');
    for (const p of ['/opaque-one.md', '/opaque-two.md']) await ms.memories.create(s.id, { path: p, content: 'x' });
    const cursors = [(await ms.list({ limit: 1 })).next_page!, (await ms.memories.list(s.id, { limit: 1 })).next_page!, (await ms.memoryVersions.list(s.id, { limit: 1 })).next_page!];
    for (const cursor of cursors) {
      expect(cursor).toMatch(/^page_[A-Za-z0-9_-]+$/);
      const plain = Buffer.from(cursor.slice(5), 'base64url').toString('latin1');
      for (const shown of ['"s":', '"k":', '"i":', '"t":', 'opaque']) expect(plain).not.toContain(shown);
    }
  });

  it('a cursor with any one byte flipped, or cut short, is refused with 400 naming page', async () => {
    const ms = client.beta.memoryStores;
    for (const name of ['flip 1', 'flip 2']) await freshStore(client, name);
    const cursor = (await ms.list({ limit: 1 })).next_page!;
    // Whatever follows a dot (a list's tag, in cursors before sealing) is kept as it is.
    const [body, ...rest] = cursor.slice(5).split('.');
    const tail = rest.map((r) => `.${r}`).join('');
    const bytes = Buffer.from(body!, 'base64url');
    for (let i = 0; i < bytes.length; i++) {
      const flipped = Buffer.from(bytes);
      flipped[i] = flipped[i]! ^ 1;
      await notIssued(ms.list({ limit: 1, page: 'page_' + flipped.toString('base64url') + tail }));
    }
    await notIssued(ms.list({ limit: 1, page: 'page_' + bytes.subarray(0, bytes.length - 1).toString('base64url') + tail }));
    await notIssued(ms.list({ limit: 1, page: cursor.slice(0, -2) }));
    expect((await ms.list({ limit: 1, page: cursor })).data).toHaveLength(1);
  });

  it("a cursor of another database's server is refused with 400 naming page", async () => {
    const other = await startServer({ dataDir: makeTempDir() });
    try {
      const ms = sdkClient(other.url, other.adminKey).beta.memoryStores;
      for (const name of ['x', 'y']) await ms.create({ name });
      const foreign = (await ms.list({ limit: 1 })).next_page!;
      await notIssued(client.beta.memoryStores.list({ limit: 1, page: foreign }));
    } finally {
      await other.stop();
    }
  });
});

describe('unknown ids', () => {
  const stores = () => client.beta.memoryStores;
  it('answers 404 not_found_error for an unknown store on every store route', async () => {
    const id = 'memstore_doesnotexist';
    await expectApiError(stores().retrieve(id), 404, 'not_found_error');
    await expectApiError(stores().update(id, { name: 'x' }), 404, 'not_found_error');
    await expectApiError(stores().archive(id), 404, 'not_found_error');
    await expectApiError(stores().delete(id), 404, 'not_found_error');
    await expectApiError(stores().memories.create(id, { path: '/a', content: 'x' }), 404, 'not_found_error');
    await expectApiError(stores().memories.list(id), 404, 'not_found_error');
    await expectApiError(stores().memories.retrieve(memory.id, { memory_store_id: id }), 404, 'not_found_error');
    await expectApiError(stores().memories.update(memory.id, { memory_store_id: id, content: 'x' }), 404, 'not_found_error');
    await expectApiError(stores().memories.delete(memory.id, { memory_store_id: id }), 404, 'not_found_error');
    await expectApiError(stores().memoryVersions.list(id), 404, 'not_found_error');
    await expectApiError(stores().memoryVersions.retrieve(memory.memory_version_id, { memory_store_id: id }), 404, 'not_found_error');
    await expectApiError(stores().memoryVersions.redact(memory.memory_version_id, { memory_store_id: id }), 404, 'not_found_error');
  });

  it('answers 404 for an unknown memory and an unknown version', async () => {
    const mem = 'mem_doesnotexist';
    await expectApiError(stores().memories.retrieve(mem, { memory_store_id: store.id }), 404, 'not_found_error');
    await expectApiError(stores().memories.update(mem, { memory_store_id: store.id, content: 'x' }), 404, 'not_found_error');
    await expectApiError(stores().memories.delete(mem, { memory_store_id: store.id }), 404, 'not_found_error');
    await expectApiError(stores().memoryVersions.retrieve('memver_doesnotexist', { memory_store_id: store.id }), 404, 'not_found_error');
    await expectApiError(stores().memoryVersions.redact('memver_doesnotexist', { memory_store_id: store.id }), 404, 'not_found_error');
  });

  it('answers 404 when an id of one kind is used as another', async () => {
    await expectApiError(stores().retrieve(memory.id), 404, 'not_found_error');
    await expectApiError(stores().memories.retrieve(store.id, { memory_store_id: store.id }), 404, 'not_found_error');
    await expectApiError(stores().memories.retrieve(memory.memory_version_id, { memory_store_id: store.id }), 404, 'not_found_error');
    await expectApiError(stores().memoryVersions.retrieve(memory.id, { memory_store_id: store.id }), 404, 'not_found_error');
  });

  it('answers 404 for an unknown session', async () => {
    expectRawError(await raw('GET', '/v1/sessions/sesn_doesnotexist'), 404, 'not_found_error');
    expectRawError(await raw('DELETE', '/v1/sessions/sesn_doesnotexist'), 404, 'not_found_error');
  });

  it.each([
    ['a very long id', 'memstore_' + 'x'.repeat(5000)],
    ['an id with unicode', encodeURIComponent('memstore_日本')],
    ['an id with a bad escape', 'memstore_%FF'],
    ['an id with an encoded slash', 'memstore_a%2Fb'],
    ['an id with a NUL', 'memstore_%00'],
  ])('answers 404 (not 500) for %s', async (_, id) => {
    expectRawError(await raw('GET', `/v1/memory_stores/${id}`), 404, 'not_found_error');
    expectRawError(await raw('GET', `/v1/memory_stores/${store.id}/memories/${id}`), 404, 'not_found_error');
    expectRawError(await raw('GET', `/v1/memory_stores/${store.id}/memory_versions/${id}`), 404, 'not_found_error');
    // Writes too: on PostgreSQL a write's probe found no row at all for a NUL (its text cannot hold one) and crashed.
    expectRawError(await raw('DELETE', `/v1/memory_stores/${store.id}/memories/${id}`), 404, 'not_found_error');
    expectRawError(await raw('DELETE', `/v1/memory_stores/${id}/memories/${memory.id}`), 404, 'not_found_error');
    expectRawError(await raw('POST', `/v1/memory_stores/${store.id}/memories/${id}`, { body: '{"content":"x"}' }), 404, 'not_found_error');
    expectRawError(await raw('POST', `/v1/memory_stores/${id}/memories`, { body: '{"path":"/nul.md","content":"x"}' }), 404, 'not_found_error');
    expectRawError(await raw('POST', `/v1/memory_stores/${store.id}/memory_versions/${id}/redact`, { body: '{}' }), 404, 'not_found_error');
    expectRawError(await raw('POST', `/v1/memory_stores/${id}/archive`, { body: '{}' }), 404, 'not_found_error');
    expectRawError(await raw('DELETE', `/v1/memory_stores/${id}`), 404, 'not_found_error');
  });

  it('answers 404 for unknown routes and 405 for a known route with a wrong method', async () => {
    expectRawError(await raw('GET', '/v1/nothing'), 404, 'not_found_error');
    expectRawError(await raw('PUT', `/v1/memory_stores/${store.id}`, { body: '{}' }), 405, 'invalid_request_error');
    expectRawError(await raw('PATCH', `${memoriesPath()}/${memory.id}`, { body: '{}' }), 405, 'invalid_request_error');
    expectRawError(await raw('GET', '/nothing'), 404, 'not_found_error');
  });
});

describe('routes that take no body', () => {
  /** Each route that takes none, with a fresh target it would act on. */
  const ROUTES: [string, string, () => Promise<string>][] = [
    ['POST', 'archive a store', async () => `/v1/memory_stores/${(await freshStore(client, 'no body')).id}/archive`],
    ['DELETE', 'delete a store', async () => `/v1/memory_stores/${(await freshStore(client, 'no body')).id}`],
    ['POST', 'redact a version', async () => {
      const m = await client.beta.memoryStores.memories.create(store.id, { path: `/redact-${Math.random().toString(36).slice(2)}.md`, content: 'a' });
      await client.beta.memoryStores.memories.update(m.id, { memory_store_id: store.id, content: 'b' });
      return `/v1/memory_stores/${store.id}/memory_versions/${m.memory_version_id}/redact`;
    }],
    ['DELETE', 'delete a memory', async () => {
      const m = await client.beta.memoryStores.memories.create(store.id, { path: `/delete-${Math.random().toString(36).slice(2)}.md`, content: 'a' });
      return `/v1/memory_stores/${store.id}/memories/${m.id}`;
    }],
    ['POST', 'revoke a key', async () => {
      return `/v1/api_keys/${(await mintKey(server, 'read_only', { body: { name: 'no body' } })).id}/revoke`;
    }],
  ];

  it.each(ROUTES)('%s to %s with a body other than {} is a 400 and does nothing', async (method, _what, target) => {
    const path = await target();
    const bad: [string, string][] = [['{bad', 'not valid JSON'], ['{"bogus":1}', 'unknown field: bogus'], ['[]', 'must be a JSON object'], ['null', 'must be a JSON object']];
    for (const [body, message] of bad) {
      const res = await raw(method, path, { body });
      expectRawError(res, 400, 'invalid_request_error');
      expect((res.body as ErrorEnvelope).error.message, body).toContain(message);
    }
    const utf8Bad = await raw(method, path, { body: new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]) });
    expectRawError(utf8Bad, 400, 'invalid_request_error');
    // Nothing happened: an empty object does it now, once.
    const done = await raw(method, path, { body: '{}' });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
  });

  it.each(ROUTES)('%s to %s takes no body or an empty one', async (method, _what, target) => {
    const res = await raw(method, await target(), { headers: { 'content-type': 'application/json' }, body: '' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await raw(method, await target())).status).toBe(200);
  });

  it('the SDK archives, redacts and deletes as before', async () => {
    const s = await freshStore(client, 'sdk no body');
    const m = await client.beta.memoryStores.memories.create(s.id, { path: '/a.md', content: 'a' });
    await client.beta.memoryStores.memories.update(m.id, { memory_store_id: s.id, content: 'b' });
    expect((await client.beta.memoryStores.memoryVersions.redact(m.memory_version_id, { memory_store_id: s.id })).redacted_at).not.toBeNull();
    await client.beta.memoryStores.memories.delete(m.id, { memory_store_id: s.id });
    expect((await client.beta.memoryStores.archive(s.id)).archived_at).not.toBeNull();
    await client.beta.memoryStores.delete(s.id);
  });
});

describe('header values in error messages', () => {
  let scoped = '';
  /** As a key of the default workspace that is no operator's, so another workspace's id is a 403. */
  const asScoped = async (path: string, workspace: string, opts: RawOptions = {}) => {
    scoped ||= (await mintKey(server, 'read_write', { body: { name: 'one workspace' } })).secret;
    return rawRequest(server.url, opts.body === undefined ? 'GET' : 'POST', path, { ...opts, apiKey: scoped, headers: { ...opts.headers, 'anthropic-workspace-id': workspace } });
  };
  const utf8Header = (s: string) => Buffer.from(s, 'utf8').toString('latin1');

  it('a foreign anthropic-workspace-id is echoed cut to 100 characters and its length, over /v1 and /mcp', async () => {
    for (const n of [300, 8000]) {
      const workspace = `wrkspc_${'a'.repeat(n)}`;
      for (const res of [
        await asScoped('/v1/memory_stores', workspace),
        await asScoped('/mcp', workspace, { headers: { accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) }),
      ]) {
        expectRawError(res, 403, 'permission_error');
        const message = (res.body as ErrorEnvelope).error.message;
        expect(message).toContain(`${workspace.slice(0, 100)}… (${workspace.length} characters)`);
        expect(message.length).toBeLessThan(250);
      }
    }
  });

  it('a non-ASCII anthropic-workspace-id reads as the UTF-8 it was sent as; bytes that are not UTF-8 are a 400', async () => {
    const res = await asScoped('/v1/memory_stores', utf8Header('wrkspc_é'));
    expectRawError(res, 403, 'permission_error');
    expect((res.body as ErrorEnvelope).error.message).toMatch(/anthropic-workspace-id wrkspc_é$/);
    const latin1 = await asScoped('/v1/memory_stores', 'wrkspc_\u00e9');
    expectRawError(latin1, 400, 'invalid_request_error');
    expect((latin1.body as ErrorEnvelope).error.message).toBe('anthropic-workspace-id: is not valid UTF-8');
  });

  it('a non-ASCII Idempotency-Key is the UTF-8 it was sent as: 128 × é is 256 bytes, taken and replayed; bytes that are not UTF-8 are a 400', async () => {
    const store = (await raw('POST', '/v1/memory_stores', { body: JSON.stringify({ name: 'utf-8 keys' }) })).body as { id: string };
    const send = (key: string) =>
      raw('POST', `/v1/memory_stores/${store.id}/memories`, { body: JSON.stringify({ path: '/k.md', content: 'k' }), headers: { 'idempotency-key': key } });
    const first = await send(utf8Header('é'.repeat(128)));
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const again = await send(utf8Header('é'.repeat(128)));
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const latin1 = await send('\u00e9');
    expectRawError(latin1, 400, 'invalid_request_error');
    expect((latin1.body as ErrorEnvelope).error.message).toBe('Idempotency-Key: is not valid UTF-8');
  });
});
