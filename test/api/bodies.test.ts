/**
 * Request bodies under load and attack, through the real server and raw sockets: authentication
 * comes from the headers before any body byte is read, MNEMO_MAX_INFLIGHT_BODIES caps the bodies
 * being read at once (503 overloaded_error with Retry-After past it), one workspace never takes the
 * last eighth of them and one key never the last quarter, a body that stops arriving for MNEMO_BODY_TIMEOUT_SECONDS, or has not all
 * arrived after six of them, is answered 408 and frees its slot (the web console's form posts
 * included), while time the server process itself stood still (SIGSTOP) counts against neither
 * limit for a client that sent all along, and an upload the client abandons logs one line, not a
 * stack trace, and frees its slot.
 */
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/mount.js';
import { createWorkspace, mintKey, rawRequest, useServer } from '../helpers/sdk.js';
import { rmSync } from 'node:fs';
import { makeTempDir, runCli, type RunningServer } from '../helpers/server.js';

interface RawExchange {
  socket: Socket;
  /** Resolves with the status line, headers and body once a whole response has arrived. */
  response: Promise<{ status: number; head: string; body: string }>;
  /** Whether the server has answered (or closed) it: a stalled upload that was refused holds no slot. */
  settled(): boolean;
  /** The same upload started again on a new socket. */
  again(): RawExchange;
}

/** Opens a socket, writes `head` and `firstBytes` of a body, and leaves the body unfinished. */
function startUpload(url: string, head: string, firstBytes: string): RawExchange {
  const { hostname, port } = new URL(url);
  let settled = false;
  const socket = connect(Number(port), hostname, () => socket.write(head + firstBytes));
  const response = new Promise<{ status: number; head: string; body: string }>((resolve, reject) => {
    let got = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      got += d;
      const end = got.indexOf('\r\n\r\n');
      if (end < 0) return;
      const headText = got.slice(0, end);
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(headText)?.[1] ?? NaN);
      const body = got.slice(end + 4);
      if (Buffer.byteLength(body) >= length) resolve({ status: Number(headText.split(' ')[1]), head: headText, body });
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`socket closed before a whole response: ${JSON.stringify(got)}`)));
  });
  response.catch(() => {}); // uploads that are aborted on purpose never answer
  response.then(() => { settled = true; }, () => { settled = true; });
  return { socket, response, settled: () => settled, again: () => startUpload(url, head, firstBytes) };
}

function requestHead(url: string, path: string, headers: Record<string, string>): string {
  const { host } = new URL(url);
  const lines = Object.entries({ host, 'content-type': 'application/json', ...headers }).map(([k, v]) => `${k}: ${v}`);
  return `POST ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`;
}

/** A chunked upload that sends one 64 KiB chunk of a JSON body and then nothing. */
function stalledChunked(url: string, apiKey: string | null): RawExchange {
  const head = requestHead(url, '/v1/memory_stores', { 'transfer-encoding': 'chunked', ...(apiKey ? { 'x-api-key': apiKey } : {}) });
  const chunk = `{"name":"${'n'.repeat(64 * 1024)}`;
  return startUpload(url, head, `${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n`);
}

const createStore = (server: RunningServer, name: string, apiKey = server.adminKey) =>
  rawRequest(server.url, 'POST', '/v1/memory_stores', { apiKey, body: JSON.stringify({ name }) });

/** An upload that declares a 50-byte body, sends its first byte and then nothing (the tester's stall). */
function stalledByte(server: RunningServer, apiKey: string): RawExchange {
  return startUpload(server.url, requestHead(server.url, '/v1/memory_stores', { 'x-api-key': apiKey, 'content-length': '50' }), '{');
}

/**
 * Resolves once `apiKey`'s next create gets 503: the `stalled` uploads hold their slots. A probe is a
 * body request too, so on a loaded host it can hold a slot at the moment a stalled upload's headers
 * are read, and that upload is refused instead; each probe that got through starts any upload that was
 * answered again (in place, so the caller closes the ones that hold slots).
 */
const refusedWhileHeld = (server: RunningServer, apiKey: string, stalled: RawExchange[]) =>
  eventually(async () => {
    const res = await createStore(server, 'probe', apiKey);
    if (res.status === 503) return res;
    stalled.forEach((upload, i) => {
      if (!upload.settled()) return;
      upload.socket.destroy();
      stalled[i] = upload.again();
    });
    throw new Error(`got ${res.status} while the stalled uploads should hold the slots`);
  });

