/**
 * Diffs run on the diff thread (src/service/diff-thread.ts), not on the thread that serves every
 * mount and request: two 100 KiB versions of short lines took 140–290 ms of it. Counted in turns of
 * the event loop while the diff is made, so nothing here is a timing.
 */
import { applyPatch } from 'diff';
import { describe, expect, it } from 'vitest';
import { runDiffJob } from '../../src/service/diff-jobs.js';
import { openCore, seedStore } from '../helpers/core.js';

/** About 100 KiB of two-byte lines; `shift` changes which digit each line holds. */
const shortLines = (shift: number) => Array.from({ length: 51_000 }, (_, i) => `${(i * shift) % 10}\n`).join('').slice(0, 102_000);

/** Counts the event loop's turns until `work` settles. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let spinning = true;
  const spin = () => {
    turns++;
    if (spinning) setImmediate(spin);
  };
  setImmediate(spin);
  try {
    return { result: await work(), turns };
  } finally {
    spinning = false;
  }
}

describe('diffs off the serving thread', () => {
  it('a diff of two 100 KiB versions leaves the event loop turning, and is the diff the same job makes inline', async () => {
    const core = await openCore();
    const [before, after] = [shortLines(1), shortLines(7)];
    const store = await seedStore(core.service, core.caller, {});
    const created = await core.service.createMemory(core.caller, store.id, { path: '/big.txt', content: before });
    const updated = await core.service.updateMemory(core.caller, store.id, created.id, { content: after });

    const { result, turns } = await turnsDuring(() => core.service.diffVersion(core.caller, store.id, updated.versionId, null));
    // Made inline, the diff held the loop from start to end: a handful of turns at most (the reads).
    expect(turns).toBeGreaterThan(100);
    expect(applyPatch(before, result.unified)).toBe(after);
    const inline = runDiffJob({ kind: 'patch', from: before, to: after, fromName: '/big.txt', toName: '/big.txt', fromHeader: created.versionId, toHeader: updated.versionId, context: 4 });
    expect(result).toMatchObject({ unified: inline.unified, minimal: inline.minimal });

    const runs = await turnsDuring(() => core.service.lineDiff(before, after));
    expect(runs.turns).toBeGreaterThan(100);
    expect(runs.result).toEqual(runDiffJob({ kind: 'runs', from: before, to: after }));
  });
});
