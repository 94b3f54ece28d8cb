/**
 * @module The bench's change feed figure (issue 15): the end-to-end delay from sending a write to
 * receiving its event over server-sent events, on a real server with a real HTTP client: alone, and
 * with four writers beside it. `BENCH_ONLY=feed npm run bench` runs it alone.
 */
import { openEvents } from '../helpers/sse.js';
import { pick } from './http.js';
import { fmt, table, type Check } from './report.js';
import { startMnemo } from './targets.js';

/** Writes sent and streamed before the measured ones, per case. */
const WARM_UP = 20;

export async function feedSection(quick: boolean, log: (s: string) => void): Promise<{ lines: string[]; found: Check[] }> {
  const writes = quick ? 100 : 1000;
  const mnemo = await startMnemo();
  try {
    const rows: string[][] = [];
    const found: Check[] = [];
    for (const writers of [0, 4]) {
      log(`feed: ${writes} writes, ${writers} other writers`);
      const storeId = await mnemo.createStore(`bench feed ${writers}`);
      const stream = await openEvents(`${mnemo.server.url}/v1/memory_stores/${storeId}/changes`, { 'x-api-key': mnemo.server.adminKey });
      let busy = writers > 0;
      const others = Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; busy; i++) await mnemo.api.call('POST', `/v1/memory_stores/${storeId}/memories`, { path: `/other/${w}/${i}.md`, content: `${i}` });
      });
      const delays: number[] = [];
      const afterAnswer: number[] = [];
      try {
        // The first writes of a stream warm it up (the reader thread's first reads, the JIT): not
        // counted, or a quick run's p99 (its second-slowest of 100) is one of them.
        for (let i = -WARM_UP; i < writes; i++) {
          const started = performance.now();
          const m = await mnemo.api.call<{ memory_version_id: string }>('POST', `/v1/memory_stores/${storeId}/memories`, { path: `/mine/${i}.md`, content: `${i}` });
          const answered = performance.now();
          for (;;) {
            const e = await stream.next();
            if ((JSON.parse(e.data) as { memory_version: { id: string } }).memory_version.id === m.memory_version_id) break;
          }
          if (i < 0) continue;
          delays.push(performance.now() - started);
          afterAnswer.push(performance.now() - answered);
        }
      } finally {
        busy = false;
        await Promise.all(others);
        await stream.close();
      }
      delays.sort((a, b) => a - b);
      afterAnswer.sort((a, b) => a - b);
      const p50 = pick(delays, 0.5);
      const p99 = pick(delays, 0.99);
      rows.push([writers === 0 ? 'one writer' : `beside ${writers} writers`, fmt(writes), fmt(p50, 2), fmt(p99, 2), fmt(pick(afterAnswer, 0.5), 2), fmt(pick(afterAnswer, 0.99), 2)]);
      if (writers === 0) found.push({ what: 'change feed: write → event over SSE p99 < 50 ms', ok: p99 < 50, detail: `${fmt(p99, 2)} ms` });
    }
    return {
      lines: [
        '### Change feed (ms; from sending a write to receiving its event over server-sent events, and from the write\'s answer to the event)\n',
        table(['case', 'writes', 'write → event p50', 'p99', 'answer → event p50', 'p99'], rows),
        '',
      ],
      found,
    };
  } finally {
    await mnemo.stop();
  }
}
