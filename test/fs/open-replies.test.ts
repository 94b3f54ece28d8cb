/**
 * What an open's reply tells the kernel about the size it caches (fs/ops.ts `freshReply` and
 * `statServed`): the mount's handlers called as the binding calls them, in the order a race under
 * load delivers them, over a real SQLite store. No kernel is involved, so the order is exact: each
 * rule here was found by the record stress (test/stress/records.ts) about once in 50,000 reads,
 * which no mount-driven test reproduces on demand.
 */
import { describe, expect, it } from 'vitest';
import { OPEN_DROP_ATTRS, OPEN_KEEP_CACHE, type FuseOps, type FuseStat } from '../../fs/binding/fuse.js';
import { ContentCache } from '../../fs/content-cache.js';
import { createContext } from '../../fs/context.js';
import { LocalBudget } from '../../fs/local-budget.js';
import { createOps } from '../../fs/ops.js';
import { inoOf } from '../../fs/stat.js';
import { openCore, type Core } from '../helpers/core.js';

const O_RDONLY = 0;

/** A store holding /a.md, and the handlers of one read-write mount of it (never mounted). */
async function handlers(): Promise<{ core: Core; storeId: string; memoryId: string; ops: FuseOps }> {
  const core = await openCore();
  const store = await core.service.createStore(core.caller, { name: 'replies', description: '', metadata: {} });
  const memory = await core.service.createMemory(core.caller, store.id, { path: '/a.md', content: 'one\n' });
  const ctx = createContext({
    storeId: store.id, service: core.service, actor: { type: 'session_actor', sessionId: 'sesn_replies' },
    log: () => {}, readOnly: false, contents: new ContentCache(1 << 20), serverLocal: new LocalBudget(1 << 20, 'MNEMO_LOCAL_MAX_BYTES'),
    onOperation: undefined, mountLocalMaxBytes: 1 << 20,
  });
  return { core, storeId: store.id, memoryId: memory.id, ops: createOps(ctx) };
}

function stat(ops: FuseOps, path: string): Promise<FuseStat> {
  return new Promise((resolve, reject) => ops.getattr!(path, (code, st) => (code === 0 ? resolve(st!) : reject(new Error(`stat: ${code}`))), 0, false));
}

/** The inode number a stat of `path` gives the kernel (the binding notes it for the node). */
async function inoAt(ops: FuseOps, path: string): Promise<number> {
  const { ino } = await stat(ops, path);
  if (ino === undefined) throw new Error(`stat of ${path} gave no inode number`);
  return ino;
}

/** Opens `path` for reading as the kernel's node numbered `ino` and releases it; the open's reply flags. */
async function openFlags(ops: FuseOps, path: string, ino: number): Promise<number> {
  const [fh, flags] = await new Promise<[number, number]>((resolve, reject) =>
    ops.open!(path, O_RDONLY, (code, fh, of) => (code === 0 ? resolve([fh!, of ?? 0]) : reject(new Error(`open: ${code}`))), ino),
  );
  await new Promise<void>((resolve) => ops.release!(path, fh, () => resolve()));
  return flags;
}

describe("an open's reply about the kernel's cached size", () => {
  it('an open right after the open that told the kernel this version trusts its size and keeps its pages', async () => {
    const { ops } = await handlers();
    const ino = await inoAt(ops, '/a.md');
    // Nothing told the kernel which version it holds yet: the first open drops its attributes.
    expect(await openFlags(ops, '/a.md', ino) & OPEN_DROP_ATTRS).toBe(OPEN_DROP_ATTRS);
    const again = await openFlags(ops, '/a.md', ino);
    expect(again & OPEN_DROP_ATTRS).toBe(0);
    expect(again & OPEN_KEEP_CACHE).toBe(OPEN_KEEP_CACHE);
  });

  it('a stat that answers a version changed elsewhere does not let the next open trust the size the kernel holds', async () => {
    const { core, storeId, memoryId, ops } = await handlers();
    const ino = await inoAt(ops, '/a.md');
    await openFlags(ops, '/a.md', ino);
    expect(await openFlags(ops, '/a.md', ino) & OPEN_DROP_ATTRS).toBe(0);
    await core.service.updateMemory(core.caller, storeId, memoryId, { content: 'two, and longer\n' });
    // The kernel may keep an older stat's reply that landed after this one (two stats in flight),
    // so a stat never names the version whose size the kernel holds; only an open does.
    expect((await stat(ops, '/a.md')).size).toBe('two, and longer\n'.length);
    expect(await openFlags(ops, '/a.md', ino) & OPEN_DROP_ATTRS).toBe(OPEN_DROP_ATTRS);
  });

  it("an open of a node the kernel got for another file drops that node's attributes, though this mount told the kernel the path's version", async () => {
    const { ops } = await handlers();
    const ino = await inoAt(ops, '/a.md');
    await openFlags(ops, '/a.md', ino);
    expect(await openFlags(ops, '/a.md', ino) & OPEN_DROP_ATTRS).toBe(0);
    // A node libfuse made inside a retried open, for a file that held the name before: its cached
    // size is that file's, whatever this mount told the kernel of the path.
    expect(await openFlags(ops, '/a.md', inoOf('mem_another_file')) & OPEN_DROP_ATTRS).toBe(OPEN_DROP_ATTRS);
    // The binding did not note the node (0): nothing is known against it.
    expect(await openFlags(ops, '/a.md', 0) & OPEN_DROP_ATTRS).toBe(0);
  });
});
