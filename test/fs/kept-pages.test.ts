/**
 * The kernel keeps a file's pages across opens (keep_cache) only while they are the stored version
 * this mount served or saved, and a save of unchanged bytes asks nothing of storage: neither may
 * ever show bytes that are not the stored version's, or lose a version that should be made.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FUSE_AVAILABLE, NO_FUSE_REASON, py, sh, sleep, startMount } from '../helpers/mount.js';

if (!FUSE_AVAILABLE) console.warn(NO_FUSE_REASON);

describe.skipIf(!FUSE_AVAILABLE)("the kernel's pages of a file", () => {
  it('a file written and read back here still shows an API write of the same size on the next open', async () => {
    const m = await startMount();
    expect((await sh("printf 'aaaa\\n' > f.md; cat f.md; cat f.md", m.mnt)).stdout).toBe('aaaa\naaaa\n');
    await m.call('update', { path: '/f.md', content: 'bbbb\n' });
    expect((await sh('cat f.md; cat f.md', m.mnt)).stdout).toBe('bbbb\nbbbb\n');
    await m.stop();
  });

  it('a refused save leaves the stored text to read, not the bytes the kernel was sent', async () => {
    const m = await startMount();
    expect((await sh("printf 'hello\\n' > r.md; cat r.md", m.mnt)).stdout).toBe('hello\n');
    // Not UTF-8: the close fails (the shell ignores it) and nothing is stored.
    await sh("printf '\\377\\376\\375\\374\\373\\n' > r.md", m.mnt);
    expect((await sh('cat r.md', m.mnt)).stdout).toBe('hello\n');
    expect((await m.versions()).filter((v) => v.path === '/r.md')).toHaveLength(1);
    await m.stop();
  });

  it('appends merged with another session are what the next read here shows', async () => {
    const m = await startMount({ also: { other: 'sess_other' } });
    const other = join(m.dir, 'other');
    expect((await sh("printf 'a\\n' >> log.md; cat log.md", m.mnt)).stdout).toBe('a\n');
    expect((await sh('cat log.md', other)).stdout).toBe('a\n');
    const go = join(m.dir, 'go');
    const opened = join(m.dir, 'opened');
    // Opened for appending before the other session's append lands, written after it.
    const held = py(
      [
        'import os, time',
        "f = open('log.md', 'a')",
        `open(${JSON.stringify(opened)}, 'w').close()`,
        `while not os.path.exists(${JSON.stringify(go)}): time.sleep(0.02)`,
        "f.write('c\\n'); f.close()",
        "print(open('log.md').read(), end='')",
      ].join('\n'),
      other,
    );
    while (!existsSync(opened)) await sleep(20);
    await sh("printf 'b\\n' >> log.md", m.mnt);
    writeFileSync(go, '');
    const r = await held;
    expect(r.stdout, r.stderr).toBe('a\nb\nc\n');
    expect((await sh('cat log.md', other)).stdout).toBe('a\nb\nc\n');
    await m.stop();
  });
});

describe.skipIf(!FUSE_AVAILABLE)('a save of unchanged bytes', () => {
  it('adds no version, and a rewrite with other bytes of the same size does', async () => {
    const m = await startMount();
    await sh("printf 'same\\n' > u.md; printf 'same\\n' > u.md; printf 'same\\n' > u.md", m.mnt);
    expect((await m.versions()).filter((v) => v.path === '/u.md')).toHaveLength(1);
    expect((await sh("printf 'diff\\n' > u.md; cat u.md", m.mnt)).stdout).toBe('diff\n');
    expect((await m.versions()).filter((v) => v.path === '/u.md')).toHaveLength(2);
    await m.stop();
  });

  it('writing the stored bytes back after an API write meanwhile stores them again', async () => {
    const m = await startMount({ seed: { '/s.md': 'base\n' } });
    const opened = join(m.dir, 'opened');
    const go = join(m.dir, 'go');
    const held = py(
      [
        'import os, time',
        "f = open('s.md', 'r+')",
        'first = f.read()',
        `open(${JSON.stringify(opened)}, 'w').close()`,
        `while not os.path.exists(${JSON.stringify(go)}): time.sleep(0.02)`,
        'f.seek(0); f.truncate(); f.write(first); f.close()',
        "print(open('s.md').read(), end='')",
      ].join('\n'),
      m.mnt,
    );
    while (!existsSync(opened)) await sleep(20);
    await m.call('update', { path: '/s.md', content: 'api!\n' });
    writeFileSync(go, '');
    const r = await held;
    expect(r.stdout, r.stderr).toBe('base\n');
    const log = (await m.versions()).map((v) => `${v.operation} ${v.createdBy.type}`);
    expect(log).toEqual(['created api_actor', 'modified api_actor', 'modified session_actor']);
    await m.stop();
  });
});
