/**
 * Appends under contention: several writer processes in several sessions (mounts of one store on
 * one real server) append numbered lines to one file, one open/write/close each, as `echo … >> f`
 * in a loop does. Every close() succeeds and the stored text holds each line exactly once, each
 * writer's lines in the order it wrote them. test/fs/on-postgres/ runs it on PostgreSQL, where an
 * append used to be retried and gave up after 16 losses in a row: 1 to 3 of these 320 closes failed
 * with EBUSY, and their lines were not stored.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { py } from '../helpers/mount.js';
import { rawRequest, sdkClient } from '../helpers/sdk.js';
import { startServer } from '../helpers/server.js';

const fuseAvailable = existsSync('/dev/fuse');

const SESSIONS = 4;
const WRITERS_PER_SESSION = 2;
const LINES = 40;

// Prints how many closes failed and with which errno, and never stops at a failure: the test counts them.
const APPENDER = String.raw`
import errno, os, sys
tag, n = sys.argv[1], int(sys.argv[2])
failed = []
for i in range(1, n + 1):
    try:
        fd = os.open('log.md', os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, f'{tag} line {i}\n'.encode())
        finally:
            os.close(fd)
    except OSError as e:
        failed.append(f'{i}:{errno.errorcode.get(e.errno, e.errno)}')
print(' '.join(failed))
`;

describe.skipIf(!fuseAvailable)('appends under contention', () => {
  it(`${SESSIONS * WRITERS_PER_SESSION} writers in ${SESSIONS} sessions appending to one file each see every close() succeed, and every line is stored once`, async () => {
    const server = await startServer();
    onTestFinished(() => server.stop());
    const client = sdkClient(server.url, server.adminKey);
    const store = await client.beta.memoryStores.create({ name: 'contended' });
    const log = await client.beta.memoryStores.memories.create(store.id, { path: '/log.md', content: 'start\n' });
    const sessions: string[] = [];
    onTestFinished(async () => {
      for (const id of sessions) await rawRequest(server.url, 'DELETE', `/v1/sessions/${id}`, { apiKey: server.adminKey });
    });
    const dirs: string[] = [];
    for (let s = 0; s < SESSIONS; s++) {
      const res = await rawRequest(server.url, 'POST', '/v1/sessions', {
        apiKey: server.adminKey,
        body: JSON.stringify({ resources: [{ type: 'memory_store', memory_store_id: store.id, access: 'read_write' }] }),
      });
      expect(res.status).toBe(200);
      const body = res.body as { id: string; resources: { host_path: string }[] };
      sessions.push(body.id);
      dirs.push(body.resources[0]!.host_path);
    }
    const tags = dirs.flatMap((_, s) => Array.from({ length: WRITERS_PER_SESSION }, (_, w) => `s${s}w${w}`));
    const runs = await Promise.all(tags.map((tag, i) => py(APPENDER, dirs[Math.floor(i / WRITERS_PER_SESSION)]!, [tag, String(LINES)], 50_000)));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    // No close() failed, in any writer.
    expect(runs.map((r) => r.stdout.trim())).toEqual(tags.map(() => ''));

    const stored = await client.beta.memoryStores.memories.retrieve(log.id, { memory_store_id: store.id });
    const lines = (stored.content ?? '').split('\n');
    expect(lines.pop()).toBe('');
    const expected = ['start', ...tags.flatMap((t) => Array.from({ length: LINES }, (_, i) => `${t} line ${i + 1}`))];
    // Each line exactly once: none lost, none doubled.
    expect([...lines].sort()).toEqual([...expected].sort());
    expect(lines[0]).toBe('start');
    for (const t of tags) expect(lines.filter((l) => l.startsWith(`${t} `))).toEqual(expected.filter((l) => l.startsWith(`${t} `)));
  }, 60_000);
});
