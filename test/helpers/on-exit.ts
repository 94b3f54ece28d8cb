/**
 * @module Cleanups of the vitest main process (its global setups) that must run however the run
 * ends: at exit, and when a signal ends it before its teardown (Ctrl-C, a timeout's SIGTERM), after
 * which the signal does what it would have done. The listeners stay on while the cleanups run: a
 * signal often comes twice (`pkill -f` matches the run and its `timeout`, which passes it on to the
 * whole group), and with no listener left the second one killed the run in the middle of a cleanup
 * (`pg_ctl stop`, leaving the test cluster running).
 */

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
/** Registered cleanups, each run at most once here, the newest first (as vitest runs teardowns). */
const cleanups: (() => void)[] = [];
let listening = false;

function runAll(): void {
  for (let fn = cleanups.pop(); fn; fn = cleanups.pop()) {
    try {
      fn();
    } catch {
      // The others still run.
    }
  }
}

function leave(sig: NodeJS.Signals): void {
  runAll();
  for (const s of SIGNALS) process.off(s, leave);
  process.kill(process.pid, sig);
}

/** Runs `cleanup` (synchronous, idempotent: the teardown may have run it already) when the process exits or a signal ends it. */
export function cleanUpOnExit(cleanup: () => void): void {
  if (!listening) {
    listening = true;
    process.once('exit', runAll);
    for (const s of SIGNALS) process.on(s, leave);
  }
  cleanups.push(cleanup);
}
