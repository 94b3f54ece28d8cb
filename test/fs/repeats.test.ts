/**
 * A mount's log lines with repeats folded (fs/repeats.ts), on vitest's fake clock: the first line
 * is written, repeats within the window are counted, and the count is one line when it ends.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { foldRepeats } from '../../fs/repeats.js';

describe('repeated mount log lines', () => {
  let written: string[];
  beforeEach(() => {
    vi.useFakeTimers();
    written = [];
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes a line once, counts its repeats, and says how many when the window ends', () => {
    const lines = foldRepeats((l) => written.push(l), 10_000);
    for (let i = 0; i < 5; i++) lines.log('save of s/a.md failed');
    expect(written).toEqual(['save of s/a.md failed']);
    vi.advanceTimersByTime(10_000);
    expect(written).toEqual(['save of s/a.md failed', 'save of s/a.md failed (repeated 4 more times in 10 s)']);
  });

  it('keeps folding a loop that goes on: one line per window', () => {
    const lines = foldRepeats((l) => written.push(l), 10_000);
    for (let t = 0; t < 30; t++) {
      lines.log('x');
      vi.advanceTimersByTime(1_000);
    }
    // 30 lines over 30 s: the first in full, then each window's count.
    expect(written).toEqual(['x', 'x (repeated 9 more times in 10 s)', 'x (repeated 10 more times in 10 s)', 'x (repeated 10 more times in 10 s)']);
  });

  it('writes a line again in full once a window passed without it', () => {
    const lines = foldRepeats((l) => written.push(l), 10_000);
    lines.log('x');
    vi.advanceTimersByTime(10_000);
    lines.log('x');
    lines.log('x');
    vi.advanceTimersByTime(10_000);
    expect(written).toEqual(['x', 'x', 'x (repeated once more in 10 s)']);
  });

  it('folds each distinct line on its own', () => {
    const lines = foldRepeats((l) => written.push(l), 10_000);
    for (const l of ['a', 'b', 'a', 'c', 'b', 'a']) lines.log(l);
    expect(written).toEqual(['a', 'b', 'c']);
    vi.advanceTimersByTime(10_000);
    expect(written.slice(3).sort()).toEqual(['a (repeated 2 more times in 10 s)', 'b (repeated once more in 10 s)']);
  });

  it('reports every count at once on flush, and then forgets them', () => {
    const lines = foldRepeats((l) => written.push(l), 10_000);
    lines.log('a');
    lines.log('a');
    lines.log('b');
    lines.flush();
    expect(written).toEqual(['a', 'b', 'a (repeated once more in 10 s)']);
    vi.advanceTimersByTime(20_000);
    lines.log('a');
    expect(written).toHaveLength(4);
  });

  it('keeps at most 1,000 lines counted: the oldest is reported early', () => {
    const lines = foldRepeats((l) => written.push(l), 10_000);
    lines.log('first');
    lines.log('first');
    for (let i = 0; i < 1_000; i++) lines.log(`line ${i}`);
    expect(written).toContain('first (repeated once more in 10 s)');
    expect(written).toHaveLength(1 + 1_000 + 1);
  });
});
