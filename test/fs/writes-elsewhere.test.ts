/**
 * Writes made elsewhere (the API, another session's mount) drop the kernel entries they made stale
 * (fs/writes-elsewhere.ts). The mounts here keep names and attributes in the kernel for 30 s
 * (MNEMO_MOUNT_CACHE_SECONDS), so a stat that sees such a change within the tests' 10 s could only
 * have seen it through that drop: with the 1 s default, the timeout would hide a missing one.
 */
import { describe, expect, it } from 'vitest';
import { eventually, FUSE_AVAILABLE, NO_FUSE_REASON, py, sh, startMount } from '../helpers/mount.js';

if (!FUSE_AVAILABLE) console.warn(NO_FUSE_REASON);

const CACHE_SECONDS = 30;

/**
 * Evaluates the python expression `expr` in `cwd` (in one child process) until it is true, for up
 * to 10 s; returns 'ok', or 'stale' and the last value of `show`.
 */
async function until(cwd: string, expr: string, show: string): Promise<string> {
  const script = [
    'import os, time',
    'def q(f):',
    '    try:',
    '        return f()',
    '    except OSError as e:',
    "        return 'error ' + str(e.errno)",
    'end = time.time() + 10',
    `while not (${expr}):`,
    '    if time.time() > end:',
    `        print('stale', ${show}); break`,
    '    time.sleep(0.02)',
    'else:',
    "    print('ok')",
  ].join('\n');
  const r = await py(script, cwd);
  return (r.stdout + r.stderr).trim();
}

const size = (p: string) => `q(lambda: os.stat(${JSON.stringify(p)}).st_size)`;
const exists = (p: string) => `os.path.exists(${JSON.stringify(p)})`;

