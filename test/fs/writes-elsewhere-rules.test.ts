/**
 * Which kernel entries a write made elsewhere drops (fs/writes-elsewhere.ts), over a real SQLite
 * store and the service, with the kernel's side recorded: the mount's own session's writes drop
 * nothing (the kernel saw them), other writers' drop the file's entry, and a new memory drops the
 * entry at its path only where the mount showed a directory.
 */
import { describe, expect, it } from 'vitest';
import { DirTable } from '../../fs/dirs.js';
import { ROOT_INO, inoOf } from '../../fs/stat.js';
import { followWritesElsewhere } from '../../fs/writes-elsewhere.js';
import type { Caller } from '../../src/domain/types.js';
import type { MountReader } from '../../src/index.js';
import { eventually } from '../helpers/mount.js';
import { openCore } from '../helpers/core.js';

/** A follower over a fresh store, its reader passed through `wrap` (a fault or a count); drops and log lines recorded. */
async function setup(wrap: (real: MountReader) => MountReader = (real) => real) {
  const core = await openCore();
  const store = await core.service.createStore(core.caller, { name: 's', description: '', metadata: {} });
  const own: Caller = { workspaceId: core.caller.workspaceId, actor: { type: 'session_actor', sessionId: 'sesn_own' } };
  const other: Caller = { workspaceId: core.caller.workspaceId, actor: { type: 'session_actor', sessionId: 'sesn_other' } };
  const dirs = new DirTable(0);
  const dropped: string[] = [];
  const kernel = {
    invalidateFile: (ino: number, done: () => void) => (dropped.push(`file ${ino}`), done()),
    invalidateName: (dirIno: number, name: string, done: () => void) => (dropped.push(`name ${dirIno}/${name}`), done()),
  };
  const lines: string[] = [];
  // The start's commit number is read before any write below: waited for, not slept for (50 ms was
  // not always enough on a loaded host, and a write before it is not one the follower drops).
  let started!: () => void;
  const read = new Promise<void>((r) => (started = r));
  const real = core.service.mountReader(store.id);
  const reader = wrap({ ...real, lastChange: () => real.lastChange().finally(started) });
  const stop = followWritesElsewhere({ reader, actor: own.actor, onCommit: core.service.onCommit, dirs, kernel: () => kernel, log: (l) => lines.push(l), lookMs: 5 });
  await read;
  return { core, storeId: store.id, own, other, dirs, dropped, lines, stop };
}

describe('what a write made elsewhere drops from the kernel', () => {
  it("drops nothing for the mount's own session, and the file's entry for another writer", async () => {
    const { core, storeId, own, other, dropped, stop } = await setup();
    try {
      await core.service.saveMemoryAt(own, storeId, { path: '/mine.md', content: 'one', memoryId: 'mem_mine' });
      await core.service.saveMemoryAt(own, storeId, { path: '/mine.md', content: 'two', memoryId: 'mem_unused' });
      await core.service.moveMemory(own, storeId, 'mem_mine', '/moved.md');
      await core.service.saveMemoryAt(other, storeId, { path: '/moved.md', content: 'theirs', memoryId: 'mem_unused2' });
      const api = await core.service.createMemory(core.caller, storeId, { path: '/api.md', content: 'x' });
      await core.service.deleteMemory(core.caller, storeId, api.id);
      await eventually(async () => expect(dropped).toHaveLength(2));
      // Another session's change of mem_mine, and the API's delete; the API's create drops nothing (no directory was shown there).
      expect(dropped).toEqual([`file ${inoOf('mem_mine')}`, `file ${inoOf(api.id)}`]);
    } finally {
      stop();
    }
  });

  it('a new memory drops the entry at its path where the mount showed a directory', async () => {
    const { core, storeId, dirs, dropped, stop } = await setup();
    try {
      const dIno = dirs.get('/d').ino;
      dirs.get('/d/sub');
      await core.service.createMemory(core.caller, storeId, { path: '/d/sub', content: 'a file where a directory was' });
      await core.service.createMemory(core.caller, storeId, { path: '/d/plain.md', content: 'no directory here' });
      await core.service.createMemory(core.caller, storeId, { path: '/top', content: 'x' });
      await eventually(async () => expect(dropped).toHaveLength(1));
      await new Promise((r) => setTimeout(r, 50));
      expect(dropped).toEqual([`name ${dIno}/sub`]);
      dirs.get('/top2');
      await core.service.createMemory(core.caller, storeId, { path: '/top2', content: 'y' });
      await eventually(async () => expect(dropped).toEqual([`name ${dIno}/sub`, `name ${ROOT_INO}/top2`]));
    } finally {
      stop();
    }
  });

  it("reads nothing while the mount's own session is all that writes, and reads once another writer commits", async () => {
    let reads = 0;
    const { core, storeId, own, stop } = await setup((real) => ({ ...real, changesAfter: (seq, limit) => (reads++, real.changesAfter(seq, limit)) }));
    try {
      for (let i = 0; i < 20; i++) {
        await core.service.saveMemoryAt(own, storeId, { path: `/f${i}.md`, content: `text ${i}`, memoryId: `mem_${i}` });
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(reads).toBe(0);
      await core.service.createMemory(core.caller, storeId, { path: '/api.md', content: 'x' });
      await eventually(async () => expect(reads).toBeGreaterThan(0));
    } finally {
      stop();
    }
  });

  it('a store it cannot read is said once and retried until it reads again, and nothing is missed meanwhile', async () => {
    let down = false;
    // The real reader, with its page reads failing while `down` (a database that went away).
    const { core, storeId, dropped, lines, stop } = await setup((real) => ({
      ...real,
      changesAfter: (seq, limit) => (down ? Promise.reject(new Error('database unavailable')) : real.changesAfter(seq, limit)),
    }));
    try {
      down = true;
      const a = await core.service.createMemory(core.caller, storeId, { path: '/a.md', content: 'x' });
      await core.service.deleteMemory(core.caller, storeId, a.id);
      await eventually(async () => expect(lines).toHaveLength(1));
      await new Promise((r) => setTimeout(r, 200));
      expect(lines).toEqual([expect.stringMatching(/^mnemo fs: cannot read the store's changes .*database unavailable.*; retrying$/)]);
      expect(dropped).toEqual([]);
      down = false;
      await eventually(async () => expect(dropped).toEqual([`file ${inoOf(a.id)}`]));
      expect(lines[1]).toMatch(/reading the store's changes again/);
      expect(lines).toHaveLength(2);
    } finally {
      stop();
    }
  });

  it('stops reading when stopped, and a point-in-time mount follows nothing', async () => {
    const { core, storeId, dropped, stop } = await setup();
    stop();
    const m = await core.service.createMemory(core.caller, storeId, { path: '/a.md', content: 'x' });
    await core.service.deleteMemory(core.caller, storeId, m.id);
    await new Promise((r) => setTimeout(r, 100));
    expect(dropped).toEqual([]);
    const past = followWritesElsewhere({
      reader: core.service.mountReader(storeId, new Date().toISOString()),
      onCommit: core.service.onCommit,
      actor: { type: 'session_actor', sessionId: 'sesn_past' },
      dirs: new DirTable(0),
      kernel: () => { throw new Error('a point-in-time mount must not touch the kernel'); },
      log: () => {},
      lookMs: 5,
    });
    await new Promise((r) => setTimeout(r, 50));
    past();
  });
});
