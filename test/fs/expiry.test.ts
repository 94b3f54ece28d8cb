/**
 * Expiring memories through a real mount (issue 6): an expired memory leaves the mount's listings
 * and reads, its directory goes with it, and the agent can write a new file at its path.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FUSE_AVAILABLE, NO_FUSE_REASON, py, sh, sleep, startMount } from '../helpers/mount.js';
import { tmpDir } from '../helpers/tmp.js';

if (!FUSE_AVAILABLE) console.warn(NO_FUSE_REASON);

describe.skipIf(!FUSE_AVAILABLE)('an expiring memory in a mount', () => {
  it('disappears from ls and cat once expired, and its path takes a new file', async () => {
    const m = await startMount({ seed: { '/keep.md': 'kept\n' }, movableClock: true });
    await m.call('create', { path: '/tmp/note.md', content: 'short-lived\n', ttlSeconds: 1 });
    expect((await sh('cat tmp/note.md', m.mnt)).stdout).toBe('short-lived\n');
    // The host's clock passes the expiry at once.
    await m.call('advanceClock', { ms: 1200 });
    expect((await sh('ls', m.mnt)).stdout).toBe('keep.md\n');
    const cat = await sh('cat tmp/note.md', m.mnt);
    expect(cat.code).not.toBe(0);
    expect(cat.stderr).toContain('No such file or directory');
    expect((await sh('mkdir -p tmp && echo fresh > tmp/note.md && cat tmp/note.md', m.mnt)).stdout).toBe('fresh\n');
    expect(await m.tree()).toEqual({ '/keep.md': 'kept\n', '/tmp/note.md': 'fresh\n' });
  });

  it('a descriptor open when its memory expired, or was deleted through the API, writes nowhere: nothing comes back, and ls no longer lists it', async () => {
    const m = await startMount({ movableClock: true });
    await m.call('create', { path: '/z/exp.md', content: 'expires-soon\n', ttlSeconds: 1 });
    await m.call('create', { path: '/z/del.md', content: 'deleted-by-api\n' });
    await m.call('create', { path: '/z/keep.md', content: 'kept\n' });
    const flags = tmpDir();
    // Opens both for writing, then waits for the go-ahead before it lists, writes and closes.
    const agent = py(
      [
        'import os, sys, time',
        'flags = sys.argv[1]',
        'fds = [os.open(n, os.O_RDWR) for n in ("z/exp.md", "z/del.md")]',
        'open(os.path.join(flags, "ready"), "w").close()',
        'while not os.path.exists(os.path.join(flags, "go")): time.sleep(0.02)',
        'print(sorted(os.listdir("z")))',
        'for fd in fds: os.pwrite(fd, b"X", 0); os.close(fd)',
        'print("closed")',
      ].join('\n'),
      m.mnt,
      [flags],
    );
    while (!existsSync(join(flags, 'ready'))) await sleep(20);
    await m.call('delete', { path: '/z/del.md' });
    await m.call('advanceClock', { ms: 1200 });
    writeFileSync(join(flags, 'go'), '');
    const r = await agent;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("['keep.md']\nclosed\n");
    expect(await m.tree()).toEqual({ '/z/keep.md': 'kept\n' });
    expect((await m.versions()).filter((v) => v.createdBy.type === 'session_actor')).toEqual([]);
  });
});
