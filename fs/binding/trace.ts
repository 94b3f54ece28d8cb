/**
 * @module MNEMO_FUSE_TRACE=<file>: where a mount's time goes, per request kind. The addon counts the
 * requests it hands to JS and how long each held its libfuse thread (the hop to the event loop, the
 * handler, the hop back); the JS side times each handler from its call to its reply, and the reply's
 * wait for the next tick. The summary (JSON, one entry per op, times in ms per request) is written
 * to <file> on SIGUSR2 and when the mount goes. Off (no clock read per request) unless the variable
 * is set: it is for measuring, as in the README's "Performance".
 */
import { writeFileSync } from 'node:fs';

export const TRACE_FILE = process.env['MNEMO_FUSE_TRACE'] || null;

interface OpTimes {
  calls: number;
  handlerNs: bigint;
  tickNs: bigint;
}

/** The addon's per-op request counts, thread nanoseconds, hand-off and wake-up nanoseconds (4 × 35 uint64). */
type ReadNative = (out: BigUint64Array) => void;

const times = new Map<string, OpTimes>();
const natives = new Set<{ read: ReadNative; names: Map<number, string> }>();
let installed = false;

/** Wraps a handler's reply so the call and the reply's tick are timed (only with TRACE_FILE set). */
export function timed<A extends unknown[]>(op: string, reply: (...a: A) => void): { start(): void; reply: (...a: A) => void } {
  let t0 = 0n;
  return {
    start: () => void (t0 = process.hrtime.bigint()),
    reply: (...a: A) => {
      const t1 = process.hrtime.bigint();
      process.nextTick(() => {
        const e = times.get(op) ?? { calls: 0, handlerNs: 0n, tickNs: 0n };
        e.calls += 1;
        e.handlerNs += t1 - t0;
        e.tickNs += process.hrtime.bigint() - t1;
        times.set(op, e);
        reply(...a);
      });
    },
  };
}

/** Registers a mount's native counters; the summary covers every traced mount of the process. */
export function traceNative(read: ReadNative, names: Map<number, string>): () => void {
  const entry = { read, names };
  natives.add(entry);
  if (!installed) {
    installed = true;
    process.on('SIGUSR2', writeTrace);
  }
  return () => {
    writeTrace();
    natives.delete(entry);
  };
}

function writeTrace(): void {
  if (!TRACE_FILE) return;
  const none = { n: 0n, ns: 0n, inNs: 0n, outNs: 0n };
  const requests = new Map<string, typeof none>();
  for (const { read, names } of natives) {
    const buf = new BigUint64Array(140);
    read(buf);
    for (const [i, name] of names) {
      const e = requests.get(name) ?? { ...none };
      e.n += buf[i]!;
      e.ns += buf[35 + i]!;
      e.inNs += buf[70 + i]!;
      e.outNs += buf[105 + i]!;
      requests.set(name, e);
    }
  }
  const ms = (ns: bigint, n: number) => (n === 0 ? 0 : Number(ns) / n / 1e6);
  const out: Record<string, Record<string, number>> = {};
  for (const op of new Set([...requests.keys(), ...times.keys()])) {
    const r = requests.get(op) ?? none;
    const t = times.get(op) ?? { calls: 0, handlerNs: 0n, tickNs: 0n };
    if (r.n === 0n && t.calls === 0) continue;
    const n = Number(r.n);
    out[op] = {
      requests: n, threadMs: ms(r.ns, n), handoffMs: ms(r.inNs, n), wakeMs: ms(r.outNs, n),
      calls: t.calls, handlerMs: ms(t.handlerNs, t.calls), tickMs: ms(t.tickNs, t.calls),
    };
  }
  // From a signal handler and from an unmount: a file that went away or filled up must not take the
  // process (and every mount of it) down. One line on stderr; the next SIGUSR2 tries again.
  try {
    writeFileSync(TRACE_FILE, JSON.stringify(out, null, 1) + '\n');
  } catch (err) {
    process.stderr.write(`mnemo: warn: could not write the FUSE trace to ${TRACE_FILE} (MNEMO_FUSE_TRACE): ${(err as Error).message}\n`);
  }
}
