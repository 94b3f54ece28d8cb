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
