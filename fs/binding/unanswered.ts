/**
 * @module The requests a mount's handlers were given and have not answered yet. A look every few
 * seconds logs each one still unanswered after `afterMs`, once, and later how long it took. Someone
 * whose `cat` or `mv` in a mount seems to hang can tell from the log whether mnemo's handlers hold
 * the request (a line names it: storage, or a promise that never settled) or it never reached them
 * (no line: the kernel or libfuse holds it, as the rename libfuse waited on for ever did; see
 * native/fuse/node-tree.h). Costs a map entry per request in flight.
 */

interface Waiting {
  op: string;
  path: string;
  since: number;
  told: boolean;
}

/** How long a request may wait for its answer before the log names it, unless a mount says otherwise. */
export const DEFAULT_UNANSWERED_MS = 10_000;

export class Unanswered {
  private readonly waiting = new Map<number, Waiting>();
  private next = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly afterMs: number,
    private readonly log: (line: string) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Starts the looks (unref'd: they never keep the process alive). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.look(), Math.max(50, this.afterMs / 2));
    this.timer.unref();
  }

  /** Stops the looks; requests still in flight are forgotten (the mount is going). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.waiting.clear();
  }

  /** A request given to its handler; `answered(id)` follows its reply. */
  begin(op: string, path: string): number {
    const id = ++this.next;
    this.waiting.set(id, { op, path, since: this.now(), told: false });
    return id;
  }

  answered(id: number): void {
    const w = this.waiting.get(id);
    if (!w) return;
    this.waiting.delete(id);
    if (w.told) this.log(`mnemo fs: ${w.op} '${w.path}' answered after ${seconds(this.now() - w.since)} s`);
  }

  /** Logs each request unanswered for `afterMs` or more that was not logged yet. */
  look(): void {
    const now = this.now();
    for (const w of this.waiting.values()) {
      if (w.told || now - w.since < this.afterMs) continue;
      w.told = true;
      this.log(`mnemo fs: ${w.op} '${w.path}' unanswered for ${seconds(now - w.since)} s (its handler has not replied yet)`);
    }
  }
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(1);
}
