/**
 * @module A mount's log lines with repeats folded. An agent retrying a save the mount refuses (bytes
 * that are not UTF-8, in a loop) would write one warning per attempt, as fast as it can try. The
 * first line is written; the same line again within the window is only counted, and when the window
 * ends one line says how many there were, so a loop that goes on costs one line per window.
 */

/** How long a line, once written, is only counted when it comes again. */
export const REPEAT_WINDOW_MS = 10_000;

/** Distinct lines being counted at once; past it the oldest is reported early and forgotten. */
const MAX_KEPT = 1_000;

export interface RepeatFolder {
  log(line: string): void;
  /** Reports every count now (a mount that ends) and forgets them. */
  flush(): void;
}

interface Kept {
  folded: number;
  timer: ReturnType<typeof setTimeout>;
}

export function foldRepeats(write: (line: string) => void, windowMs = REPEAT_WINDOW_MS): RepeatFolder {
  const kept = new Map<string, Kept>();

  function report(line: string, k: Kept): void {
    if (k.folded === 0) return;
    const times = k.folded === 1 ? 'once more' : `${k.folded} more times`;
    write(`${line} (repeated ${times} in ${windowMs / 1000} s)`);
  }

  // The window ends: the count is reported, and a line still repeating is counted for one more window.
  function windowEnded(line: string): void {
    const k = kept.get(line);
    if (!k) return;
    if (k.folded === 0) {
      kept.delete(line);
      return;
    }
    report(line, k);
    k.folded = 0;
    k.timer = startWindow(line);
  }

  function startWindow(line: string): ReturnType<typeof setTimeout> {
    const timer = setTimeout(() => windowEnded(line), windowMs);
    timer.unref?.();
    return timer;
  }

  return {
    log(line) {
      const k = kept.get(line);
      if (k) {
        k.folded++;
        return;
      }
      write(line);
      if (kept.size >= MAX_KEPT) {
        const [oldest, o] = kept.entries().next().value as [string, Kept];
        clearTimeout(o.timer);
        kept.delete(oldest);
        report(oldest, o);
      }
      kept.set(line, { folded: 0, timer: startWindow(line) });
    },

    flush() {
      for (const [line, k] of kept) {
        clearTimeout(k.timer);
        report(line, k);
      }
      kept.clear();
    },
  };
}
