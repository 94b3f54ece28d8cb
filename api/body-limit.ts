/** @module Request body gate: 413 request_too_large above the limit, without resetting the client; 415 for a compressed body. */
import type { Context, MiddlewareHandler } from 'hono';
import { MnemoError, assertIdentityCoding } from '../src/index.js';
import type { AppEnv } from './env.js';
import { header } from './request.js';

/**
 * An oversized body up to this size is read to its end and dropped before the 413 goes out. If the
 * server closed the socket while the client was still sending, the client would get EPIPE/ECONNRESET
 * instead of the 413; left unread on a kept-alive socket, the next request on it would fail.
 */
const DRAIN_MAX_BYTES = 16 * 1024 * 1024;

export function bodyLimit(maxBytes: number): MiddlewareHandler<AppEnv> {
  return async function bodyLimitMiddleware(c, next) {
    // Decided from the headers alone where possible: touching `c.req.raw.body` makes
    // @hono/node-server build a full web Request and stream, a tenth of a small request's cost.
    const declared = header(c, 'content-length');
    const chunked = header(c, 'transfer-encoding') !== undefined;
    // A compressed body is refused before it is read (and before 100 Continue invites it).
    const coding = header(c, 'content-encoding');
    if (coding !== undefined && (chunked || (declared !== undefined && declared !== '0'))) assertIdentityCoding(coding);
    // A client that waits for "100 Continue" before its body (server.ts) is told to send it now:
    // it is authenticated (auth runs first) and the body is not refused by its declared size.
    const waiting = header(c, 'expect')?.toLowerCase() === '100-continue';
    if (!chunked) {
      const n = declared === undefined ? 0 : Number(declared);
      if (n <= maxBytes) {
        if (waiting) c.env?.outgoing?.writeContinue();
        return next();
      }
      // Not asked for, the body never comes: nothing to drain, and the connection closes.
      return tooLarge(c, n > DRAIN_MAX_BYTES || waiting ? null : (c.req.raw.body?.getReader() ?? null), 0, maxBytes);
    }
    if (waiting) c.env?.outgoing?.writeContinue();
    const body = c.req.raw.body;
    if (!body) return next();
    // Chunked: no size up front, so buffer up to the limit and hand handlers a fresh body.
    const reader = body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) return tooLarge(c, reader, size, maxBytes);
      chunks.push(value);
    }
    const whole = Buffer.concat(chunks, size);
    c.req.raw = new Request(c.req.raw, { body: whole });
    c.set('body', whole);
    return next();
  };
}

async function tooLarge(c: Context, reader: ReadableStreamDefaultReader<Uint8Array> | null, seen: number, maxBytes: number): Promise<never> {
  let total = seen;
  while (reader && total <= DRAIN_MAX_BYTES) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
  }
  if (reader === null || total > DRAIN_MAX_BYTES) {
    // Too much to read through: say so, so keep-alive clients do not reuse this connection.
    c.header('connection', 'close');
    await reader?.cancel().catch(() => {});
  }
  throw new MnemoError('request_too_large', `request body is larger than ${maxBytes} bytes`);
}
