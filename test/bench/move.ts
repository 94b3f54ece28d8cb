/**
 * @module The bench's directory-move figure: `mv` of a directory of 20,000 memories of 4 KiB in a
 * served SQLite store's mount, with a mount of another store stat-ing files it has never looked at,
 * and the server's event-loop delay, against the same while idle. The move is one transaction on a
 * reader thread's connection (src/storage/sqlite/readers.ts), where on the serving thread it held
 * every mount and request for seconds. `BENCH_ONLY=move npm run bench` runs it alone.
 */
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/server.js';
import { fillStore } from './delete.js';
import { pick } from './http.js';
import { loopDelay, statAll } from './isolation.js';
import { fmt, table, type Check } from './report.js';
import { startMnemo, type Mnemo } from './targets.js';

const MEMORIES = 20_000;
const STATTED = 300;

export async function moveSection(quick: boolean, log: (s: string) => void): Promise<{ lines: string[]; found: Check[] }> {
  const dir = makeTempDir('mnemo-bench-move-');
  let m: Mnemo | null = null;
  try {
    const memories = quick ? 5_000 : MEMORIES;
    const moved = await fillStore(join(dir, 'mnemo.db'), memories);
    log(`move: ${fmt(memories)} memories of 4 KiB written`);
    m = await startMnemo(dir);
    const kept = await m.createStore('bench kept');
    for (let i = 0; i < STATTED * 3; i++) await m.api.call('POST', `/v1/memory_stores/${kept}/memories`, { path: `/k/${i}.md`, content: `kept ${i}` });
    const mover = await m.mountSession(moved);
    const mnt = await m.mountSession(kept);
    const paths = (from: number) => Array.from({ length: 100 }, (_, i) => `${mnt}/k/${(from + i) % (STATTED * 3)}.md`);
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    // The seeded store's search indexing, which the server does in short turns at its start.
    await new Promise((resolve) => setTimeout(resolve, quick ? 3000 : 10_000));

    await loopDelay(m);
    const idle = sorted(await statAll(paths(0), 0.002));
    const idleLoop = await loopDelay(m);

    const started = performance.now();
    let moveMs: number | null = null;
    const move = new Promise<void>((resolve, reject) =>
      execFile('mv', [join(mover, 'd'), join(mover, 'e')], (err) => {
        moveMs = performance.now() - started;
        if (err) reject(err);
        else resolve();
      }),
    );
    // Stats (each file once: the mount has never looked at it) until mv has exited.
    const during: number[] = [];
    let from = 100;
    while (moveMs === null) {
      during.push(...(await statAll(paths(from), 0.002)));
      from = (from + 100) % (STATTED * 3);
    }
    await move;
    const busyLoop = await loopDelay(m);
    const busy = sorted(during);
    log(`move: mv took ${fmt(moveMs!, 1)} ms`);

    const rows = [
      ['idle', '—', fmt(pick(idle, 0.5), 2), fmt(pick(idle, 0.99), 2), fmt(idleLoop.p99, 1), fmt(idleLoop.max, 1)],
      [`moving ${fmt(memories)} memories`, fmt(moveMs!, 1), fmt(pick(busy, 0.5), 2), fmt(pick(busy, 0.99), 2), fmt(busyLoop.p99, 1), fmt(busyLoop.max, 1)],
    ];
    const found: Check[] = [
      { what: `mount stat p99 < 20 ms while a directory of ${fmt(memories)} memories of 4 KiB is moved`, ok: pick(busy, 0.99) < 20, detail: `${fmt(pick(busy, 0.99), 2)} ms (idle ${fmt(pick(idle, 0.99), 2)} ms; mv ${fmt(moveMs!, 1)} ms)` },
    ];
    return {
      lines: [
        `### Directory move (SQLite: mv of a directory of ${fmt(memories)} memories of 4 KiB in a served store's mount; a mount of another store stat-ing, in ms)\n`,
        table(['phase', 'mv ms', 'stat p50', 'stat p99', 'loop delay p99', 'loop delay max'], rows),
        '',
        `The move is one transaction on a reader thread's connection; the serving connection's writers wait for it, its reads do not. On the serving thread (MNEMO_READER_THREADS=0) a 20,000-memory move held every stat for its whole length: 2.5–3.6 s on the 2-core host.\n`,
      ],
      found,
    };
  } finally {
    if (m) await m.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
