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
    server.on('clientError', answerClientError);
    server.once('error', reject);
  });
}
