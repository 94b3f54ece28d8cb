/**
 * A create or mkdir is answered with the new node's attributes (native/fuse "getattr after create"):
 * libfuse asks for them right after every create and mkdir, and the addon answers from the reply
 * instead of handing the serving thread a second request. The mount is served in this process (its operations are
 * watched through `onOperation`); a Python child drives it and never this process.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createMountManager } from '../../fs/index.js';
import { openCore, seedStore } from '../helpers/core.js';
import { FUSE_AVAILABLE, isMounted, NO_FUSE_REASON, run } from '../helpers/mount.js';

const CREATE_THEN_WAIT = `
import os, sys
os.umask(0)
fd = os.open(sys.argv[1] + '/notes/new.md', os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o640)
print('created', flush=True)
sys.stdin.readline()
st = os.fstat(fd)
os.write(fd, b'hello\\n')
os.close(fd)
again = os.stat(sys.argv[1] + '/notes/new.md')
print(oct(st.st_mode), st.st_uid, st.st_gid, st.st_size, st.st_ino == again.st_ino, again.st_size, flush=True)
`;

const MKDIR_THEN_WAIT = `
import os, sys
os.umask(0)
os.mkdir(sys.argv[1] + '/notes/sub', 0o750)
print('made', flush=True)
sys.stdin.readline()
st = os.stat(sys.argv[1] + '/notes/sub')
os.mkdir(sys.argv[1] + '/notes/sub/deeper')
again = os.stat(sys.argv[1] + '/notes/sub')
print(oct(st.st_mode), st.st_uid, st.st_nlink, again.st_nlink, st.st_ino == again.st_ino, flush=True)
`;

/** A mount of a small store served in this process, watching the operations on `watched`; the child runs `script`. */
async function mountWatching(watched: string, script: string) {
  const core = await openCore();
  const store = await seedStore(core.service, core.caller, { '/notes/old.md': 'old\n' });
  const ops: string[] = [];
  const manager = createMountManager({ onOperation: (op, path) => void (path === watched && ops.push(op)) });
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-create-'));
  const mnt = join(dir, 'mnt');
  onTestFinished(async () => {
    await manager.unmountAll();
    if (isMounted(mnt)) await run('fusermount3', ['-uz', mnt]);
    await rm(dir, { recursive: true, force: true });
  });
  await manager.mount({ storeId: store.id, hostPath: mnt, readOnly: false, actor: { type: 'session_actor', sessionId: 'sesn_create' }, service: core.service });
  const child = spawn('python3', ['-c', script, mnt], { stdio: ['pipe', 'pipe', 'pipe'] });
  onTestFinished(() => void child.kill());
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => String((await lines.next()).value);
  return { ops, next, go: () => child.stdin.write('go\n') };
}

describe.skipIf(!FUSE_AVAILABLE)('a create or mkdir answered with its attributes', () => {
  if (!FUSE_AVAILABLE) it.skip(NO_FUSE_REASON, () => {});

  it('makes a directory with one request to the serving thread for its stat (the lookup), and the stat it reports is the directory\'s', async () => {
    const { ops, next, go } = await mountWatching('/notes/sub', MKDIR_THEN_WAIT);
    expect(await next()).toBe('made');
    // The lookup that found no such name, then the mkdir; no stat after it (before: a second 'stat').
    expect(ops).toEqual(['stat', 'mkdir']);
    go();
    const [mode, uid, nlink, nlinkAfter, sameIno] = (await next()).split(' ');
    expect(mode).toBe('0o40750');
    expect(Number(uid)).toBe(process.getuid!());
    expect([nlink, nlinkAfter]).toEqual(['2', '3']);
    expect(sameIno).toBe('True');
  });

  it('creates a file with one request to the serving thread for its stat (the lookup), and the stat it reports is the file\'s', async () => {
    const { ops, next, go } = await mountWatching('/notes/new.md', CREATE_THEN_WAIT);
    expect(await next()).toBe('created');
    // The lookup that found no such name, then the create; no stat after it (before: a second 'stat').
    expect(ops).toEqual(['stat', 'open']);

    go();
    const [mode, uid, gid, size, sameIno, sizeAfter] = (await next()).split(' ');
    expect(mode).toBe('0o100640');
    expect([Number(uid), Number(gid)]).toEqual([process.getuid!(), process.getgid!()]);
    expect(size).toBe('0');
    expect(sameIno).toBe('True');
    expect(sizeAfter).toBe('6');
  });
});
