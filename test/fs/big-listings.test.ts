/**
 * A live mount's readdir of a directory of more than 4,096 entries (listed for that readdir and not
 * kept): storage hands over the names alone, sorted, and the mount merges its own in (a directory
 * made in the mount, a file not saved yet). What `ls -f` (readdir's own order), `ls`, `ls -l` and
 * `find` show through child processes is what they showed when the serving thread got every
 * entry's metadata and sorted the names itself; so is a listing made while the directory changes.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/service/ids.js';
import type { ImportedWrite } from '../../src/storage/sqlite/bulk.js';
import { openSqliteStorage } from '../../src/storage/sqlite/open.js';
import { FUSE_AVAILABLE, NO_FUSE_REASON, py, run } from '../helpers/mount.js';
import { jsonRequest } from '../helpers/sdk.js';
import { startServer, type RunningServer } from '../helpers/server.js';

if (!FUSE_AVAILABLE) console.warn(NO_FUSE_REASON);

/** Files f0000.md… beside entries whose path order is not their name order ("notes/" after "notes.md"; UTF-8 puts 😀 after ｅ, UTF-16 before). */
const PLAIN = 5000;
const ODD: Record<string, 'file' | 'dir'> = { 'notes.md': 'file', notes: 'dir', 'notes-old.md': 'file', '😀.md': 'file', 'ｅ.md': 'file', Z: 'file', 'a b': 'dir', 'gone.md': 'file' };

describe.skipIf(!FUSE_AVAILABLE)('a listing of a directory of more than 4,096 entries on a live mount', () => {
  let server: RunningServer;
  let storeId: string;
  let big: string;
  let goneId = '';
  /** Every name in /big and what it is, as storage holds it (gone.md deleted through the API). */
  const kinds = new Map<string, 'file' | 'dir'>();

  beforeAll(async () => {
    server = await startServer();
    storeId = ((await jsonRequest(server, 'POST', '/v1/memory_stores', server.adminKey, { name: 'big listing' })).body as { id: string }).id;
    // Seeded through the bulk path on a connection of the test's own (WAL: beside the server's).
    const storage = openSqliteStorage(join(server.dataDir, 'mnemo.db'), { readers: 0 });
    try {
      const now = new Date().toISOString();
      const actor = { type: 'api_actor', apiKeyId: 'apikey_listing_seed' } as const;
      const paths = Array.from({ length: PLAIN }, (_, i) => `/big/f${String(i).padStart(4, '0')}.md`);
      for (const [name, kind] of Object.entries(ODD)) paths.push(kind === 'file' ? `/big/${name}` : `/big/${name}/inner.md`);
      const writes: ImportedWrite[] = paths.map((path) => ({ memoryId: newId('memory'), operation: 'created', path, content: `at ${path}`, versionId: newId('version'), now, actor }));
      storage.importWrites(storeId, writes);
      goneId = writes.find((w) => w.path === '/big/gone.md')!.memoryId;
    } finally {
      await storage.close();
    }
    expect((await jsonRequest(server, 'DELETE', `/v1/memory_stores/${storeId}/memories/${goneId}`, server.adminKey)).status).toBe(200);
    for (let i = 0; i < PLAIN; i++) kinds.set(`f${String(i).padStart(4, '0')}.md`, 'file');
    for (const [name, kind] of Object.entries(ODD)) if (name !== 'gone.md') kinds.set(name, kind);
    const session = await jsonRequest(server, 'POST', '/v1/sessions', server.adminKey, { resources: [{ type: 'memory_store', memory_store_id: storeId }] });
    big = join((session.body as { resources: { host_path: string }[] }).resources[0]!.host_path, 'big');
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('ls -f, ls, ls -l and find list every entry once, in readdir\'s order, with its type, deleted memories left out', async () => {
    const names = [...kinds.keys()];
    const readdirOrder = ['.', '..', ...[...names].sort()];
    expect((await run('ls', ['-f', big])).stdout.split('\n').slice(0, -1)).toEqual(readdirOrder);
    const byBytes = [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect((await run('ls', [big], { env: { ...process.env, LC_ALL: 'C' } })).stdout.split('\n').slice(0, -1)).toEqual(byBytes);
    const long = (await run('ls', ['-l', '--quoting-style=literal', big], { env: { ...process.env, LC_ALL: 'C' } })).stdout.split('\n').slice(1, -1);
    expect(long.map((l) => [l.split(/ +/).slice(8).join(' '), l[0]])).toEqual(byBytes.map((n) => [n, kinds.get(n) === 'dir' ? 'd' : '-']));
    for (const [type, kind] of [['f', 'file'], ['d', 'dir']] as const) {
      const found = await run('find', [big, '-mindepth', '1', '-maxdepth', '1', '-type', type, '-printf', '%f\\n']);
      expect(found.stdout.split('\n').slice(0, -1).sort()).toEqual(names.filter((n) => kinds.get(n) === kind).sort());
    }
  });

  it('lists a directory made in the mount and a file not saved yet among the stored names, in order, with their types', async () => {
    // One child: makes the directory, opens a new file and writes it, lists (the file still open), then closes it.
    const r = await py(`import json, os, sys
os.mkdir(os.path.join(sys.argv[1], 'local dir'))
f = open(os.path.join(sys.argv[1], 'notes.mdx'), 'w')
f.write('draft')
f.flush()
entries = sorted((e.name, e.is_dir()) for e in os.scandir(sys.argv[1]))
print(json.dumps([os.listdir(sys.argv[1]), [e for e in entries if e[0] in ('local dir', 'notes.mdx', 'notes', 'notes.md')]]))
f.close()
os.unlink(os.path.join(sys.argv[1], 'notes.mdx'))
os.rmdir(os.path.join(sys.argv[1], 'local dir'))`, big, [big]);
    expect(r.stderr).toBe('');
    const [listed, typed] = JSON.parse(r.stdout) as [string[], [string, boolean][]];
    expect(listed).toEqual([...kinds.keys(), 'local dir', 'notes.mdx'].sort());
    expect(typed).toEqual([['local dir', true], ['notes', true], ['notes.md', false], ['notes.mdx', false]]);
  });

  it('lists every entry that stays, once and in order, while others are made and deleted through the API', async () => {
    const lister = py(`import json, os, sys
print(json.dumps([os.listdir(sys.argv[1]) for _ in range(6)]))`, big, [big], 60_000);
    const made: string[] = [];
    for (let i = 0; i < 30; i++) {
      const m = (await jsonRequest(server, 'POST', `/v1/memory_stores/${storeId}/memories`, server.adminKey, { path: `/big/new-${i}.md`, content: String(i) })).body as { id: string };
      made.push(m.id);
      if (i % 2 === 1) expect((await jsonRequest(server, 'DELETE', `/v1/memory_stores/${storeId}/memories/${made[i - 1]}`, server.adminKey)).status).toBe(200);
    }
    const r = await lister;
    expect(r.stderr).toBe('');
    for (const listing of JSON.parse(r.stdout) as string[][]) {
      expect(listing).toEqual([...listing].sort());
      expect(new Set(listing).size).toBe(listing.length);
      const stored = listing.filter((n) => !n.startsWith('new-'));
      expect(stored).toEqual([...kinds.keys()].sort());
      for (const n of listing.filter((x) => x.startsWith('new-'))) expect(n).toMatch(/^new-([0-9]|[12][0-9])\.md$/);
    }
  });
});
