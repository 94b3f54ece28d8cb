/**
 * @module The process logger: pino, one JSON line per event on stderr (pretty when stderr is a
 * terminal). stdout stays the server's URL and `mnemo mcp`'s protocol. The many call sites that
 * take `log: (line) => void` get `lineLog(logger)`, which logs each line at info.
 */
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { LogLevel } from './config.js';

export type { Logger } from 'pino';

export interface LoggerOptions {
  level: LogLevel;
  /** Human-readable lines instead of JSON; the default is whether stderr is a terminal. */
  pretty?: boolean;
}

export function createLogger({ level, pretty: tty = process.stderr.isTTY === true }: LoggerOptions): Logger {
  // Synchronous writes: main() ends with process.exit, which would drop lines still buffered.
  const destination = tty
    ? pretty({ destination: 2, sync: true, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid' })
    : pino.destination({ fd: 2, sync: true });
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      // "level":"warn" rather than pino's number, so a grep or a log shipper reads it as is.
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}

/** The `log(line)` the rest of the code takes, backed by the logger at info. */
export function lineLog(logger: Logger): (line: string) => void {
  return (line) => logger.info(line);
}
