/**
 * Crash safety under mixed load: a real server acknowledges writes through the API (with
 * Idempotency-Keys) and through a session mount (a python child that reports each successful
 * close()), then gets kill -9 at a random moment. After each restart every acknowledged write and
 * every receipt is there, the version count is exact, and `mnemo check` is clean. Repeated several
 * times in one run on one data dir. (issue 4)
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type Anthropic from '@anthropic-ai/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { rawRequest, sdkClient } from '../helpers/sdk.js';
import { makeTempDir, runCli, startServer, type RunningServer } from '../helpers/server.js';
import { collect } from '../api/shapes.js';

const fuseAvailable = existsSync('/dev/fuse');
const ROUNDS = 4;

const WRITER = `
import os, sys
d, prefix = sys.argv[1], sys.argv[2]
# Files are opened relative to the mounted directory itself: once the server dies, they fail rather
# than land in the plain directory that auto_unmount leaves behind (never saved, so never acked).
dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
# Under load this child can start after the kill: then d is already the bare directory again.
if os.fstat(dfd).st_dev == os.stat(os.path.dirname(d)).st_dev:
    sys.exit(0)
print('ready', flush=True)
opener = lambda p, flags: os.open(p, flags, 0o666, dir_fd=dfd)
i = 0
while True:
    name = '%s_%d.md' % (prefix, i)
    content = ('%s write %d\\n' % (prefix, i)) * 3
    print('try', name, flush=True)
    try:
        with open(name, 'w', opener=opener) as f:
            f.write(content)
    except OSError:
        break
    print('ack', name, flush=True)
    i += 1
`;

interface ApiWrite {
  key: string;
  method: string;
  path: string;
  body: unknown;
  memoryPath: string;
  content: string;
  response?: unknown;
}

const mountContent = (name: string) => {
  const [prefix, i] = name.replace(/\.md$/, '').split(/_(?=\d+$)/);
  return `${prefix} write ${i}\n`.repeat(3);
};

describe.skipIf(!fuseAvailable)('kill -9 under API and mount writes', () => {
  const dataDir = makeTempDir('mnemo-trust-crash-');
  let server: RunningServer | null = null;
  afterAll(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(`keeps every acknowledged write and receipt across ${ROUNDS} random kills`, async () => {
    server = await startServer({ dataDir });
    const env = { MNEMO_ADMIN_KEY: server.adminKey };
    let client: Anthropic = sdkClient(server.url, server.adminKey);
    const store = await client.beta.memoryStores.create({ name: 'crash' });
    const res = await rawRequest(server.url, 'POST', '/v1/sessions', {
      apiKey: server.adminKey,
      body: JSON.stringify({ resources: [{ type: 'memory_store', memory_store_id: store.id }] }),
    });
    const mountDir = (res.body as { resources: { host_path: string }[] }).resources[0]!.host_path;

    const apiDone: ApiWrite[] = []; // acknowledged
    const apiAttempted: ApiWrite[] = []; // every request sent (acknowledged or not)
    const mountAcked = new Set<string>();
    const mountTried = new Set<string>();
    const memoryIds = new Map<string, string>();

    for (let round = 0; round < ROUNDS; round++) {
      const s = server!;
      let stop = false;
      // Two API writers: create a memory, then update it, each with its own Idempotency-Key.
      const apiWriter = async (w: number) => {
        for (let i = 0; !stop; i++) {
          const memoryPath = `/api/r${round}/w${w}/m${Math.floor(i / 2)}.md`;
          const content = `round ${round} writer ${w} step ${i}`;
          const id = memoryIds.get(memoryPath);
          const write: ApiWrite =
            id === undefined
              ? { key: randomUUID(), method: 'POST', path: `/v1/memory_stores/${store.id}/memories`, body: { path: memoryPath, content }, memoryPath, content }
              : { key: randomUUID(), method: 'POST', path: `/v1/memory_stores/${store.id}/memories/${id}`, body: { content }, memoryPath, content };
          apiAttempted.push(write);
          try {
            const r = await rawRequest(s.url, write.method, write.path, { apiKey: s.adminKey, headers: { 'idempotency-key': write.key }, body: JSON.stringify(write.body) });
            expect(r.status, JSON.stringify(r.body)).toBe(200);
            write.response = r.body;
            memoryIds.set(memoryPath, (r.body as { id: string }).id);
            apiDone.push(write);
          } catch (err) {
            if ((err as Error).name === 'AssertionError') throw err;
            return; // the server is gone
          }
        }
      };
      const child = spawn('python3', ['-c', WRITER, mountDir, `mnt${round}`], { stdio: ['ignore', 'pipe', 'ignore'] });
      // 'close', not 'exit': every line of stdout has been read by then.
      const childExit = new Promise<void>((r) => child.once('close', () => r()));
      let ready!: () => void;
      const writerReady = new Promise<void>((r) => (ready = r));
      void childExit.then(() => ready());
      createInterface({ input: child.stdout }).on('line', (line) => {
        const [what, name] = line.split(' ');
        if (what === 'ready') ready();
        if (what === 'try') mountTried.add(name!);
        if (what === 'ack') mountAcked.add(name!);
      });
      const writers = [apiWriter(0), apiWriter(1)];
      // The kill comes at a random moment after the mount writer holds the mounted directory.
      await writerReady;
      await new Promise((r) => setTimeout(r, 300 + Math.floor(Math.random() * 900)));
      await s.kill9();
      stop = true;
      await Promise.all(writers);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await childExit;
      clearTimeout(timer);

      server = await startServer({ dataDir, env });
      client = sdkClient(server.url, server.adminKey);
      const url = server.url;
      const key = server.adminKey;

      // Every acknowledged API write replays its receipt unchanged.
      for (const w of apiDone) {
        const r = await rawRequest(url, w.method, w.path, { apiKey: key, headers: { 'idempotency-key': w.key }, body: JSON.stringify(w.body) });
        expect(r.headers.get('idempotent-replayed'), `${w.method} ${w.path}`).toBe('true');
        expect(r.body).toEqual(w.response);
      }
      // Writes cut off by the kill are retried with their key: applied exactly once either way.
      for (const w of apiAttempted.filter((x) => x.response === undefined)) {
        const r = await rawRequest(url, w.method, w.path, { apiKey: key, headers: { 'idempotency-key': w.key }, body: JSON.stringify(w.body) });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        w.response = r.body;
        memoryIds.set(w.memoryPath, (r.body as { id: string }).id);
        apiDone.push(w);
      }
      apiAttempted.splice(0, apiAttempted.length, ...apiDone);

      const memories = (await collect(client.beta.memoryStores.memories.list(store.id, { view: 'full', limit: 20 }))) as { path: string; content: string }[];
      const byPath = new Map(memories.map((m) => [m.path, m.content]));
      const lastApi = new Map<string, string>();
      for (const w of apiDone) lastApi.set(w.memoryPath, w.content);
      for (const [p, content] of lastApi) expect(byPath.get(p), p).toBe(content);
      for (const name of mountAcked) expect(byPath.get(`/${name}`), name).toBe(mountContent(name));
      const mountStored = memories.filter((m) => !m.path.startsWith('/api/'));
      for (const m of mountStored) {
        expect(mountTried.has(m.path.slice(1)), m.path).toBe(true);
        expect(m.content).toBe(mountContent(m.path.slice(1)));
      }
      // Exact: one version per API write and one per stored mount file, nothing else.
      const versions = await collect(client.beta.memoryStores.memoryVersions.list(store.id, { limit: 100 }));
      expect(versions.length).toBe(apiDone.length + mountStored.length);
      expect(memories.length).toBe(lastApi.size + mountStored.length);
      const check = await runCli(['check', '--data-dir', dataDir]);
      expect(check.code, check.stdout + check.stderr).toBe(0);
    }
    expect(mountAcked.size).toBeGreaterThan(0);
    expect(apiDone.length).toBeGreaterThan(0);
  }, 150_000); // 18 s on an idle CI machine: room for a slower one
});
