/**
 * A bounded load test (loopback only, stops by itself after DURATION_MS): API writers, an API reader
 * and two session mounts write one store at once. Afterwards no version is lost or duplicated, every
 * memory's head is its last acknowledged write, nothing answered 5xx, and `mnemo check` is clean. (issue 4)
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonRequest, rawRequest, sdkClient } from '../helpers/sdk.js';
import { runCli, startServer, type RunningServer } from '../helpers/server.js';
import { collect } from '../api/shapes.js';

const fuseAvailable = existsSync('/dev/fuse');
const DURATION_MS = 20_000;
const API_WRITERS = 4;
const FILES_PER_WRITER = 6;

/** Overwrites its own files in a loop until the deadline; reports "ack <name> <seq>" after each close(). */
const MOUNT_WRITER = `
import os, random, sys, time
d, prefix, files, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
os.makedirs(os.path.join(d, prefix), exist_ok=True)
end = time.time() + seconds
seq = 0
while time.time() < end:
    name = '%s/f%d.md' % (prefix, random.randrange(files))
    with open(os.path.join(d, name), 'w') as f:
        f.write('%s seq %d\\n' % (prefix, seq))
    print('ack', name, seq, flush=True)
    seq += 1
`;

describe.skipIf(!fuseAvailable)('load', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('loses and duplicates nothing with API writers and two mounts writing at once', async () => {
    const client = sdkClient(server.url, server.adminKey);
    const store = await client.beta.memoryStores.create({ name: 'load' });
    const mounts: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await rawRequest(server.url, 'POST', '/v1/sessions', {
        apiKey: server.adminKey,
        body: JSON.stringify({ resources: [{ type: 'memory_store', memory_store_id: store.id }] }),
      });
      mounts.push((res.body as { resources: { host_path: string }[] }).resources[0]!.host_path);
    }

    const expected = new Map<string, { content: string | null; writes: number }>();
    const statuses: number[] = [];
    const note = (path: string, content: string | null) => {
      const e = expected.get(path) ?? { content: null, writes: 0 };
      expected.set(path, { content, writes: e.writes + 1 });
    };
    const deadline = Date.now() + DURATION_MS;
    const req = async (method: string, path: string, body?: unknown) => {
      const r = await jsonRequest(server, method, path, server.adminKey, body);
      statuses.push(r.status);
      return r;
    };

    const apiWriter = async (w: number) => {
      const ids = new Map<string, string>();
      for (let seq = 0; Date.now() < deadline; seq++) {
        const path = `/api/w${w}/f${seq % FILES_PER_WRITER}.md`;
        const content = `api ${w} seq ${seq}`;
        const id = ids.get(path);
        if (id !== undefined && seq % 11 === 0) {
          const r = await req('DELETE', `/v1/memory_stores/${store.id}/memories/${id}`);
          expect(r.status).toBe(200);
          ids.delete(path);
          note(path, null);
        } else if (id === undefined) {
          const r = await req('POST', `/v1/memory_stores/${store.id}/memories`, { path, content });
          expect(r.status, JSON.stringify(r.body)).toBe(200);
          ids.set(path, (r.body as { id: string }).id);
          note(path, content);
        } else {
          const r = await req('POST', `/v1/memory_stores/${store.id}/memories/${id}`, { content });
          expect(r.status, JSON.stringify(r.body)).toBe(200);
          note(path, content);
        }
      }
    };
    const apiReader = async () => {
      while (Date.now() < deadline) {
        const r = await req('GET', `/v1/memory_stores/${store.id}/memories?view=full&limit=20&path_prefix=/m0/`);
        expect(r.status).toBe(200);
        await req('GET', `/v1/memory_stores/${store.id}/memory_versions?limit=20`);
      }
    };
    const mountWriter = (m: number) =>
      new Promise<void>((resolve, reject) => {
        const child = spawn('python3', ['-c', MOUNT_WRITER, mounts[m]!, `m${m}`, String(FILES_PER_WRITER), String(DURATION_MS / 1000)], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
        createInterface({ input: child.stdout }).on('line', (line) => {
          const [, name, seq] = line.split(' ');
          note(`/${name}`, `m${m} seq ${seq}\n`);
        });
        // 'close', not 'exit': every line of stdout has been read by then.
        child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`mount writer ${m} exited ${code}: ${stderr}`))));
      });

    await Promise.all([...Array.from({ length: API_WRITERS }, (_, w) => apiWriter(w)), apiReader(), mountWriter(0), mountWriter(1)]);

    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    const versions = await collect(client.beta.memoryStores.memoryVersions.list(store.id, { limit: 100 }));
    const perPath = new Map<string, number>();
    for (const v of versions) perPath.set(v.path!, (perPath.get(v.path!) ?? 0) + 1);
    const total = [...expected.values()].reduce((n, e) => n + e.writes, 0);
    expect(versions.length).toBe(total);
    for (const [path, e] of expected) expect(perPath.get(path), path).toBe(e.writes);
    expect(new Set(versions.map((v) => v.id)).size).toBe(versions.length);

    const memories = (await collect(client.beta.memoryStores.memories.list(store.id, { view: 'full', limit: 20 }))) as { path: string; content: string }[];
    const live = new Map(memories.map((m) => [m.path, m.content]));
    for (const [path, e] of expected) expect(live.get(path) ?? null, path).toBe(e.content);
    expect(memories.length).toBe([...expected.values()].filter((e) => e.content !== null).length);

    const check = await runCli(['check', '--data-dir', server.dataDir]);
    expect(check.code, check.stdout).toBe(0);
  }, 150_000); // 23 s on an idle CI machine: room for a slower one
});