/**
 * `count` uploads of one JSON body, `{`, 400 spaces (JSON whitespace), then a name: each sends its
 * first byte, then a space at each `drip()`, and the rest at `finish()`. `uploads` is the array
 * refusedWhileHeld restarts in place (a restarted upload drips from its first byte again).
 */
function drippingUploads(server: RunningServer, apiKey: string, count: number, name: string) {
  const spaces = 400;
  const body = `{${' '.repeat(spaces)}"name":${JSON.stringify(name)}}`;
  const head = requestHead(server.url, '/v1/memory_stores', { 'x-api-key': apiKey, 'content-length': String(Buffer.byteLength(body)) });
  const uploads = Array.from({ length: count }, () => startUpload(server.url, head, '{'));
  const sent = new Map<RawExchange, number>();
  return {
    uploads,
    drip() {
      for (const u of uploads) {
        const n = sent.get(u) ?? 0;
        if (n >= spaces || u.socket.destroyed) continue;
        u.socket.write(' ');
        sent.set(u, n + 1);
      }
    },
    finish() {
      for (const u of uploads) if (!u.socket.destroyed) u.socket.write(body.slice(1 + (sent.get(u) ?? 0)));
    },
  };
}

/**
 * Stops the server process (SIGSTOP: what a long GC pause, a long synchronous piece or a host that
 * descheduled it looks like to its clients) for `ms` while this process goes on sending, calls
 * `beforeResume` (a last write, so bytes are certainly waiting in its socket buffers when it resumes)
 * and resumes it.
 */
async function serverStoodStill(server: RunningServer, ms: number, beforeResume: () => void): Promise<void> {
  process.kill(server.pid, 'SIGSTOP');
  try {
    await new Promise((r) => setTimeout(r, ms));
    beforeResume();
  } finally {
    process.kill(server.pid, 'SIGCONT');
  }
}

describe('authentication before the body', () => {
  let server: RunningServer;
  useServer((s) => {
    server = s;
  });

  it('refuses an unauthenticated chunked upload that never finishes with 401 and Connection: close, without waiting for its body', async () => {
    for (const key of [null, 'mnemo-wrong-key']) {
      const upload = stalledChunked(server.url, key);
      const res = await upload.response;
      upload.socket.destroy();
      expect(res.status, res.body).toBe(401);
      expect(JSON.parse(res.body)).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
      // Closed rather than read through: the rest of the body is never wanted.
      expect(res.head).toMatch(/\r\nconnection: close/i);
    }
  });

  it('refuses an unauthenticated request that declares a large body with 401 before the body arrives', async () => {
    const head = requestHead(server.url, '/mcp', { 'content-length': String(1024 * 1024) });
    const upload = startUpload(server.url, head, '{"jsonrpc":"2.0",');
    const res = await upload.response;
    upload.socket.destroy();
    expect(res.status, res.body).toBe(401);
  });
});

describe('MNEMO_MAX_INFLIGHT_BODIES', () => {
  let server: RunningServer;
  useServer((s) => {
    server = s;
  }, { env: { MNEMO_MAX_INFLIGHT_BODIES: '2' } });

  it('answers a body request past the cap with 503 overloaded_error and Retry-After, and frees the slots of aborted uploads', async () => {
    // Two keys: one key never takes the last eighth of the slots (at least one).
    const [other, third] = [(await mintKey(server, 'read_write', { body: { name: 'other' } })).secret, (await mintKey(server, 'read_write', { body: { name: 'third' } })).secret];
    const stalled = [stalledChunked(server.url, server.adminKey), stalledChunked(server.url, other)];
    // The stalled uploads hold their slots once the server has read their headers.
    const refused = await refusedWhileHeld(server, third, stalled);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.body).toMatchObject({ type: 'error', error: { type: 'overloaded_error', message: expect.stringContaining('reading 2 request bodies already') } });
    // A request without a body takes no slot.
    expect((await rawRequest(server.url, 'GET', '/v1/memory_stores', { apiKey: server.adminKey })).status).toBe(200);

    for (const s of stalled) s.socket.destroy();
    await eventually(async () => {
      if ((server.stderr().match(/aborted: the client closed the connection/g) ?? []).length < 2) throw new Error(server.stderr());
    });
    const after = await createStore(server, 'after the aborted ones');
    expect(after.status, JSON.stringify(after.body)).toBe(200);
  });
});

