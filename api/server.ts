/** @module serve(app) on @hono/node-server; resolves with the bound URL and a close function. */
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve as honoServe } from '@hono/node-server';
import { answerClientError, answerNonPathTarget } from './client-errors.js';

export interface Served {
  url: string;
  close(): Promise<void>;
}

export interface Fetchable {
  fetch(request: Request): Response | Promise<Response>;
}

/**
 * How long an idle keep-alive connection stays open: longer than the idle timeouts of the proxies
 * and clients that reuse connections (nginx's upstream keepalive_timeout and load balancers' idle
 * timeouts are 60 s). With Node's default of 5 s, a client that reused a connection idle for about
 * 5 s raced the server's close of it and got a reset (ECONNRESET, or a 502 from the proxy).
 */
export const KEEP_ALIVE_MS = 65_000;

export function serve(app: Fetchable, { host, port }: { host: string; port: number }): Promise<Served> {
  return new Promise((resolve, reject) => {
    const server = honoServe({ fetch: app.fetch, hostname: host, port, createServer: createHttpServer }, (info: AddressInfo) => {
      const h = info.family === 'IPv6' ? `[${info.address}]` : info.address;
      resolve({
        url: `http://${h}:${info.port}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            // Idle keep-alive sockets would hold close() open; busy ones get a short grace period.
            if ('closeIdleConnections' in server) server.closeIdleConnections();
            setTimeout(() => ('closeAllConnections' in server ? server.closeAllConnections() : undefined), 2000).unref();
          }),
      });
    });
    if ('keepAliveTimeout' in server) server.keepAliveTimeout = KEEP_ALIVE_MS;
    server.on('clientError', answerClientError);
    server.once('error', reject);
  });
}

/**
 * Node's HTTP server with two answers of its own before the app's listener:
 * - a request target that is not a path is refused with the error envelope (answerNonPathTarget);
 * - `Expect: 100-continue` on the API (/v1, /mcp) is not answered "100 Continue" by Node at once:
 *   the request goes to the app, which sends it only once the caller is authenticated and the body
 *   may be read (body-limit.ts), so an unknown key or an oversized body is refused before a byte of
 *   it is sent. Elsewhere (the console, which checks its own sessions) Node's answer stands.
 */
const createHttpServer = ((options: object, listener: RequestListener) => {
  const handle: RequestListener = (req, res) => (req.url?.startsWith('/') ? listener(req, res) : answerNonPathTarget(req, res));
  const server = createServer(options, handle);
  server.on('checkContinue', (req, res) => {
    if (!GATED.test(req.url ?? '')) res.writeContinue();
    handle(req, res);
  });
  return server;
}) as typeof createServer;

/** The paths whose requests pass the API's auth and body limit first (app.ts). */
const GATED = /^\/(v1\/|mcp(\/|\?|$))/;
