/**
 * @module The process logger: pino, one JSON line per event on stderr (pretty when stderr is a
 * terminal). stdout stays the server's URL and `mnemo mcp`'s protocol. The many call sites that
 * take `log: (line) => void` get `lineLog(logger)`, which logs each line at info (a warning's at warn). Lines go through
 * a StderrSink (stderr-sink.ts): a stderr nobody reads delays and then drops lines, and never
 * stalls the serving thread.
 */
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { LogLevel } from './config.js';
import { MAX_BACKLOG, StderrSink } from './stderr-sink.js';

export type { Logger } from 'pino';

export interface LoggerOptions {
  level: LogLevel;
  /** Human-readable lines instead of JSON; the default is whether stderr is a terminal. */
  pretty?: boolean;
}

export interface ProcessLogger {
  logger: Logger;
  /** Writes lines still held for a slow reader before the process exits, waiting for it at most EXIT_WAIT_MS. */
  flush(): void;
  /** Lines dropped so far because stderr's reader fell behind. */
  droppedLines(): number;
}

/** How long an exit waits for a stderr reader that is behind. */
const EXIT_WAIT_MS = 2_000;

export function createLogger({ level, pretty: tty = process.stderr.isTTY === true }: LoggerOptions): ProcessLogger {
  // process.stderr opens a pipe non-blocking (libuv): a full one answers EAGAIN instead of waiting.
  void process.stderr;
  const sink = new StderrSink();
  const stream = tty ? pretty({ destination: sink, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid' }) : sink;
  const logger = pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      // "level":"warn" rather than pino's number, so a grep or a log shipper reads it as is.
      formatters: { level: (label) => ({ level: label }) },
    },
    stream,
  );
  sink.onDropped = (lines) =>
    logger.warn(`mnemo: ${lines} log line${lines === 1 ? ' was' : 's were'} dropped: stderr's reader fell ${MAX_BACKLOG / 1024 / 1024} MiB behind`);
  return { logger, flush: () => sink.flushSync(EXIT_WAIT_MS), droppedLines: () => sink.droppedLines() };
}

/**
 * The `log(line)` the rest of the code takes, backed by the logger at info; a line that says it is
 * a warning (`mnemo: warn: …`, a mount's save that failed) at warn, so MNEMO_LOG_LEVEL=warn keeps it.
 */
export function lineLog(logger: Logger): (line: string) => void {
  return (line) => (line.startsWith(WARN_PREFIX) ? logger.warn(line) : logger.info(line));
}

const WARN_PREFIX = 'mnemo: warn: ';
