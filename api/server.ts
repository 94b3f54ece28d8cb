/** @module serve(app) on @hono/node-server; resolves with the bound URL and a close function. */
import type { AddressInfo } from 'node:net';
import { serve as honoServe } from '@hono/node-server';
import { answerClientError } from './client-errors.js';

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
    const server = honoServe({ fetch: app.fetch, hostname: host, port }, (info: AddressInfo) => {
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
