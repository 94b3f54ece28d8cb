/**
 * Fuzzing the real server: thousands of random and hostile inputs through the API (forbidden path
 * characters of every class, bad UTF-8, huge numbers, wrong JSON types, header injection over a raw
 * socket) and through a session mount (hostile file names and bytes). No 5xx, no crash, and
 * `mnemo check` finds no invalid stored data afterwards. Seeded, so a failure replays. (issue 4)
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, sdkClient } from '../helpers/sdk.js';
import { runCli, startServer, type RunningServer } from '../helpers/server.js';

const run = promisify(execFile);
const SEED = 0x5eed4;
const API_CASES = 3000;

/** mulberry32: a small seeded PRNG. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  return { next, int, pick };
}

const HOSTILE = [
  '\u0000', '\u0001', '\u001f', '\u007f', '\u0085', '\u009f', // control
  '\u00ad', '\u200b', '\u200e', '\u2066', '\ufeff', // format
  '\ud800', '\udfff', // lone surrogates
  '\u2028', '\u2029', '/', '//', '.', '..', '\\', '%', '%00', '?', '#', ' ', '\t', '\n', '\r\n',
  'e\u0301', 'é', '😀', '\uffff', '*', '"', "'", '<script>', '${x}', 'a'.repeat(300),
];
const SEGMENTS = ['a', 'notes', 'x.md', '.', '..', '', '.hidden', 'Ω', 'con', 'a b'];

function hostileString(r: ReturnType<typeof prng>, max = 8): string {
  let s = '';
  const n = 1 + r.int(max);
  for (let i = 0; i < n; i++) s += r.next() < 0.5 ? r.pick(HOSTILE) : r.pick(SEGMENTS);
  return s;
}

function hostilePath(r: ReturnType<typeof prng>): unknown {
  const k = r.int(10);
  if (k === 0) return r.pick([null, 42, true, [], {}, ['/a'], 1e308, -0]);
  if (k === 1) return '/' + Array.from({ length: 15 + r.int(10) }, () => 'd').join('/');
  if (k === 2) return '/' + 'x'.repeat(1000 + r.int(100));
  if (k <= 4) return '/' + Array.from({ length: 1 + r.int(4) }, () => r.pick(SEGMENTS)).join('/');
  return (r.next() < 0.8 ? '/' : '') + hostileString(r);
}

function hostileValue(r: ReturnType<typeof prng>): unknown {
  return r.pick<() => unknown>([
    () => hostileString(r),
    () => r.int(2 ** 31),
    () => -1,
    () => 1e308,
    () => null,
    () => true,
    () => [hostileString(r)],
    () => ({ nested: hostileString(r) }),
    () => 'x'.repeat(r.pick([10, 300, 5000, 110_000])),
    () => ({ __proto__: { polluted: true }, toString: 'x' }),
  ])();
}

function hostileBody(r: ReturnType<typeof prng>, kind: string): string | Uint8Array {
  const t = r.int(12);
  if (t === 0) return Buffer.from([0x7b, 0x22, 0x70, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]); // {"p":"<bad utf-8>"}
  if (t === 1) return '{"path": "/a", "content": 1e400}';
  if (t === 2) return r.pick(['', '{', 'null', '[]', '"str"', '123456789012345678901234567890', '{"a":' + '['.repeat(5000)]);
  if (t === 3) return '{"__proto__": {"admin": true}, "name": "p"}';
  const body: Record<string, unknown> = {};
  if (kind === 'store') Object.assign(body, { name: r.next() < 0.7 ? hostileString(r) : hostileValue(r), description: r.next() < 0.5 ? hostileString(r) : hostileValue(r), metadata: r.next() < 0.5 ? { [hostileString(r, 2)]: hostileString(r) } : hostileValue(r) });
  if (kind === 'memory') Object.assign(body, { path: hostilePath(r), content: r.next() < 0.7 ? hostileString(r, 20) : hostileValue(r) });
  if (kind === 'update') Object.assign(body, r.next() < 0.5 ? { content: hostileString(r, 20) } : { path: hostilePath(r) }, r.next() < 0.3 ? { precondition: hostileValue(r) } : {});
  if (kind === 'session') Object.assign(body, { resources: r.pick([[], hostileValue(r), [{ type: 'memory_store', memory_store_id: hostileString(r), access: hostileValue(r) }]]) });
  if (kind === 'key') Object.assign(body, { name: hostileString(r), role: r.pick(['admin', 'root', hostileString(r)]), memory_store_ids: hostileValue(r) });
  if (r.next() < 0.2) body[hostileString(r, 2)] = hostileValue(r);
  return JSON.stringify(body);
}

/** A raw HTTP/1.1 exchange, for what fetch refuses to send (CR/LF and NUL in headers, bad request lines). */
function rawHttp(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let out = '';
    socket.setTimeout(5000, () => socket.destroy());
    socket.on('data', (d) => (out += d.toString('latin1')));
    socket.on('close', () => resolve(out));
    socket.on('error', () => resolve(out));
    socket.end(request, 'latin1');
  });
}

