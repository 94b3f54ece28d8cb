/**
 * A server whose stderr nobody reads (a paused pager, a stuck log shipper, a parent busy
 * elsewhere) keeps serving: its log lines wait or are dropped (src/cli/stderr-sink.ts), its mounts
 * and API answer, and SIGTERM still ends it. Before, a full stderr pipe froze the serving thread
 * for good: a close() through the mount never returned and every request hung.
 */
import { existsSync } from 'node:fs';

import { describe, expect, it, onTestFinished } from 'vitest';
import { fifo } from '../helpers/fifo.js';
import { run } from '../helpers/mount.js';
import { jsonRequest } from '../helpers/sdk.js';
import { startServer } from '../helpers/server.js';

/**
 * Each refused close logs one warning line (~250 bytes): 600 of them are twice a pipe's 64 KiB.
 * Each is another file's, since repeats of one line are folded (fs/repeats.ts).
 */
const REFUSED_CLOSES = `
import os, sys
refused = 0
for i in range(600):
    p = os.path.join(sys.argv[1], 'x%d.md' % i)
    with open(p, 'wb') as f: f.write(b'abc')
    fd = os.open(p, os.O_WRONLY)
    os.pwrite(fd, b'\\xff', 1)
    try: os.close(fd)
    except OSError: refused += 1
print(refused)
`;

describe.skipIf(!existsSync('/dev/fuse'))('a server whose stderr nobody reads', () => {
  it('keeps answering its mount and its API, and exits on SIGTERM', async () => {
    const pipe = fifo();
    const server = await startServer({ stderrFd: pipe.writeFd });
    onTestFinished(() => server.stop());
    const store = (await jsonRequest(server, 'POST', '/v1/memory_stores', server.adminKey, { name: 'unread' })).body as { id: string };
    const session = await jsonRequest(server, 'POST', '/v1/sessions', server.adminKey, { resources: [{ type: 'memory_store', memory_store_id: store.id }] });
    const mount = (session.body as { resources: { host_path: string }[] }).resources[0]!.host_path;

    // Every close is refused (the byte splits no character: not UTF-8) and logged.
    const refused = await run('python3', ['-c', REFUSED_CLOSES, mount], { timeoutMs: 60_000 });
    expect(refused.stdout.trim()).toBe('600');
    // 300 request lines more, through the API.
    for (let i = 0; i < 30; i++) {
      const batch = await Promise.all(Array.from({ length: 10 }, () => jsonRequest(server, 'GET', '/v1/memory_stores', server.adminKey)));
      expect(batch.map((r) => r.status)).toEqual(Array(10).fill(200));
    }
    expect((await run('bash', ['-c', 'echo kept > note.md && stat -c %s note.md'], { cwd: mount })).stdout.trim()).toBe('5');
    const listed = (await jsonRequest(server, 'GET', `/v1/memory_stores/${store.id}/memories`, server.adminKey)).body as { data: { path: string }[] };
    const paths = listed.data.map((m) => m.path);
    expect(paths.slice(0, 3)).toEqual(['/note.md', '/x0.md', '/x1.md']);

    // Nothing was dropped: 250 KiB is well inside the 8 MiB a slow reader is given.
    const metrics = await fetch(`${server.url}/metrics`, { headers: { 'x-api-key': server.adminKey } }).then((r) => r.text());
    expect(metrics).toMatch(/^mnemo_log_lines_dropped_total 0$/m);

    await server.stop();
    expect(server.exit()).toEqual({ code: 0, signal: null });
    // What the pipe holds is whole JSON lines, the first ones the server wrote.
    const first = pipe.drain().split('\n')[0]!;
    expect(JSON.parse(first)).toMatchObject({ level: 'info', msg: expect.stringContaining('mnemo') });
  });
});
