/**
 * The order of one mount's operations (fs/op-queue.ts): the mount is served in this process over a
 * real SQLite file, through a MountService whose save waits for a promise the test holds (as a
 * save over a remote database waits for its round trip); child processes drive the mount. Nothing
 * here touches the mount from this process, not even a child's cwd (a spawn holds this thread
 * until the child has changed into it) or a synchronous cleanup.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createMountManager } from '../../fs/index.js';
import type { Mounter, MountService } from '../../src/index.js';
import { openCore, seedStore } from '../helpers/core.js';
import { FUSE_AVAILABLE, isMounted, NO_FUSE_REASON, py, run, sh } from '../helpers/mount.js';

/** A promise and the function that settles it. */
function latch(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

/** Mounts the store in this process, unmounted (after `unblock`) and removed when the test finishes, without touching the mount from here. */
async function mountFor(manager: Mounter, storeId: string, service: MountService, unblock: () => void): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-order-'));
  const mnt = join(dir, 'mnt');
  onTestFinished(async () => {
    unblock();
    await manager.unmountAll();
    if (isMounted(mnt)) await run('fusermount3', ['-uz', mnt]);
    await rm(dir, { recursive: true, force: true });
  });
  await manager.mount({ storeId, hostPath: mnt, readOnly: false, actor: { type: 'session_actor', sessionId: 'sesn_order' }, service });
  return mnt;
}

describe.skipIf(!FUSE_AVAILABLE)('the order of a mount\'s operations', () => {
  if (!FUSE_AVAILABLE) it.skip(NO_FUSE_REASON, () => {});

  it('answers operations that arrive while an earlier one awaits a slow save after it, in arrival order', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/b.md': 'b\n' });
    const base = core.service;
    const saveStarted = latch();
    const saveMayFinish = latch();
    const service: MountService = {
      ...base,
      saveMemoryAt: async (...a) => {
        saveStarted.open();
        await saveMayFinish.promise;
        return base.saveMemoryAt(...a);
      },
    };
    const arrived: { op: string; path: string; queued: boolean }[] = [];
    const readerArrived = latch();
    const manager = createMountManager({
      onOperation: (op, path, queued) => {
        arrived.push({ op, path, queued });
        if (path === '/b.md') readerArrived.open();
      },
    });
    const mnt = await mountFor(manager, store.id, service, saveMayFinish.open);
    const finished: string[] = [];
    const writer = sh(`echo one > ${mnt}/a.md`, '/').then((r) => (finished.push('writer'), r));
    await saveStarted.promise;
    // The writer's close is inside its save now; the reader's first operation arrives behind it.
    const reader = sh(`cat ${mnt}/b.md`, '/').then((r) => (finished.push('reader'), r));
    await readerArrived.promise;
    expect(arrived.at(-1)).toMatchObject({ path: '/b.md', queued: true });
    expect(finished).toEqual([]);

    saveMayFinish.open();
    const [w, r] = await Promise.all([writer, reader]);
    expect(w.code, w.stderr).toBe(0);
    expect(r).toMatchObject({ code: 0, stdout: 'b\n' });
    // Once the save is done the mount answers the writer's close and then the reader's lookup,
    // but which child process exits first is the scheduler's choice (it reversed once under CI
    // load), so the order is pinned above, by the reader's operation waiting in the queue.
    expect(finished.sort()).toEqual(['reader', 'writer']);
    expect((await sh(`cat ${mnt}/a.md`, '/')).stdout).toBe('one\n');
  });

  it('lets other operations through while an fsync waits for the disk, its save done', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/b.md': 'b\n' });
    const base = core.service;
    const syncStarted = latch();
    const diskMayFinish = latch();
    const service: MountService = {
      ...base,
      durability: {
        sync: async () => {
          syncStarted.open();
          await diskMayFinish.promise;
          await base.durability.sync();
        },
      },
    };
    const manager = createMountManager();
    const mnt = await mountFor(manager, store.id, service, diskMayFinish.open);
    const finished: string[] = [];
    const syncer = py(`import os\nfd = os.open('${mnt}/a.md', os.O_WRONLY | os.O_CREAT)\nos.write(fd, b'one')\nos.fsync(fd)\nos.close(fd)`, '/').then((r) => (finished.push('syncer'), r));
    await syncStarted.promise;
    const reader = await sh(`cat ${mnt}/b.md; echo two > ${mnt}/c.md`, '/');
    finished.push('reader');
    expect(reader).toMatchObject({ code: 0, stdout: 'b\n' });

    diskMayFinish.open();
    expect((await syncer).code).toBe(0);
    expect(finished).toEqual(['reader', 'syncer']);
    expect((await sh(`cat ${mnt}/a.md ${mnt}/c.md`, '/')).stdout).toBe('onetwo\n');
  });
  it('an open of a name a rename is replacing waits for the rename and opens, reads and fstats the file it put there', async () => {
    const core = await openCore();
    const store = await seedStore(core.service, core.caller, { '/log.md': 'old\n' });
    const base = core.service;
    let hold = false;
    const saveStarted = latch();
    const saveMayFinish = latch();
    const service: MountService = {
      ...base,
      saveMemoryAt: async (...a) => {
        if (hold) {
          saveStarted.open();
          await saveMayFinish.promise;
        }
        return base.saveMemoryAt(...a);
      },
    };
    const arrived: string[] = [];
    const readerArrived = latch();
    let renaming = false;
    const manager = createMountManager({
      onOperation: (op, path) => {
        if (!renaming || path !== '/log.md') return;
        arrived.push(op);
        readerArrived.open();
      },
    });
    const mnt = await mountFor(manager, store.id, service, saveMayFinish.open);
    expect((await sh(`printf 'new!\n' > ${mnt}/log.md.tmp`, '/')).code).toBe(0);
    // The reader looks the name up (the kernel keeps that lookup for entry_timeout), then waits:
    // its open names the old file, whose name the rename takes meanwhile.
    const reader = spawn('python3', ['-c', `import os, sys\nos.stat('${mnt}/log.md')\nprint('looked', flush=True)\nsys.stdin.readline()\nfd = os.open('${mnt}/log.md', os.O_RDONLY)\nst = os.fstat(fd)\nprint(os.read(fd, 100).decode(), st.st_size, end='')\nos.close(fd)`], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const looked = latch();
    reader.stdout.on('data', (b: Buffer) => ((out += b.toString()), out.includes('looked\n') && looked.open()));
    reader.stderr.on('data', (b: Buffer) => (err += b.toString()));
    const exited = new Promise<number | null>((r) => reader.on('close', r));
    await looked.promise;
    hold = renaming = true;
    const renamer = sh(`mv ${mnt}/log.md.tmp ${mnt}/log.md`, '/');
    await saveStarted.promise;
    reader.stdin.write('\n');
    // Without the binding's open by name (fuse-native.c "Replaced while opening"), libfuse holds
    // this open until the rename is done and then answers ESTALE; the kernel's one retry hid that
    // here, but not when a second rename followed.
    await readerArrived.promise;
    expect(arrived[0]).toBe('open');
    saveMayFinish.open();
    expect((await renamer).code).toBe(0);
    expect(await exited, err).toBe(0);
    expect(out).toBe('looked\nnew!\n 5');
  });
});