describe('one key\'s share of the body slots', () => {
  let server: RunningServer;
  useServer((s) => {
    server = s;
  }, { env: { MNEMO_MAX_INFLIGHT_BODIES: '8' } });

  it('keeps the last quarter of MNEMO_MAX_INFLIGHT_BODIES from a key past its share: 503 for it, slots for the other keys', async () => {
    const reader = (await mintKey(server, 'read_only', { body: { name: 'stalling reader' } })).secret;
    const other = (await mintKey(server, 'read_write', { body: { name: 'other writer' } })).secret;
    // Even a read_only key holds a slot while its body arrives: it is refused only once the body is read.
    // Past its share (1 of 8) it still takes free slots, up to 6: the last two stay for the others.
    const stalled = Array.from({ length: 6 }, () => stalledByte(server, reader));
    const refused = await refusedWhileHeld(server, reader, stalled);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.body).toMatchObject({ type: 'error', error: { type: 'overloaded_error', message: expect.stringContaining('the last 2 of MNEMO_MAX_INFLIGHT_BODIES=8 are kept for other keys') } });
    for (const key of [other, server.adminKey]) {
      const res = await createStore(server, 'beside the stalled key', key);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    for (const s of stalled) s.socket.destroy();
    await eventually(async () => {
      const res = await createStore(server, 'once the stalled ones are gone', reader);
      // read_only: the body is read, then the write refused; no longer 503.
      if (res.status !== 403) throw new Error(`got ${res.status}`);
    });
  });
});

describe('one workspace\'s share of the body slots', () => {
  let server: RunningServer;
  useServer((s) => {
    server = s;
  }, { env: { MNEMO_MAX_INFLIGHT_BODIES: '8' } });

  it('keeps the last eighth of MNEMO_MAX_INFLIGHT_BODIES from a workspace past its share, whatever keys it mints: other workspaces and the operator still get slots', async () => {
    const greedyWs = (await createWorkspace(server, 'greedy')).id;
    const mintIn = async (name: string) => (await mintKey(server, 'read_write', { body: { name }, headers: { 'anthropic-workspace-id': greedyWs } })).secret;
    // The tester's attack: one key takes all it may, a second key of the same workspace the rest.
    const [first, second] = [await mintIn('first'), await mintIn('second')];
    const victim = (await mintKey(server, 'read_write', { body: { name: 'victim in the default workspace' } })).secret;
    // The first key may hold 6 of the 8 (the last two stay for other keys): its seventh is refused.
    const byFirst = Array.from({ length: 6 }, () => stalledByte(server, first));
    await refusedWhileHeld(server, first, byFirst);
    const bySecond = [stalledByte(server, second), stalledByte(server, second)];
    const refused = await refusedWhileHeld(server, second, bySecond);
    expect(refused.body).toMatchObject({ type: 'error', error: { type: 'overloaded_error', message: expect.stringContaining('the last 1 of MNEMO_MAX_INFLIGHT_BODIES=8 are kept for other workspaces') } });
    const byVictim = await createStore(server, 'beside the greedy workspace', victim);
    expect(byVictim.status, JSON.stringify(byVictim.body)).toBe(200);
    // The operator key is its own tenant, even acting in the greedy workspace.
    const byOperator = await rawRequest(server.url, 'POST', '/v1/memory_stores', {
      apiKey: server.adminKey, headers: { 'anthropic-workspace-id': greedyWs }, body: JSON.stringify({ name: 'by the operator' }),
    });
    expect(byOperator.status, JSON.stringify(byOperator.body)).toBe(200);
    for (const s of [...byFirst, ...bySecond]) s.socket.destroy();
  });
});

