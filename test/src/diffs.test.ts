/**
 * Diffs run on the diff thread (src/service/diff-thread.ts), not on the thread that serves every
 * mount and request: two 100 KiB versions of short lines took 140–290 ms of it. Measured as the
 * share of its time the event loop was busy while the diff was made (Node's event-loop
 * utilization: waiting for the thread's answer is idle, however loaded the host), not as a timing.
 */
import { performance } from 'node:perf_hooks';
import { applyPatch } from 'diff';
import { describe, expect, it } from 'vitest';
import { runDiffJob } from '../../src/service/diff-jobs.js';
import { createDiffThread } from '../../src/service/diff-thread.js';
import type { LineDiff } from '../../src/domain/line-diff.js';
import { openCore, seedStore } from '../helpers/core.js';

/** About 100 KiB of two-byte lines; `shift` changes which digit each line holds. */
const shortLines = (shift: number) => Array.from({ length: 51_000 }, (_, i) => `${(i * shift) % 10}\n`).join('').slice(0, 102_000);

/** The share of the time until `work` settles that this thread's event loop was busy (0 to 1). */
async function busyDuring<T>(work: () => Promise<T>): Promise<{ result: T; busy: number }> {
  const start = performance.eventLoopUtilization();
  const result = await work();
  return { result, busy: performance.eventLoopUtilization(start).utilization };
}

describe('diffs off the serving thread', () => {
  it('a diff of two 100 KiB versions leaves the event loop idle, and is the diff the same job makes inline', async () => {
    const core = await openCore();
    const [before, after] = [shortLines(1), shortLines(7)];
    const store = await seedStore(core.service, core.caller, {});
    const created = await core.service.createMemory(core.caller, store.id, { path: '/big.txt', content: before });
    const updated = await core.service.updateMemory(core.caller, store.id, created.id, { content: after });

    const { result, busy } = await busyDuring(() => core.service.diffVersion(core.caller, store.id, updated.versionId, null));
    // Made inline, the diff held the loop from start to end (busy near 1); handed to the thread, it is mostly idle, waiting (0.03-0.45 measured on a loaded host).
    expect(busy).toBeLessThan(0.8);
    expect(applyPatch(before, result.unified)).toBe(after);
    const inline = runDiffJob({ kind: 'patch', from: before, to: after, fromName: '/big.txt', toName: '/big.txt', fromHeader: created.versionId, toHeader: updated.versionId, context: 4 });
    expect(result).toMatchObject({ unified: inline.unified, minimal: inline.minimal });

    // The console's line runs come back as 51,000 strings, whose copy into this thread is work of its
    // own (a busy share up to 0.9 on a loaded host): only their equality is pinned here.
    expect(await core.service.lineDiff(before, after)).toEqual(runDiffJob({ kind: 'runs', from: before, to: after }));
  });
});

/** `n` one-digit lines, `(i * i) % 10`: about 2 bytes each, and every line matches a tenth of the others (the search's hard case). */
const digitLines = (n: number) => Array.from({ length: n }, (_, i) => `${(i * i) % 10}\n`);

/**
 * `lines` with `points` changes spread evenly over them, in turn a line replaced, a line removed and
 * a line added, and how many lines that removes plus adds (the smallest diff needs no more).
 */
function edited(lines: string[], points: number): { text: string; edits: number } {
  const step = Math.floor(lines.length / points);
  const out: string[] = [];
  let edits = 0;
  lines.forEach((line, i) => {
    if (i % step !== step >> 1) return void out.push(line);
    const turn = Math.floor(i / step) % 3;
    if (turn === 0) out.push(`changed ${i}\n`);
    else if (turn === 2) out.push(line, `added ${i}\n`);
    edits += turn === 0 ? 2 : 1;
  });
  return { text: out.join(''), edits };
}

/** What a diff's runs give back: the old text (kept and removed lines) and the new one (kept and added). */
function sides(diff: LineDiff): { from: string; to: string } {
  const pick = (kind: 'removed' | 'added') => diff.runs.filter((r) => r.kind === 'same' || r.kind === kind).flatMap((r) => r.lines).join('');
  return { from: pick('removed'), to: pick('added') };
}

describe('diffs made inline, where no diff thread runs (the 20 ms search budget)', () => {
  const long = digitLines(50_000);
  const within = edited(long, 60);
  const past = edited(long, 2_000);
  const cases = [
    { name: '60 changes over 50,000 lines (within the 200-line edit bound)', from: long.join(''), to: within.text, edits: within.edits },
    { name: '2,000 changes over 50,000 lines (past the edit bound)', from: long.join(''), to: past.text, edits: past.edits },
    {
      name: 'changes at the first and last lines too, neither text ending in a newline',
      from: `head\n${long.join('')}tail`, to: `HEAD\n${within.text}tail, changed`, edits: within.edits + 4,
    },
    { name: 'the old text ending in a newline and the new one not', from: long.join(''), to: within.text.slice(0, -1), edits: within.edits + 2 },
  ];

  it.each(cases)('a long text with many changes gets a diff that applies, the smallest one whenever it says minimal: $name', async ({ from, to, edits }) => {
    const thread = createDiffThread(null);
    try {
      const patch = await thread.run({ kind: 'patch', from, to, fromName: '/long.txt', toName: '/long.txt', fromHeader: 'v1', toHeader: 'v2', context: 3 });
      expect(applyPatch(from, patch.unified)).toBe(to);
      const changedLines = patch.unified.split('\n').slice(2).filter((l) => l.startsWith('+') || l.startsWith('-')).length;
      if (patch.minimal) expect(changedLines).toBeLessThanOrEqual(edits);

      const runs = await thread.run({ kind: 'runs', from, to });
      expect(sides(runs)).toEqual({ from, to });
      const removedOrAdded = runs.runs.filter((r) => r.kind !== 'same');
      if (runs.minimal) {
        expect(removedOrAdded.reduce((n, r) => n + r.lines.length, 0)).toBeLessThanOrEqual(edits);
      } else {
        // The search gave up: the lines between the common first and last ones, removed, then added.
        expect(removedOrAdded.map((r) => r.kind)).toEqual(['removed', 'added']);
      }
      // Past the edit bound no search can be minimal, however fast the host.
      if (edits > 200) expect([patch.minimal, runs.minimal]).toEqual([false, false]);
    } finally {
      thread.close();
    }
  });
});
