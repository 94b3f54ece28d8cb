/**
 * Expiring memories through a real mount (issue 6): an expired memory leaves the mount's listings
 * and reads, its directory goes with it, and the agent can write a new file at its path.
 */
import { describe, expect, it } from 'vitest';
import { FUSE_AVAILABLE, NO_FUSE_REASON, sh, startMount } from '../helpers/mount.js';

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
});
