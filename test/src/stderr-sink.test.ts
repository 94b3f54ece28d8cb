/**
 * The process log's stderr sink (src/cli/stderr-sink.ts) on a real pipe: a line goes out at once
 * while the reader keeps up; what a full pipe will not take waits, in order, and goes out once the
 * reader catches up; past the backlog's cap a line is dropped, counted and reported once the
 * backlog drains; a reader that is gone costs lines, never a throw.
 */
import { describe, expect, it } from 'vitest';
import { StderrSink } from '../../src/cli/stderr-sink.js';
import { fifo } from '../helpers/fifo.js';
import { eventually } from '../helpers/mount.js';

const line = (i: number) => `${String(i).padStart(6, '0')} ${'x'.repeat(1000)}\n`;
const numbers = (text: string) => text.split('\n').filter((l) => l !== '').map((l) => Number(l.slice(0, 6)));

describe('the stderr sink', () => {
  it('writes each line at once while the pipe takes it', () => {
    const pipe = fifo();
    const sink = new StderrSink(pipe.writeFd);
    sink.write(line(1));
    sink.write(line(2));
    expect(numbers(pipe.drain())).toEqual([1, 2]);
  });

  it('holds what a full pipe will not take and writes it, in order, once the reader catches up', async () => {
    const pipe = fifo();
    const sink = new StderrSink(pipe.writeFd, 1 << 20);
    // 300 KiB into a 64 KiB pipe nobody reads yet: every write returns, nothing is dropped.
    for (let i = 0; i < 300; i++) sink.write(line(i));
    expect(sink.droppedLines()).toBe(0);
    let got = pipe.drain();
    expect(numbers(got).length).toBeLessThan(300);
    await eventually(async () => {
      got += pipe.drain();
      expect(numbers(got)).toHaveLength(300);
    });
    expect(numbers(got)).toEqual([...Array(300).keys()]);
  });

  it('drops lines past its backlog, counts them, and says how many once the backlog drains', async () => {
    const pipe = fifo();
    const sink = new StderrSink(pipe.writeFd, 10 * 1024);
    const reports: number[] = [];
    sink.onDropped = (n) => reports.push(n);
    for (let i = 0; i < 200; i++) sink.write(line(i));
    const dropped = sink.droppedLines();
    expect(dropped).toBeGreaterThan(0);
    let got = '';
    await eventually(async () => {
      got += pipe.drain();
      expect(numbers(got).length + dropped).toBe(200);
      expect(reports).toEqual([dropped]);
    });
    // What was kept is in order: the pipe's lines, then the backlog's; the rest were dropped.
    const kept = numbers(got);
    expect(kept).toEqual([...kept].sort((a, b) => a - b));
    expect(kept[0]).toBe(0);
  });

  it('loses lines, not the process, when the reader is gone', () => {
    const pipe = fifo();
    const sink = new StderrSink(pipe.writeFd);
    pipe.closeReader();
    expect(() => sink.write(line(1))).not.toThrow();
    expect(sink.droppedLines()).toBe(1);
  });

  it('gives up on a reader that does not come back when asked to flush before an exit', async () => {
    const pipe = fifo();
    const sink = new StderrSink(pipe.writeFd, 1 << 20);
    for (let i = 0; i < 100; i++) sink.write(line(i));
    // Returns (the backlog is still there: nobody read); with a reader it would have written it all.
    sink.flushSync(200);
    let got = pipe.drain();
    expect(numbers(got).length).toBeLessThan(100);
    // The rest still goes out to a reader that comes back (and nothing is left to write once the pipe closes).
    await eventually(async () => {
      got += pipe.drain();
      expect(numbers(got)).toEqual([...Array(100).keys()]);
    });
  });
});
