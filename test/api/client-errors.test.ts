/**
 * A request whose head never finishes arriving (a stalled or slow client) is answered 408 with the
 * error envelope when Node's headers timeout ends it (api/client-errors.ts). Node's timeouts are a
 * minute and more in the server; here a real HTTP server is given short ones, with the same handler.
 */
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { answerClientError } from '../../api/client-errors.js';

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  server = undefined;
});

/** Sends `head` and never the rest; resolves with everything the server wrote before it closed. */
function stall(port: number, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(head));
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString('utf8')));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('requests Node refuses before any handler', () => {
  it('a head that never finishes arriving is answered 408 with the error envelope and a request id, and the connection closed', async () => {
    server = createServer({ headersTimeout: 300, requestTimeout: 400, connectionsCheckingInterval: 50 }, (_req, res) => res.end('not reached'));
    server.on('clientError', answerClientError);
    await new Promise<void>((done) => server!.listen(0, '127.0.0.1', () => done()));
    const { port } = server.address() as AddressInfo;

    const answer = await stall(port, 'GET /v1/memory_stores HTTP/1.1\r\nHost: localhost\r\nx-api-key: k');
    expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(answer).toMatch(/\r\nrequest-id: req_\w+\r\n/i);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { type: string; error: { type: string; message: string }; request_id: string };
    expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: 'the request did not arrive in time' } });
    expect(body.request_id).toMatch(/^req_/);
  });
});