describe('MNEMO_BODY_TIMEOUT_SECONDS', () => {
  let server: RunningServer;
  useServer((s) => {
    server = s;
  }, { env: { MNEMO_MAX_INFLIGHT_BODIES: '5', MNEMO_BODY_TIMEOUT_SECONDS: '1' } });

  it('answers a body that stops arriving with 408 and Connection: close, and frees its slot', async () => {
    const key = (await mintKey(server, 'read_write', { body: { name: 'staller' } })).secret;
    const before = server.stderr().length;
    // Three stalled bodies hold every slot a key may take (the last two of 5 are kept for other keys)...
    const uploads = Array.from({ length: 3 }, () => stalledByte(server, key));
    await refusedWhileHeld(server, key, uploads);
    const responses = await Promise.all(uploads.map((u) => u.response));
    for (const u of uploads) u.socket.destroy();
    expect(responses.map((r) => r.status)).toEqual([408, 408, 408]);
    const res = responses[0]!;
    expect(res.head).toMatch(/\r\nconnection: close/i);
    expect(res.head).toMatch(/\r\nrequest-id: req_\w+/i);
    expect(JSON.parse(res.body)).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining('MNEMO_BODY_TIMEOUT_SECONDS') },
    });
    // ...and freed by the timeout, not by the client going away.
    const after = await createStore(server, 'after the timeout', key);
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    // Logged as the request's 408 line, not as an aborted upload or a stack trace.
    const logged = server.stderr().slice(before);
    expect(logged).toMatch(/"status":408/);
    expect(logged).not.toMatch(/aborted|\n\s+at |\\n\s+at /);
  });

  it('answers a body that trickles in, a byte before each timeout, with 408 once it has taken six timeouts, and frees its slot', async () => {
    const key = (await mintKey(server, 'read_write', { body: { name: 'trickler' } })).secret;
    // Three 50-byte bodies, a byte every 400 ms each: never a second without one, but 20 s in all.
    const uploads = Array.from({ length: 3 }, () => stalledByte(server, key));
    const trickle = setInterval(() => {
      for (const u of uploads) if (!u.socket.destroyed) u.socket.write('"');
    }, 400);
    try {
      // That they hold the key's slots meanwhile is the stalled uploads' test above: here a loaded
      // host could pass the 6 s before a probe sees the 503, so the message says which limit ended them.
      const responses = await Promise.all(uploads.map((u) => u.response));
      expect(responses.map((r) => r.status)).toEqual([408, 408, 408]);
      expect(responses[0]!.head).toMatch(/\r\nconnection: close/i);
      expect(JSON.parse(responses[0]!.body)).toMatchObject({
        type: 'error',
        error: { type: 'invalid_request_error', message: 'request body incomplete: it did not all arrive within 6 s (6 × MNEMO_BODY_TIMEOUT_SECONDS)' },
      });
    } finally {
      clearInterval(trickle);
      for (const u of uploads) u.socket.destroy();
    }
    const after = await createStore(server, 'after the tricklers', key);
    expect(after.status, JSON.stringify(after.body)).toBe(200);
  });

  it('holds a signed-in console form that stops arriving in its key\'s body slots, and answers it 408 with Connection: close', async () => {
    const key = (await mintKey(server, 'read_write', { body: { name: 'console staller' } })).secret;
    const signedIn = await rawRequest(server.url, 'POST', '/admin/sign-in', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ api_key: key }).toString(),
      fetch: (input, init) => fetch(input, { ...init, redirect: 'manual' }),
    });
    expect(signedIn.status).toBe(303);
    const cookie = /mnemo_console=[^;]+/.exec(signedIn.headers.get('set-cookie') ?? '')![0];
    const form = { cookie, 'content-type': 'application/x-www-form-urlencoded', 'content-length': '50' };
    const uploads = Array.from({ length: 3 }, () => startUpload(server.url, requestHead(server.url, '/admin/stores', form), 'csrf='));
    // The same slots as /v1, under the signed-in key: its API writes wait for them too.
    await refusedWhileHeld(server, key, uploads);
    const responses = await Promise.all(uploads.map((u) => u.response));
    for (const u of uploads) u.socket.destroy();
    expect(responses.map((r) => r.status)).toEqual([408, 408, 408]);
    expect(responses[0]!.head).toMatch(/\r\nconnection: close/i);
    expect(responses[0]!.body).toContain('request body incomplete: none of it arrived for 1 s (MNEMO_BODY_TIMEOUT_SECONDS)');
    expect((await createStore(server, 'after the console stall', key)).status).toBe(200);
  });

  it('answers a sign-in form that stops arriving 408 with Connection: close', async () => {
    const head = requestHead(server.url, '/admin/sign-in', { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '50' });
    const upload = startUpload(server.url, head, 'api_key=');
    const res = await upload.response;
    upload.socket.destroy();
    expect(res.status, res.body).toBe(408);
    expect(res.head).toMatch(/\r\nconnection: close/i);
    expect(res.body).toContain('MNEMO_BODY_TIMEOUT_SECONDS');
  });

  it('lets a slow body that keeps arriving run past the timeout', async () => {
    const body = JSON.stringify({ name: 'slow but steady' });
    const upload = startUpload(server.url, requestHead(server.url, '/v1/memory_stores', { 'x-api-key': server.adminKey, 'content-length': String(body.length) }), body[0]!);
    // A byte every 100 ms for 15 bytes: longer than the 1 s timeout, but never a second without one,
    // and far inside the 6 s for the whole body (250 ms gaps spared less of the second when a loaded
    // host held this process's timers back).
    for (let i = 1; i <= 15; i++) {
      await new Promise((r) => setTimeout(r, 100));
      upload.socket.write(body[i]!);
    }
    upload.socket.write(body.slice(16));
    const res = await upload.response;
    upload.socket.destroy();
    expect(res.status, res.body).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ name: 'slow but steady' });
  });

  /**
   * Three uploads from one new key hold every slot it may take (the probe's 503 says the server reads
   * all three) and send a byte each every 200 ms, while the server stands still for `stallMs`; then
   * they finish. Their answers.
   */
  async function sentThroughStall(keyName: string, name: string, stallMs: number): Promise<{ status: number; body: string }[]> {
    const key = (await mintKey(server, 'read_write', { body: { name: keyName } })).secret;
    const sending = drippingUploads(server, key, 3, name);
    const drip = setInterval(() => sending.drip(), 200);
    try {
      await refusedWhileHeld(server, key, sending.uploads);
      await serverStoodStill(server, stallMs, () => sending.drip());
      for (let i = 0; i < 3; i++) await new Promise((r) => setTimeout(r, 200));
      clearInterval(drip);
      sending.finish();
      return await Promise.all(sending.uploads.map((u) => u.response));
    } finally {
      clearInterval(drip);
      for (const u of sending.uploads) u.socket.destroy();
    }
  }

  it('accepts bodies that kept arriving while the server itself stood still for longer than the timeout', async () => {
    // 2.5 timeouts without the server reading a byte, while a byte of each came every 200 ms.
    const responses = await sentThroughStall('sender beside a stall', 'sent all along', 2500);
    expect(responses.map((r) => r.status), responses.map((r) => r.body).join('\n')).toEqual([200, 200, 200]);
    expect(JSON.parse(responses[0]!.body)).toMatchObject({ name: 'sent all along' });
  });

  it('does not count the time the server itself stood still toward the six timeouts a whole body gets', async () => {
    // Longer than the 6 s a whole body gets, all of it the server's: the client sent all along, and
    // the server waits on it for a second or so besides.
    const responses = await sentThroughStall('sender beside a long stall', 'sent beside a long stall', 6500);
    expect(responses.map((r) => r.status), responses.map((r) => r.body).join('\n')).toEqual([200, 200, 200]);
    expect(JSON.parse(responses[0]!.body)).toMatchObject({ name: 'sent beside a long stall' });
  });
});

