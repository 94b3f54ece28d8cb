/**
 * Issue 13, item 3: a search runs on a reader thread, so while one is under way the real server
 * still answers a mount's `stat` (from a child process) and an API retrieve. The searches are slow
 * for real: each hit matched only by its path, so its snippet walks all ~51,000 words of its 100 KB
 * content (excerpt.ts), 100 hits a page. What is asserted is the order in which things completed,
 * never a time. With MNEMO_READER_THREADS=0 (the searches on the event loop) it fails: both wait.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/service/ids.js';
import type { ImportedWrite } from '../../src/storage/sqlite/bulk.js';
import { openSqliteStorage } from '../../src/storage/sqlite/open.js';
import { FUSE_AVAILABLE, NO_FUSE_REASON } from '../helpers/mount.js';
import { rawRequest } from '../helpers/sdk.js';
import { startServer, type RunningServer } from '../helpers/server.js';

const SLOW_MEMORIES = 100;
/** 102,000 bytes: just under the content limit, every word one the query does not hold. */
const SLOW_CONTENT = 'a '.repeat(51_000);

if (!FUSE_AVAILABLE) console.warn(NO_FUSE_REASON);

describe.skipIf(!FUSE_AVAILABLE)('a long search', () => {
  let server: RunningServer;
  let storeId: string;
  let hostPath: string;
  let probeId: string;

  beforeAll(async () => {
    server = await startServer();
    const api = (method: string, path: string, body?: unknown) =>
      rawRequest(server.url, method, path, { apiKey: server.adminKey, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    storeId = ((await api('POST', '/v1/memory_stores', { name: 'isolation' })).body as { id: string }).id;
    probeId = ((await api('POST', `/v1/memory_stores/${storeId}/memories`, { path: '/probe.md', content: 'retrieved' })).body as { id: string }).id;
    // Seeded through the bulk path on a connection of the test's own (WAL: beside the server's).
    const storage = openSqliteStorage(join(server.dataDir, 'mnemo.db'), { readers: 0 });
    try {
      const now = new Date().toISOString();
      const actor = { type: 'api_actor', apiKeyId: 'apikey_isolation_seed' } as const;
      const writes: ImportedWrite[] = Array.from({ length: SLOW_MEMORIES }, (_, i) => ({
        memoryId: newId('memory'), operation: 'created', path: `/slow/heron-${String(i).padStart(3, '0')}.md`,
        content: SLOW_CONTENT, versionId: newId('version'), now, actor,
      }));
      storage.importWrites(storeId, writes);
    } finally {
      await storage.close();
    }
    const session = await api('POST', '/v1/sessions', { resources: [{ type: 'memory_store', memory_store_id: storeId }] });
    hostPath = (session.body as { resources: { host_path: string }[] }).resources[0]!.host_path;
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('does not hold up a mount stat from another process or an API retrieve, which both complete before it', async () => {
    const done: string[] = [];
    const search = () =>
      rawRequest(server.url, 'GET', `/v1/memory_stores/${storeId}/search?q=heron&limit=100`, { apiKey: server.adminKey }).then((r) => {
        done.push('search');
        return r;
      });
    const searches = [search(), search()];

    // A name the mount has never been asked about, so the kernel has no answer cached for it.
    const child = spawn('python3', ['-c', 'import os, sys\nos.stat(sys.argv[1])\nprint("stat", flush=True)', join(hostPath, 'probe.md')], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const statted = new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`stat child exited ${code}`))));
      createInterface({ input: child.stdout! }).once('line', (line) => {
        if (line === 'stat') done.push('stat');
      });
    });
    // Asked only once the stat has been answered: a server stuck in the search answers neither in time.
    const retrieved = statted.then(() =>
      rawRequest(server.url, 'GET', `/v1/memory_stores/${storeId}/memories/${probeId}`, { apiKey: server.adminKey }).then((r) => {
        done.push('retrieve');
        return r;
      }),
    );

    const [pages, retrieve] = await Promise.all([Promise.all(searches), retrieved]);
    for (const page of pages) {
      expect(page.status).toBe(200);
      expect((page.body as { data: unknown[] }).data).toHaveLength(SLOW_MEMORIES);
    }
    expect(retrieve.status).toBe(200);
    expect((retrieve.body as { content: string }).content).toBe('retrieved');
    expect(done).toEqual(['stat', 'retrieve', 'search', 'search']);
  });
});
