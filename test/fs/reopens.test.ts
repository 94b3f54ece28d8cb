/**
 * What an open that found its file gone may open instead of failing (fs/reopens.ts): only a file a
 * stat saw after an open of that name met ESTALE, only of the inode the kernel resolved, only for a
 * second. An injected clock stands for time.
 */
import { describe, expect, it } from 'vitest';
import type { MemoryMeta } from '../../src/index.js';
import { Reopens, type FileNode } from '../../fs/reopens.js';
import { inoOf } from '../../fs/stat.js';

function file(id: string): FileNode {
  return { kind: 'file', draft: null, meta: { id } as MemoryMeta };
}

function clock(): { now: () => number; advance: (ms: number) => void } {
  let t = 1_000_000;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

describe('opens that found their file gone', () => {
  it('a stat before any ESTALE is not noted, and nothing is waited for', () => {
    const r = new Reopens(clock().now);
    expect(r.waiting('/a.md')).toBe(false);
    r.noted('/a.md', file('mem_a'));
    expect(r.found('/a.md', inoOf('mem_a'))).toBeUndefined();
  });

  it("after an ESTALE, the retry's stat is what the retried open of that inode gets, for any open that asks", () => {
    const r = new Reopens(clock().now);
    r.missed('/a.md');
    expect(r.waiting('/a.md')).toBe(true);
    expect(r.waiting('/b.md')).toBe(false);
    const seen = file('mem_a');
    r.noted('/a.md', seen);
    expect(r.found('/a.md', inoOf('mem_a'))).toBe(seen);
    // Two processes may be retrying opens of one name.
    expect(r.found('/a.md', inoOf('mem_a'))).toBe(seen);
    // Another inode (the kernel resolved the name to another file), or one the binding did not note: ESTALE again.
    expect(r.found('/a.md', inoOf('mem_b'))).toBeUndefined();
    expect(r.found('/a.md', 0)).toBeUndefined();
    expect(r.found('/b.md', inoOf('mem_a'))).toBeUndefined();
  });

  it("each stat since the ESTALE counts for the inode it gave the kernel: another process's stat of the name between a retry's lookup and its open hides nothing", () => {
    const r = new Reopens(clock().now);
    r.missed('/a.md');
    const retry = file('mem_a');
    r.noted('/a.md', retry);
    // sed -i reads the name it is about to replace: its stat lands before the retried open.
    r.noted('/a.md', file('mem_b'));
    expect(r.found('/a.md', inoOf('mem_a'))).toBe(retry);
    expect(r.found('/a.md', inoOf('mem_b'))?.meta?.id).toBe('mem_b');
    // Of two stats of one inode, the newer; another ESTALE keeps what was noted.
    const newer = file('mem_a');
    r.noted('/a.md', newer);
    r.missed('/a.md');
    expect(r.found('/a.md', inoOf('mem_a'))).toBe(newer);
  });

  it('a name keeps its last 8 stats', () => {
    const r = new Reopens(clock().now);
    r.missed('/a.md');
    for (let i = 0; i < 9; i++) r.noted('/a.md', file(`mem_${i}`));
    expect(r.found('/a.md', inoOf('mem_0'))).toBeUndefined();
    expect(r.found('/a.md', inoOf('mem_1'))?.meta?.id).toBe('mem_1');
    expect(r.found('/a.md', inoOf('mem_8'))?.meta?.id).toBe('mem_8');
  });

  it('a note serves for a second, and a name whose last ESTALE is a second old is let go', () => {
    const c = clock();
    const r = new Reopens(c.now);
    r.missed('/a.md');
    r.noted('/a.md', file('mem_a'));
    c.advance(1000);
    expect(r.found('/a.md', inoOf('mem_a'))?.meta?.id).toBe('mem_a');
    c.advance(1);
    expect(r.found('/a.md', inoOf('mem_a'))).toBeUndefined();
    // The stat fast path comes back for it.
    expect(r.waiting('/a.md')).toBe(false);
    r.noted('/a.md', file('mem_a'));
    expect(r.found('/a.md', inoOf('mem_a'))).toBeUndefined();
  });

  it('a working copy here is noted by the memory id it had when the stat gave the kernel its inode', () => {
    const r = new Reopens(clock().now);
    r.missed('/a.md');
    const draft = { kind: 'file', draft: { memoryId: 'mem_d' }, meta: null } as unknown as FileNode;
    r.noted('/a.md', draft);
    expect(r.found('/a.md', inoOf('mem_d'))).toBe(draft);
    // A working copy can take another memory's id later (a reader's copy following the file made at its name elsewhere); the kernel still has the old inode.
    draft.draft!.memoryId = 'mem_e';
    expect(r.found('/a.md', inoOf('mem_d'))).toBe(draft);
    expect(r.found('/a.md', inoOf('mem_e'))).toBeUndefined();
  });
});
