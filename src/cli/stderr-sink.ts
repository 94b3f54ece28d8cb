/**
 * @module Where the process log's lines go: stderr, written synchronously while its reader keeps
 * up, and never waited for when it does not.
 *
 * The serving thread answers every mount and request, so a log write must not block it. pino's
 * synchronous destination (sonic-boom, sync) retries a full pipe every 100 ms until it drains: a
 * reader that stops (a paused pager, a stuck log shipper, a parent busy elsewhere) froze the
 * server for good, every agent's `stat` with it (a fuzzer's harness found it by not reading). Its
 * asynchronous mode writes every line late, from the thread pool, so a line is not yet on stderr
 * when the request it describes has been answered. So: a line goes out at once if the pipe takes
 * it; what the pipe would not take (EAGAIN: Node opens a stderr pipe non-blocking) waits in a
 * backlog, in order, retried off a timer; past MAX_BACKLOG bytes a line is dropped and counted.
 * A reader that is gone (EPIPE) or a closed stderr loses the lines, never the server.
 */
import { writeSync } from 'node:fs';
import { Writable } from 'node:stream';

/** Output held for a stderr reader that fell behind, before lines are dropped. */
export const MAX_BACKLOG = 8 * 1024 * 1024;
/** How often a backlog is offered to the pipe again. */
const RETRY_MS = 50;

export class StderrSink extends Writable {
  /** Called once a backlog has drained, with the lines dropped since the last call (0 is not reported). */
  onDropped: ((lines: number) => void) | null = null;
  private readonly backlog: Buffer[] = [];
  private backlogBytes = 0;
  private dropped = 0;
  private reported = 0;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly fd = 2,
    private readonly maxBacklog = MAX_BACKLOG,
  ) {
    super({ decodeStrings: true });
  }

  /** Lines dropped so far (the backlog was full, or stderr refused them). */
  droppedLines(): number {
    return this.dropped;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    this.put(chunk);
    done();
  }

  /**
   * Writes the backlog out before an exit, waiting up to `waitMs` for a reader that is behind:
   * whatever it has not taken by then is lost rather than holding the exit.
   */
  flushSync(waitMs: number): void {
    const until = Date.now() + waitMs;
    const nap = new Int32Array(new SharedArrayBuffer(4));
    while (!this.drain() && Date.now() < until) Atomics.wait(nap, 0, 0, RETRY_MS);
  }

  private put(line: Buffer): void {
    let rest: Buffer | null = line;
    if (this.backlog.length === 0) {
      rest = this.offer(line);
      if (rest === null) return;
    }
    if (this.backlogBytes + rest.length > this.maxBacklog) {
      this.dropped++;
      return;
    }
    this.backlog.push(rest);
    this.backlogBytes += rest.length;
    this.later();
  }

  /** Writes what the pipe takes now; returns the part it would not take yet, or null (all written, or lost). */
  private offer(buf: Buffer): Buffer | null {
    let at = 0;
    while (at < buf.length) {
      try {
        at += writeSync(this.fd, buf, at);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return buf.subarray(at);
        this.dropped++;
        return null;
      }
    }
    return null;
  }

  /** True once the backlog is empty. */
  private drain(): boolean {
    while (this.backlog.length > 0) {
      const head = this.backlog[0]!;
      const rest = this.offer(head);
      this.backlogBytes -= head.length - (rest?.length ?? 0);
      if (rest !== null) {
        this.backlog[0] = rest;
        return false;
      }
      this.backlog.shift();
    }
    if (this.dropped > this.reported && this.onDropped) {
      const lines = this.dropped - this.reported;
      this.reported = this.dropped;
      this.onDropped(lines);
    }
    return true;
  }

  private later(): void {
    if (this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      if (!this.drain()) this.later();
    }, RETRY_MS);
    // A backlog alone does not keep the process up: its exit flushes (flushSync).
    this.retry.unref();
  }
}
