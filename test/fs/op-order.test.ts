/**
 * The order of one mount's operations (fs/op-queue.ts): the mount is served in this process over a
 * real SQLite file, through a MountService whose save waits for a promise the test holds (as a
 * save over a remote database waits for its round trip); child processes drive the mount. Nothing
 * here touches the mount from this process, not even a child's cwd (a spawn holds this thread
 * until the child has changed into it) or a synchronous cleanup.
 */
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
    expect(finished).toEqual(['writer', 'reader']);
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
});
