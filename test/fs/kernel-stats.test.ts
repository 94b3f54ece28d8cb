/**
 * The binding answers a kept file stat itself, on libfuse's thread (fs/kernel-stats.ts), exactly
 * when the getattr handler's fast path would: these tests run with the kernel's attribute cache off
 * (cacheSeconds 0), so every `stat` reaches the mount, and check first that the binding is the one
 * answering, then that each change the handler would see shows in the next stat all the same.
 */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { EVENTUALLY_MS, FUSE_AVAILABLE, NO_FUSE_REASON, run, sh, sleep, startMount, type MountHost } from '../helpers/mount.js';

if (!FUSE_AVAILABLE) console.warn(NO_FUSE_REASON);

interface Kept {
  answered: number;
  kept: number;
}

const answered = async (m: MountHost, path?: string) => (await m.call<Kept>('keptStats', path ? { path } : {})).answered;

/**
 * Sizes `stat` prints for `files`, in one child process, by absolute path from outside the mount:
 * a shell in the mount would stat its directory first, an operation of the handlers', which makes
 * the view look at storage (and the binding's stats with it) before the stat under test.
 */
async function sizes(m: MountHost, ...files: string[]): Promise<string> {
  const r = await run('stat', ['-c', '%s', ...files.map((f) => join(m.mnt, f))], { cwd: m.dir });
  return r.code === 0 ? r.stdout.trim().split('\n').join(' ') : `exit ${r.code}: ${r.stderr.trim()}`;
}

/**
 * Stats `file` until the binding answers one (its poll vouches within 50 ms of the mount's start;
 * the first stat after a change is the handler's): the binding holds the stat from then on.
 */
async function keptByBinding(m: MountHost, file: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    const before = await answered(m);
    await sizes(m, file);
    if ((await answered(m)) > before) return;
    await sleep(20);
  }
  throw new Error(`the binding never answered a stat of ${file}`);
}

describe.skipIf(!FUSE_AVAILABLE)('stats answered by the binding', () => {
  it('a stored file stat-ed twice is answered by the binding the second time', async () => {
    const m = await startMount({ seed: { '/a.md': 'four\n' }, cacheSeconds: 0 });
    await keptByBinding(m, 'a.md');
    const before = await answered(m);
    expect(await sizes(m, 'a.md', 'a.md', 'a.md')).toBe('5 5 5');
    // Each stat is a lookup and, the attributes expiring at once, a getattr: all the binding's.
    expect(await answered(m)).toBeGreaterThanOrEqual(before + 3);
  });

  it('an API write shows in the very next stat', async () => {
    const m = await startMount({ seed: { '/a.md': 'four\n' }, cacheSeconds: 0 });
    for (let round = 0; round < 3; round++) {
      await keptByBinding(m, 'a.md');
      const text = 'x'.repeat(10 + round);
      await m.call('update', { path: '/a.md', content: text });
      expect(await sizes(m, 'a.md'), `round ${round}`).toBe(String(text.length));
    }
  });

  it("another process's write shows within a poll of the change mark", async () => {
    const m = await startMount({ seed: { '/a.md': 'four\n' }, cacheSeconds: 0, holdMs: 0 });
    // A second host on the same SQLite file: its writes are another process's to the first.
    const other = await startMount({ dir: m.dir, store: m.storeId, mountName: 'other', session: 'sesn_other', holdMs: 0 });
    await keptByBinding(m, 'a.md');
    await other.call('update', { path: '/a.md', content: 'written by another process\n' });
    let seen = '';
    // A deadline for the poll (every 50 ms) to be heard, not a time: it is late on a loaded host.
    for (const end = Date.now() + EVENTUALLY_MS; Date.now() < end && seen !== '27'; await sleep(20)) seen = await sizes(m, 'a.md');
    expect(seen).toBe('27');
  });

  it("a file open for writing here shows its working copy's size, not the stored one", async () => {
    // With the kernel's usual timeouts: a stat after they expire is one LOOKUP, whose attributes the
    // kernel then keeps (a GETATTR of an open file gets a handle lent and is the handler's anyway).
    const m = await startMount({ seed: { '/a.md': 'four\n' } });
    for (let i = 0; i < 5; i++) {
      await sizes(m, 'a.md');
      await sleep(30);
    }
    const script = [
      'import sys',
      "f = open('a.md', 'a')",
      "f.write('and more bytes\\n')",
      'f.flush()',
      "print('written', flush=True)",
      'sys.stdin.readline()',
      'f.close()',
    ].join('\n');
    const child = spawn('python3', ['-c', script], { cwd: m.mnt, stdio: ['pipe', 'pipe', 'inherit'] });
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    await new Promise<void>((r) => createInterface({ input: child.stdout! }).once('line', () => r()));
    await sleep(1100);
    // Another process's stat of the name, while the writer holds it open and unsaved.
    expect(await sizes(m, 'a.md')).toBe('20');
    child.stdin!.end('go\n');
    expect(await exited).toBe(0);
    expect(await sizes(m, 'a.md')).toBe('20');
  });

  it('a memory that expires is gone from the next stat after its expiry, though nothing was written', async () => {
    const m = await startMount({ cacheSeconds: 0, movableClock: true });
    await m.call('create', { path: '/soon.md', content: 'short-lived\n', ttlSeconds: 60 });
    // Long enough for the binding to answer, if it kept the stat of a file with an expiry.
    for (let i = 0; i < 5; i++) {
      expect(await sizes(m, 'soon.md')).toBe('12');
      await sleep(30);
    }
    await m.call('advanceClock', { ms: 61_000 });
    expect(await sizes(m, 'soon.md')).toMatch(/No such file/);
  });

  it('a path renamed over by this mount shows the new file at once', async () => {
    const m = await startMount({ seed: { '/a.md': 'four\n', '/b.md': 'a longer text\n' }, cacheSeconds: 0 });
    await keptByBinding(m, 'a.md');
    expect((await sh('mv b.md a.md && stat -c %s a.md', m.mnt)).stdout.trim()).toBe('14');
  });
});
