/**
 * What an open that found its file gone may open instead of failing (fs/reopens.ts): only a file a
 * stat saw after an open of that name met ESTALE, only the inode the kernel resolved, only for a
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

  it("only the newest file a stat found counts (the kernel's one inode for the name has its size); a stat that found nothing, or another ESTALE, keeps it", () => {
    const r = new Reopens(clock().now);
    r.missed('/a.md');
    r.noted('/a.md', file('mem_a'));
    r.noted('/a.md', file('mem_b'));
    expect(r.found('/a.md', inoOf('mem_a'))).toBeUndefined();
    expect(r.found('/a.md', inoOf('mem_b'))?.meta?.id).toBe('mem_b');
    r.missed('/a.md');
    expect(r.found('/a.md', inoOf('mem_b'))?.meta?.id).toBe('mem_b');
    const newer = file('mem_b');
    r.noted('/a.md', newer);
    expect(r.found('/a.md', inoOf('mem_b'))).toBe(newer);
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

  it('a working copy here is noted by its memory id', () => {
    const r = new Reopens(clock().now);
    r.missed('/a.md');
    const draft = { kind: 'file', draft: { memoryId: 'mem_d' }, meta: null } as unknown as FileNode;
    r.noted('/a.md', draft);
    expect(r.found('/a.md', inoOf('mem_d'))).toBe(draft);
  });
});
