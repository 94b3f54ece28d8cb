/**
 * @module Requests Node's HTTP parser refuses before Hono sees them: a request line and headers
 * past Node's 16 KiB, malformed syntax, a head that never finished arriving. Node's own answer is a
 * bare status line with no body; these get the error envelope every other refusal has, and a
 * request id. The connection is closed after it, as Node would (the parser cannot go on). A request
 * that arrived whole before the refused bytes (pipelined on the same connection) is answered first.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { MnemoError, newId } from '../src/index.js';
import { errorBody, HTTP_ERRORS } from './errors.js';

const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

/** server.on('clientError', answerClientError). */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  // Nothing to answer on a connection the client already dropped.
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  // Written now, the refusal would go out ahead of that answer, which the client then never got.
  const pending = answerInFlight(socket);
  if (pending) {
    afterAnswer(pending, () => answerClientError(err, socket));
    return;
  }
  let status: number;
  let refusal: MnemoError;
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    // The table's request_too_large is 413, for bodies; a head too large has a status of its own.
    status = 431;
    refusal = new MnemoError('request_too_large', 'the request line and headers exceed 16 KiB');
  } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    refusal = new MnemoError('request_timeout', 'the request did not arrive in time');
    status = HTTP_ERRORS[refusal.code].status;
  } else {
    refusal = new MnemoError('invalid_request', `malformed HTTP request${err.code ? ` (${err.code})` : ''}`);
    status = HTTP_ERRORS[refusal.code].status;
  }
  const id = newId('request');
  const body = JSON.stringify(errorBody(refusal, id));
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Bad Request'}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nrequest-id: ${id}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/**
 * The response Node is still making on this socket for a request before the refused bytes, if any:
 * one whose request arrived whole, or one already started. (A request still arriving when its
 * own head or body timed out is the refused one: it is answered now.)
 */
function answerInFlight(socket: Duplex): ServerResponse | null {
  const res = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!res || res.writableFinished || res.destroyed) return null;
  return res.req.complete || res.headersSent ? res : null;
}

/** Runs `then` once `res` is written out or torn down; Node assigns the next pipelined response first. */
function afterAnswer(res: ServerResponse, then: () => void): void {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    then();
  };
  res.once('finish', once);
  res.once('close', once);
}

/**
 * A request whose target is not a path (`OPTIONS *`, `GET *`, an absolute URL): Node parses it, but
 * @hono/node-server cannot make a URL of it and answered a bare 400. It gets the envelope and a
 * request id here instead; the connection stays usable (the parser is fine).
 */
export function answerNonPathTarget(req: IncomingMessage, res: ServerResponse): void {
  const id = newId('request');
  const refusal = new MnemoError('invalid_request', 'the request target must be a path starting with /');
  const body = JSON.stringify(errorBody(refusal, id));
  // The body, if any, is not read: the connection closes after the answer so it is not taken for the next request.
  if (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined) res.setHeader('connection', 'close');
  res.writeHead(HTTP_ERRORS[refusal.code].status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'request-id': id });
  res.end(body);
}