describe('fuzz', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it(`${API_CASES} hostile API requests: no 5xx, the server stays up, and stored data stays valid`, async () => {
    const r = prng(SEED);
    const client = sdkClient(server.url, server.adminKey);
    const store = await client.beta.memoryStores.create({ name: 'fuzz' });
    const m = await client.beta.memoryStores.memories.create(store.id, { path: '/seed.md', content: 'seed' });
    const ids = () => r.pick([store.id, m.id, m.memory_version_id, 'memstore_nope', hostileString(r, 3), '%ff', '..', '%2e%2e', 'a'.repeat(2000)]);
    const enc = (s: string) => {
      // A lone surrogate cannot be percent-encoded as UTF-8; send its escape raw instead.
      const safe = s.replace(/\p{Cs}/gu, '%ED%A0%80');
      return r.next() < 0.7 ? encodeURIComponent(safe) : safe.replace(/[\u0000-\u0020#?]/g, '');
    };
    const failures: string[] = [];
    const counts = new Map<number, number>();
    const cases = Array.from({ length: API_CASES }, () => {
      const sid = r.next() < 0.7 ? store.id : enc(ids());
      const mid = r.next() < 0.6 ? m.id : enc(ids());
      const q = r.pick(['', `?limit=${r.pick(['0', '-1', '1e99', '99999999999999999999', 'abc', '20'])}`, `?view=${r.pick(['full', 'x', '%ff'])}`, `?path_prefix=${enc(hostileString(r))}&depth=${r.pick(['1', '2', '-0'])}`, `?page=${enc(hostileString(r))}`, `?expected_content_sha256=${r.pick(['0'.repeat(64), 'zz', ''])}`, '?created_at[gte]=2026-02-30T00:00:00Z', '?%ff=1', '?a=%', `?operation=${r.pick(['created', 'x'])}&memory_id=${enc(hostileString(r))}`]);
      const [method, path, kind] = r.pick<[string, string, string]>([
        ['POST', '/v1/memory_stores', 'store'],
        ['GET', '/v1/memory_stores', ''],
        ['GET', `/v1/memory_stores/${sid}`, ''],
        ['POST', `/v1/memory_stores/${sid}`, 'store'],
        ['POST', `/v1/memory_stores/${sid}/memories`, 'memory'],
        ['GET', `/v1/memory_stores/${sid}/memories`, ''],
        ['GET', `/v1/memory_stores/${sid}/memories/${mid}`, ''],
        ['POST', `/v1/memory_stores/${sid}/memories/${mid}`, 'update'],
        ['DELETE', `/v1/memory_stores/${sid}/memories/${mid}`, ''],
        ['GET', `/v1/memory_stores/${sid}/memory_versions`, ''],
        ['GET', `/v1/memory_stores/${sid}/memory_versions/${mid}`, ''],
        ['POST', `/v1/memory_stores/${sid}/memory_versions/${mid}/redact`, ''],
        ['POST', '/v1/sessions', 'session'],
        ['GET', `/v1/sessions/${enc(ids())}`, ''],
        ['POST', '/v1/api_keys', 'key'],
        ['GET', `/v1/api_keys/${enc(ids())}`, ''],
        ['PUT', `/v1/memory_stores/${sid}`, 'store'],
      ]);
      const headers: Record<string, string> = {};
      if (r.next() < 0.3) headers['idempotency-key'] = r.pick(['k', 'x'.repeat(300), 'é'.repeat(100), hostileString(r).replace(/[\u0000-\u001f\u007f\r\n]/g, '').replace(/[^\u0000-\u00ff]/g, '') || 'k2']);
      if (r.next() < 0.1) headers['anthropic-workspace-id'] = r.pick(['wrkspc_nope', '', 'x'.repeat(500)]);
      if (r.next() < 0.1) headers['content-type'] = r.pick(['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1']);
      const body = method === 'GET' || method === 'DELETE' ? undefined : hostileBody(r, kind);
      return { method, path: path + q, headers, body };
    });
    for (let i = 0; i < cases.length; i += 25) {
      await Promise.all(
        cases.slice(i, i + 25).map(async (c) => {
          let res;
          try {
            res = await rawRequest(server.url, c.method, c.path, { apiKey: server.adminKey, headers: c.headers, ...(c.body === undefined ? {} : { body: c.body }) });
          } catch (err) {
            // fetch itself refused to send it (an invalid header or URL): not the server's doing.
            if ((err as Error).name === 'TypeError') return;
            throw err;
          }
          counts.set(res.status, (counts.get(res.status) ?? 0) + 1);
          if (res.status >= 500) failures.push(`${res.status} ${c.method} ${c.path} ${JSON.stringify(res.body).slice(0, 200)}`);
        }),
      );
    }
    // Header injection and malformed requests over a raw socket.
    const { port } = new URL(server.url);
    const injections = [
      `GET /v1/memory_stores HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nx-api-key: ${server.adminKey}\r\nidempotency-key: a\r\nx-injected: 1\r\nConnection: close\r\n\r\n`,
      `POST /v1/memory_stores HTTP/1.1\r\nHost: x\r\nx-api-key: ${server.adminKey}\nInjected: yes\r\nContent-Length: 13\r\nConnection: close\r\n\r\n{"name":"hi"}`,
      `POST /v1/memory_stores HTTP/1.1\r\nHost: x\r\nx-api-key: ${server.adminKey}\r\nidempotency-key: a\u0000b\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
      `POST /v1/memory_stores HTTP/1.1\r\nHost: x\r\nx-api-key: ${server.adminKey}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n`,
      `GET /v1/memory_stores/\u00ff\u0000 HTTP/1.1\r\nHost: x\r\nx-api-key: ${server.adminKey}\r\nConnection: close\r\n\r\n`,
      `GET /v1/memory_stores HTTP/1.1\r\nHost: x\r\nx-api-key: ${server.adminKey}\r\nanthropic-workspace-id: \u00e9\u00ff\r\nConnection: close\r\n\r\n`,
      `POST /v1/memory_stores HTTP/1.1\r\nHost: x\r\nx-api-key: ${server.adminKey}\r\nidempotency-key: \u00e9\u00ff\u00fe\r\nContent-Length: 13\r\nConnection: close\r\n\r\n{"name":"hi"}`,
      'GARBAGE\r\n\r\n',
    ];
    for (const req of injections) {
      const answer = await rawHttp(server.url, req);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
      if (status >= 500) failures.push(`${status} raw ${JSON.stringify(req.slice(0, 80))}`);
    }
    // The inputs reach the handlers: some succeed, most are refused with a 4xx.
    expect(counts.get(200)).toBeGreaterThan(0);
    expect(counts.get(400)).toBeGreaterThan(0);
    expect(failures).toEqual([]);
    expect((await rawRequest(server.url, 'GET', '/health')).status).toBe(200);
    const check = await runCli(['check', '--data-dir', server.dataDir]);
    expect(check.code, check.stdout).toBe(0);
  });

  it.skipIf(!existsSync('/dev/fuse'))('hostile names and bytes through a mount: errors, never a crash or invalid data', async () => {
    const client = sdkClient(server.url, server.adminKey);
    const store = await client.beta.memoryStores.create({ name: 'fuzz mount' });
    const res = await rawRequest(server.url, 'POST', '/v1/sessions', {
      apiKey: server.adminKey,
      body: JSON.stringify({ resources: [{ type: 'memory_store', memory_store_id: store.id }] }),
    });
    const dir = (res.body as { resources: { host_path: string }[] }).resources[0]!.host_path;
    const script = `
import os, random, sys, errno
random.seed(${SEED})
d = sys.argv[1]
names = [b'a', b'b.md', b'\\xff\\xfe', b'\\xc3', b'e\\xcc\\x81', b'\\xe2\\x80\\xa8', b'\\xef\\xbb\\xbf', b'\\x01', b'\\x7f', b'x' * 255, b'.tmp', b'..a', b' ', b'\\xf0\\x9f\\x98\\x80', b'\\xed\\xa0\\x80']
contents = [b'', b'ok\\n', b'\\xff', b'\\xc3(', b'\\x00\\x00', b'\\xed\\xa0\\x80', b'x' * 102400, b'x' * 102401, 'é'.encode() * 60000]
ok = fail = 0
for i in range(1500):
    depth = random.randrange(1, 4)
    rel = b'/'.join(random.choice(names) for _ in range(depth))
    p = os.path.join(d.encode(), rel)
    op = random.randrange(6)
    try:
        if op <= 2:
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, 'wb') as f:
                f.write(random.choice(contents))
        elif op == 3:
            os.rename(p, os.path.join(d.encode(), random.choice(names)))
        elif op == 4:
            os.unlink(p)
        else:
            with open(p, 'ab') as f:
                f.write(random.choice(contents))
        ok += 1
    except OSError as e:
        fail += 1
print(ok, fail)
`;
    const { stdout } = await run('python3', ['-c', script, dir], { timeout: 120_000 });
    const [ok, fail] = stdout.trim().split(' ').map(Number);
    expect(ok! + fail!).toBe(1500);
    expect(ok).toBeGreaterThan(0);
    expect(fail).toBeGreaterThan(0);
    expect((await rawRequest(server.url, 'GET', '/health')).status).toBe(200);
    const check = await runCli(['check', '--data-dir', server.dataDir]);
    expect(check.code, check.stdout).toBe(0);
  });
});