describe('an aborted upload', () => {
  let server: RunningServer;
  useServer((s) => {
    server = s;
  }, { env: { MNEMO_MAX_INFLIGHT_BODIES: '1' } });

  it('logs one warn line about it and no stack trace', async () => {
    const before = server.stderr().length;
    const head = requestHead(server.url, '/v1/memory_stores', { 'x-api-key': server.adminKey, 'content-length': '5000' });
    const uploads = [startUpload(server.url, head, '{"name":"half')];
    // The half-sent upload holds the only slot once the server is reading it; then hang up.
    await refusedWhileHeld(server, server.adminKey, uploads);
    uploads[0]!.socket.destroy();
    const aborted = () => server.stderr().slice(before).split('\n').filter((l) => l.includes('aborted: the client closed the connection'));
    await eventually(async () => {
      if (aborted().length === 0) throw new Error(server.stderr().slice(before));
    });
    expect(aborted()).toHaveLength(1);
    expect(JSON.parse(aborted()[0]!)).toMatchObject({ level: 'warn' });
    expect(aborted()[0]).toContain('POST /v1/memory_stores');
    expect(server.stderr().slice(before)).not.toMatch(/\n\s+at |\\n\s+at /);
    expect((await createStore(server, 'after')).status).toBe(200);
  });
});

describe('a bad MNEMO_MAX_INFLIGHT_BODIES', () => {
  it('refuses to start with a clear message for 0 or a non-number', async () => {
    const dir = makeTempDir();
    try {
      for (const value of ['0', 'many']) {
        const r = await runCli(['serve', '--port', '0', '--data-dir', dir], { MNEMO_MAX_INFLIGHT_BODIES: value });
        expect(r.code).toBe(1);
        expect(r.stderr).toContain(`invalid MNEMO_MAX_INFLIGHT_BODIES: ${value}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
