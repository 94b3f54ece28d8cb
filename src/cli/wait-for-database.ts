/**
 * @module `mnemo serve` started while PostgreSQL cannot be reached (not up yet beside it in a
 * compose file, restarting, network not there yet): it waits, trying again with a growing pause
 * (0.5 s doubling to 5 s) and one log line per try, instead of exiting. Anything else that stops
 * the open (a refused login, a missing database, a schema newer than this code) ends it at once.
 * The one-shot commands (check, keys, workspaces) do not wait: they report and exit 1.
 */
import { isMnemoError } from '../domain/errors.js';

const FIRST_PAUSE_MS = 500;
const MAX_PAUSE_MS = 5_000;

export async function waitForDatabase<T>(
  open: () => Promise<T>,
  log: (line: string) => void,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<T> {
  for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
    try {
      return await open();
    } catch (err) {
      if (!isMnemoError(err) || err.code !== 'unavailable') throw err;
      const why = err.cause instanceof Error ? err.cause.message : String(err.cause);
      log(`mnemo: waiting for PostgreSQL (database unavailable: ${why}); trying again in ${pause / 1000} s`);
      await sleep(pause);
    }
  }
}
