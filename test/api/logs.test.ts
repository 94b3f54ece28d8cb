/**
 * Structured logs through the real server: stderr carries one pino JSON line per request (method,
 * route template, status, latency, request id, key id), never a key's secret, a header value or
 * memory content; MNEMO_LOG_LEVEL sets the lowest level logged and a bad level refuses to start;
 * on a terminal (script(1) gives it one) the lines are pretty instead of JSON.
 */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { eventually } from '../helpers/mount.js';
import { rawRequest, useServer } from '../helpers/sdk.js';
import { MAIN_JS, makeTempDir, runCli, type RunningServer } from '../helpers/server.js';

type LogLine = Record<string, unknown>;

function jsonLines(stderr: string): LogLine[] {
  return stderr
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as LogLine);
}

describe('request logs', () => {
  let server: RunningServer;
  useServer((s) => {
    server = s;
  });

  it('writes one JSON line per request with method, route template, status, latency, request id and key id', async () => {
    const created = await rawRequest(server.url, 'POST', '/v1/memory_stores', { apiKey: server.adminKey, body: JSON.stringify({ name: 'logged' }) });
    expect(created.status).toBe(200);
    const storeId = (created.body as { id: string }).id;
    const res = await rawRequest(server.url, 'GET', `/v1/memory_stores/${storeId}`, { apiKey: server.adminKey });
    const requestId = res.headers.get('request-id');
    const keys = await rawRequest(server.url, 'GET', '/v1/api_keys', { apiKey: server.adminKey });
    const keyId = (keys.body as { data: { id: string }[] }).data[0]!.id;

    const lines = jsonLines(server.stderr()).filter((l) => l['request_id'] === requestId);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'info',
      msg: 'request',
      method: 'GET',
      route: '/v1/memory_stores/:store',
      status: 200,
      latency_ms: expect.any(Number),
      request_id: requestId,
      key_id: keyId,
    });
    expect(lines[0]!['time']).toEqual(expect.any(String));
    expect(JSON.stringify(lines[0])).not.toContain(storeId);
  });

  it('logs refused and unmatched requests too, with no key id and a bounded route', async () => {
    const refused = await rawRequest(server.url, 'GET', '/v1/memory_stores', { apiKey: 'mnemo-wrong-key' });
    const unmatched = await rawRequest(server.url, 'GET', '/no/such/route/4f1c');
    const byId = (res: { headers: Headers }) => jsonLines(server.stderr()).find((l) => l['request_id'] === res.headers.get('request-id'));
    expect(byId(refused)).toMatchObject({ route: '/v1/memory_stores', status: 401, key_id: null });
    expect(byId(unmatched)).toMatchObject({ route: 'unmatched', status: 404 });
    expect(server.stderr()).not.toContain('4f1c');
  });

  it('never logs an x-api-key or Bearer secret, or memory content and paths', async () => {
    const store = (await rawRequest(server.url, 'POST', '/v1/memory_stores', { apiKey: server.adminKey, body: JSON.stringify({ name: 's' }) })).body as { id: string };
    const content = 'the launch code is 0000-CONTENT-MARKER';
    const path = '/PATH-MARKER.md';
    const write = await rawRequest(server.url, 'POST', `/v1/memory_stores/${store.id}/memories`, {
      headers: { authorization: `Bearer ${server.adminKey}` },
      body: JSON.stringify({ path, content }),
    });
    expect(write.status).toBe(200);
    await rawRequest(server.url, 'GET', `/v1/memory_stores/${store.id}/search?q=CONTENT`, { apiKey: server.adminKey });
    await rawRequest(server.url, 'POST', '/v1/memory_stores', { apiKey: 'mnemo-SECRET-MARKER-of-a-wrong-key', body: '{}' });
    const stderr = server.stderr();
    expect(stderr).toContain('"msg":"request"');
    for (const secret of [server.adminKey, 'SECRET-MARKER', 'CONTENT-MARKER', 'PATH-MARKER']) expect(stderr).not.toContain(secret);
  });

  it('writes only JSON lines to stderr when it is not a terminal', () => {
    expect(() => jsonLines(server.stderr())).not.toThrow();
  });
});

describe('MNEMO_LOG_LEVEL', () => {
  let server: RunningServer;
  useServer((s) => {
    server = s;
  }, { env: { MNEMO_LOG_LEVEL: 'warn' } });

  it('at warn suppresses the request lines', async () => {
    for (let i = 0; i < 3; i++) expect((await rawRequest(server.url, 'GET', '/v1/memory_stores', { apiKey: server.adminKey })).status).toBe(200);
    expect(server.stderr()).not.toContain('"msg":"request"');
    expect(jsonLines(server.stderr()).filter((l) => l['level'] === 'info')).toEqual([]);
  });

  it('refuses to start with a level it does not know', async () => {
    const dir = makeTempDir();
    try {
      const r = await runCli(['serve', '--port', '0', '--data-dir', dir], { MNEMO_LOG_LEVEL: 'loud' });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('invalid MNEMO_LOG_LEVEL: loud (one of ');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!existsSync('/usr/bin/script'))('on a terminal', () => {
  it('writes pretty lines instead of JSON when stderr is a TTY', async () => {
    const dir = makeTempDir();
    const adminKey = `mnemo-test-${'k'.repeat(36)}`;
    // util-linux script(1) gives the server a pseudo-terminal for stdout and stderr alike.
    const cmd = `exec '${process.execPath}' '${MAIN_JS}' serve --port 0 --data-dir '${dir}' --mount-root '${dir}/mnt'`;
    const child = spawn('script', ['-qfec', cmd, '/dev/null'], { env: { ...process.env, MNEMO_ADMIN_KEY: adminKey }, stdio: ['pipe', 'pipe', 'ignore'] });
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    let out = '';
    // Colours off, so the assertions read the text.
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d.replace(/\x1b\[[0-9;]*m/g, '')));
    try {
      const url = await eventually(async () => {
        const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (!m) throw new Error(`no URL yet: ${out}`);
        return m[1]!;
      }, 20_000);
      expect((await rawRequest(url, 'GET', '/healthz')).status).toBe(200);
      await eventually(async () => {
        if (!/INFO.*request/.test(out)) throw new Error(out);
      });
      expect(out).toMatch(/route: "\/healthz"/);
      expect(out).not.toContain('{"level"');
    } finally {
      process.kill(child.pid!, 'SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