describe.skipIf(!FUSE_AVAILABLE)('writes made elsewhere drop what the kernel holds of them', () => {
  it('a file deleted through the API is gone from stat before the kernel cache would let it go', async () => {
    const m = await startMount({ seed: { '/a.md': 'one\n' }, cacheSeconds: CACHE_SECONDS });
    expect((await sh('stat -c %s a.md', m.mnt)).stdout).toBe('4\n');
    await m.call('delete', { path: '/a.md' });
    expect(await until(m.mnt, `not ${exists('a.md')}`, size('a.md'))).toBe('ok');
  });

  it("a file changed through the API shows its new size in stat without being opened", async () => {
    const m = await startMount({ seed: { '/a.md': 'one\n' }, cacheSeconds: CACHE_SECONDS });
    expect((await sh('stat -c %s a.md', m.mnt)).stdout).toBe('4\n');
    await m.call('update', { path: '/a.md', content: 'two, longer\n' });
    expect(await until(m.mnt, `${size('a.md')} == 12`, size('a.md'))).toBe('ok');
    expect((await sh('cat a.md', m.mnt)).stdout).toBe('two, longer\n');
  });

  it('a file changed elsewhere again and again shows each new size in stat, not only the first', async () => {
    // After its entry is dropped the kernel forgets the old node, and the next lookup makes a new one.
    const m = await startMount({ seed: { '/a.md': 'x\n' }, cacheSeconds: CACHE_SECONDS });
    for (let n = 1; n <= 6; n++) {
      expect((await sh('stat -c %s a.md', m.mnt)).stdout).toBe(`${n === 1 ? 2 : 10 * (n - 1)}\n`);
      await m.call('update', { path: '/a.md', content: 'y'.repeat(10 * n) });
      expect(await until(m.mnt, `${size('a.md')} == ${10 * n}`, size('a.md')), `change ${n}`).toBe('ok');
    }
  });

  it('a stat that finds a file gone drops its name too: rename(x, x) then fails with ENOENT, as on a disk', async () => {
    // Right after a delete elsewhere, before the follower's drop: the kernel asks for attributes it
    // let go, and without the drop its entry would still answer the rename itself (success).
    const m = await startMount({ seed: {}, cacheSeconds: CACHE_SECONDS });
    const outcomes: string[] = [];
    for (let n = 0; n < 10; n++) {
      await m.call('create', { path: '/x.md', content: `round ${n}\n` });
      expect((await sh('stat -c %s x.md >/dev/null && cat x.md', m.mnt)).stdout).toBe(`round ${n}\n`);
      await m.call('delete', { path: '/x.md' });
      // The drop is queued by the stat's reply and lands about a millisecond later (README,
      // "Freshness"): the rename comes 20 ms after (well before the follower's own drop, about 100 ms).
      const r = await py("import os, time\ne = os.path.exists('x.md')\ntime.sleep(0.02)\ntry:\n    os.rename('x.md', 'x.md'); print(e, 'ok')\nexcept OSError as err:\n    print(e, err.errno)", m.mnt);
      outcomes.push(r.stdout.trim());
    }
    // Either the kernel still had it all (both succeed) or neither: never gone for stat and there for rename.
    for (const o of outcomes) expect(['True ok', 'False 2']).toContain(o);
  });

  it('a file moved through the API leaves its old name and is found at the new one', async () => {
    const m = await startMount({ seed: { '/d/a.md': 'one\n', '/e/keep.md': 'x\n' }, cacheSeconds: CACHE_SECONDS });
    expect((await sh('stat -c %s d/a.md; ls e', m.mnt)).stdout).toBe('4\nkeep.md\n');
    await m.call('rename', { path: '/d/a.md', to: '/e/b.md' });
    expect(await until(m.mnt, `not ${exists('d/a.md')} and ${size('e/b.md')} == 4`, size('d/a.md'))).toBe('ok');
  });

  it('a file that became a directory elsewhere is walked into, not answered ENOTDIR', async () => {
    const m = await startMount({ seed: { '/x.md': 'file\n' }, cacheSeconds: CACHE_SECONDS });
    expect((await sh('stat -c %F x.md', m.mnt)).stdout).toBe('regular file\n');
    await m.call('delete', { path: '/x.md' });
    await m.call('create', { path: '/x.md/inner.md', content: 'inside\n' });
    expect(await until(m.mnt, `${size('x.md/inner.md')} == 7`, size('x.md/inner.md'))).toBe('ok');
    expect((await sh('cat x.md/inner.md; stat -c %F x.md', m.mnt)).stdout).toBe('inside\ndirectory\n');
  });

  it('a directory that became a file elsewhere opens as the file, not EISDIR', async () => {
    const m = await startMount({ seed: { '/y/inner.md': 'inside\n' }, cacheSeconds: CACHE_SECONDS });
    expect((await sh('stat -c %F y; cat y/inner.md', m.mnt)).stdout).toBe('directory\ninside\n');
    await m.call('delete', { path: '/y/inner.md' });
    await m.call('create', { path: '/y', content: 'a file now\n' });
    expect(await until(m.mnt, `q(lambda: open('y').read()) == 'a file now\\n'`, `q(lambda: open('y').read())`)).toBe('ok');
  });

  it('a mount whose kernel knows more than 1,024 files drops the entry of each one changed elsewhere', async () => {
    // The binding finds a file's entry by its inode number among the nodes the kernel was told of:
    // a table of 1,024 slots by node id lost the first files' notes to later ones, so their changes
    // showed only when the kernel's cache let them go.
    const seed: Record<string, string> = {};
    for (let i = 0; i < 1300; i++) seed[`/f${String(i).padStart(4, '0')}.md`] = 'x\n';
    const m = await startMount({ seed, cacheSeconds: CACHE_SECONDS });
    const all = await py("import os\nprint(sum(os.stat('f%04d.md' % i).st_size for i in range(1300)))", m.mnt);
    expect(all.stdout.trim()).toBe('2600');
    const changed = ['f0000.md', 'f0005.md', 'f0100.md', 'f0700.md', 'f1299.md'];
    for (const name of changed) await m.call('update', { path: `/${name}`, content: 'longer now\n' });
    for (const name of changed) expect(await until(m.mnt, `${size(name)} == 11`, size(name)), name).toBe('ok');
  }, 60_000);

  it("another session's save shows in this mount's stat without an open", async () => {
    const m = await startMount({ seed: { '/s.md': 'one\n' }, cacheSeconds: CACHE_SECONDS, also: { other: 'sesn_other' } });
    const other = `${m.dir}/other`;
    expect((await sh('stat -c %s s.md', m.mnt)).stdout).toBe('4\n');
    expect((await sh("printf 'from the other session\\n' > s.md", other)).code).toBe(0);
    expect(await until(m.mnt, `${size('s.md')} == 23`, size('s.md'))).toBe('ok');
    expect((await sh('cat s.md', m.mnt)).stdout).toBe('from the other session\n');
  });
  it('a process with two mounts of a store acts once on a redaction another process made, and says so once', async () => {
    const m = await startMount({ seed: { '/s.md': 'secret\n' }, session: 'sesn_a', also: { 'mnt-b': 'sesn_b' }, holdMs: 0 });
    const b = `${m.dir}/mnt-b`;
    for (const dir of [m.mnt, b]) expect((await sh('cat s.md', dir)).stdout).toBe('secret\n');
    // Another process on the same SQLite file rewrites the file and redacts the first version.
    const admin = await startMount({ dir: m.dir, store: m.storeId, mountName: 'mnt-admin', holdMs: 0 });
    await admin.call('update', { path: '/s.md', content: 'rotated\n' });
    const first = (await admin.versions()).find((v) => v.operation === 'created' && v.path === '/s.md')!;
    await admin.call('redact', { versionId: first.id });
    const said = `version ${first.id} of store ${m.storeId} was redacted elsewhere`;
    await eventually(async () => expect(m.stderr()).toContain(said));
    // A later write elsewhere that both mounts have seen: each of them has looked at the log since.
    await admin.call('create', { path: '/later.md', content: 'later\n' });
    for (const dir of [m.mnt, b]) await eventually(async () => expect((await sh('cat later.md', dir)).stdout).toBe('later\n'));
    expect(m.stderr().split(said).length - 1).toBe(1);
    for (const dir of [m.mnt, b]) expect((await sh('cat s.md', dir)).stdout).toBe('rotated\n');
  });
});
