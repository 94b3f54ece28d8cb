/**
 * Two sessions' mounts of one store (served by one host process, as in production, on one SQLite
 * file) plus API writers at once: no acknowledged write is lost and the history holds every change
 * in commit order.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FUSE_AVAILABLE, NO_FUSE_REASON, eventually, py, sh, startMount } from '../helpers/mount.js';

const WRITER = String.raw`
import os, sys
tag, n = sys.argv[1], int(sys.argv[2])
os.makedirs(tag, exist_ok=True)
for i in range(n):
    with open(f'{tag}/f{i}.md', 'w') as f: f.write(f'{tag} {i}\n')
    with open('shared.md', 'a') as f: f.write(f'{tag} {i}\n')
print('done')
`;

if (!FUSE_AVAILABLE) console.warn(NO_FUSE_REASON);

describe.skipIf(!FUSE_AVAILABLE)('two sessions and the API on one store', () => {
  it('loses no acknowledged write and records every change in commit order', async () => {
    // Sessions share one server process, as in production: two mounts served by one host.
    const a = await startMount({ seed: { '/shared.md': '' }, session: 'sesn_a', also: { 'mnt-b': 'sesn_b' } });
    const b = { mnt: join(a.dir, 'mnt-b') };
    const api = (async () => {
      for (let i = 0; i < 20; i++) await a.call('create', { path: `/api/f${i}.md`, content: `api ${i}\n` });
    })();
    const [ra, rb] = await Promise.all([py(WRITER, a.mnt, ['sa', '25']), py(WRITER, b.mnt, ['sb', '25']), api]);
    expect(ra.stdout, ra.stderr).toBe('done\n');
    expect(rb.stdout, rb.stderr).toBe('done\n');
    // A save at release lands just after close() returns: wait for each writer's last file and
    // append (a lost one never comes, and the test fails), then check everything.
    const tree = await eventually(async () => {
      const t = await a.tree();
      expect([t['/sa/f24.md'], t['/sb/f24.md'], t['/shared.md']?.split('\n').filter(Boolean).length]).toEqual(['sa 24\n', 'sb 24\n', 50]);
      return t;
    });
    for (let i = 0; i < 25; i++) {
      expect(tree[`/sa/f${i}.md`]).toBe(`sa ${i}\n`);
      expect(tree[`/sb/f${i}.md`]).toBe(`sb ${i}\n`);
    }
    for (let i = 0; i < 20; i++) expect(tree[`/api/f${i}.md`]).toBe(`api ${i}\n`);
    // Both mounts see everything the other wrote.
    expect((await sh('cat sb/f24.md api/f19.md', a.mnt)).stdout).toBe('sb 24\napi 19\n');
    expect((await sh('cat sa/f24.md', b.mnt)).stdout).toBe('sa 24\n');

    const versions = await a.versions();
    const bySession = (s: string) => versions.filter((v) => v.createdBy.type === 'session_actor' && v.createdBy.sessionId === s);
    expect(bySession('sesn_a').filter((v) => v.path !== '/shared.md')).toHaveLength(25);
    expect(bySession('sesn_b').filter((v) => v.path !== '/shared.md')).toHaveLength(25);
    // Appends from two mounts to one file all survive (appends are replayed onto the newest
    // version), and each is one version, in commit order.
    const lines = tree['/shared.md']!.split('\n').filter(Boolean);
    expect(lines).toHaveLength(50);
    expect(lines.filter((l) => l.startsWith('sa ')).map((l) => Number(l.slice(3)))).toEqual([...Array(25).keys()]);
    expect(lines.filter((l) => l.startsWith('sb ')).map((l) => Number(l.slice(3)))).toEqual([...Array(25).keys()]);
    const shared = versions.filter((v) => v.path === '/shared.md' && v.operation === 'modified');
    expect(shared).toHaveLength(50);
    shared.forEach((v, i) => expect(v.content!.split('\n').filter(Boolean)).toHaveLength(i + 1));
  });
});
