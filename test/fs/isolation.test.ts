/**
 * Issue 13, item 3: a search runs on a reader thread, so while one is under way the real server
 * still answers a mount's `stat` (from a child process) and an API retrieve. The searches are slow
 * for real: each hit matched only by its path, so its snippet walks all ~51,000 words of its 100 KB
 * content (excerpt.ts), 100 hits a page. What is asserted is the order in which things completed,
 * never a time. With MNEMO_READER_THREADS=0 (the searches on the event loop) it fails: both wait.
 */
import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/service/ids.js';
import type { ImportedWrite } from '../../src/storage/sqlite/bulk.js';
import { openSqliteStorage } from '../../src/storage/sqlite/open.js';
import { FUSE_AVAILABLE, NO_FUSE_REASON } from '../helpers/mount.js';
import { jsonRequest } from '../helpers/sdk.js';
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
    storeId = ((await jsonRequest(server, 'POST', '/v1/memory_stores', server.adminKey, { name: 'isolation' })).body as { id: string }).id;
    probeId = ((await jsonRequest(server, 'POST', `/v1/memory_stores/${storeId}/memories`, server.adminKey, { path: '/probe.md', content: 'retrieved' })).body as { id: string }).id;
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
    const session = await jsonRequest(server, 'POST', '/v1/sessions', server.adminKey, { resources: [{ type: 'memory_store', memory_store_id: storeId }] });
    hostPath = (session.body as { resources: { host_path: string }[] }).resources[0]!.host_path;
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('does not hold up a mount stat from another process or an API retrieve, which both complete before it', async () => {
    const done: string[] = [];
    // A name the mount has never been asked about, so the kernel has no answer cached for it. The
    // child is started, and says so, before the searches: its start (a python3 on a loaded host can
    // take most of a second) is not part of the race, only its stat, once told to go.
    const child = spawn('python3', ['-c', 'import os, sys\nprint("ready", flush=True)\nsys.stdin.readline()\nos.stat(sys.argv[1])\nprint("stat", flush=True)', join(hostPath, 'probe.md')], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: child.stdout! });
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      lines.once('line', (line) => (line === 'ready' ? resolve() : reject(new Error(`stat child said ${line}`))));
    });
    const statted = new Promise<void>((resolve, reject) => {
      child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`stat child exited ${code}`))));
      lines.once('line', (line) => {
        if (line === 'stat') done.push('stat');
      });
    });

    const search = () =>
      jsonRequest(server, 'GET', `/v1/memory_stores/${storeId}/search?q=heron&limit=100`, server.adminKey).then((r) => {
        done.push('search');
        return r;
      });
    const searches = [search(), search()];
    child.stdin!.end('go\n');
    // Asked only once the stat has been answered: a server stuck in the search answers neither in time.
    const retrieved = statted.then(() =>
      jsonRequest(server, 'GET', `/v1/memory_stores/${storeId}/memories/${probeId}`, server.adminKey).then((r) => {
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

/**
 * Tester's finding (large store, item 3): `ls` of a 20,000-entry directory on a live mount read every
 * child on the serving connection, and held every other mount and request for 0.15–1.5 s. A big
 * directory is now listed on a reader thread. Asserted as ratios to the listing's own time, never a
 * time: the serving thread's longest delay while it listed (mnemo_event_loop_delay_seconds, from the
 * scrape just before) stays under half of it in the best of three runs. Read on the serving thread,
 * it was most of it in every run. The longest `stat` another store's mount answered meanwhile (a
 * second child) is logged, not asserted.
 */
describe.skipIf(!FUSE_AVAILABLE)('a listing of a big directory on a live mount', () => {
  const ENTRIES = 20_000;
  let server: RunningServer;
  let bigPath: string;
  let smallPath: string;

  beforeAll(async () => {
    server = await startServer();
    const big = ((await jsonRequest(server, 'POST', '/v1/memory_stores', server.adminKey, { name: 'big' })).body as { id: string }).id;
    const small = ((await jsonRequest(server, 'POST', '/v1/memory_stores', server.adminKey, { name: 'small' })).body as { id: string }).id;
    await jsonRequest(server, 'POST', `/v1/memory_stores/${small}/memories`, server.adminKey, { path: '/s/note.md', content: 'small' });
    const storage = openSqliteStorage(join(server.dataDir, 'mnemo.db'), { readers: 0 });
    try {
      const now = new Date().toISOString();
      const actor = { type: 'api_actor', apiKeyId: 'apikey_listing_seed' } as const;
      const writes: ImportedWrite[] = Array.from({ length: ENTRIES }, (_, i) => ({
        memoryId: newId('memory'), operation: 'created', path: `/flat/f${String(i).padStart(5, '0')}.md`,
        content: `note ${i} `.repeat(20), versionId: newId('version'), now, actor,
      }));
      storage.importWrites(big, writes);
    } finally {
      await storage.close();
    }
    const session = await jsonRequest(server, 'POST', '/v1/sessions', server.adminKey, {
      resources: [{ type: 'memory_store', memory_store_id: big }, { type: 'memory_store', memory_store_id: small }],
    });
    const paths = (session.body as { resources: { host_path: string }[] }).resources.map((r) => r.host_path);
    bigPath = paths[0]!;
    smallPath = paths[1]!;
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('holds up neither the serving thread nor another store\'s mount for most of its time', async () => {
    // Stats of names never asked about, so each reaches the server; it prints the longest once told to stop.
    const prober = spawn('python3', ['-c', PROBE, join(smallPath, 's')], { stdio: ['pipe', 'pipe', 'inherit'] });
    const probed = new Promise<string>((resolve, reject) => {
      let out = '';
      prober.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      prober.once('error', reject);
      prober.once('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`prober exited ${code}`))));
    });
    await new Promise((r) => setTimeout(r, 300));
    const runs: { seconds: number; delay: number }[] = [];
    for (let i = 0; i < 3; i++) {
      await loopDelayMax(server);
      const { stdout } = await promisify(execFile)('python3', ['-c', LIST, join(bigPath, 'flat')]);
      const delay = await loopDelayMax(server);
      const [count, seconds] = stdout.trim().split(' ').map(Number) as [number, number];
      expect(count).toBe(ENTRIES);
      runs.push({ seconds, delay });
    }
    prober.stdin!.end();
    const worstStat = Number(await probed);
    console.log(`listings ${JSON.stringify(runs)}, longest stat ${worstStat} s`);
    // The best of three, so that one run a busy host stalled (other test files share its 2 cores)
    // does not decide: read on the serving thread, every run held it for 63–93 % of its time.
    expect(Math.min(...runs.map((r) => r.delay / r.seconds))).toBeLessThan(0.5);
  });
});

/** One listing of the directory: its entries and seconds. */
const LIST = `import os, sys, time
t = time.perf_counter()
n = len(os.listdir(sys.argv[1]))
print(n, time.perf_counter() - t)
`;

/** Stats absent names in the directory every 2 ms until stdin closes; prints the longest, in seconds. */
const PROBE = `import os, sys, threading, time
done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
worst, i = 0.0, 0
while not done.is_set():
    t = time.perf_counter()
    try:
        os.stat(os.path.join(sys.argv[1], 'absent-%d' % i))
    except FileNotFoundError:
        pass
    worst, i = max(worst, time.perf_counter() - t), i + 1
    time.sleep(0.002)
print(worst)
`;

async function loopDelayMax(server: RunningServer): Promise<number> {
  const res = await fetch(`${server.url}/metrics`, { headers: { 'x-api-key': server.adminKey } });
  const line = (await res.text()).split('\n').find((l) => l.startsWith('mnemo_event_loop_delay_seconds{stat="max"} '));
  return Number(line!.split(' ')[1]);
}
