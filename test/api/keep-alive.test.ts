/**
 * An idle keep-alive connection to a real `mnemo serve` stays open past Node's default 5 s
 * (api/server.ts KEEP_ALIVE_MS), so a client or proxy reusing it does not race the server's close
 * and get a reset.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../helpers/server.js';

let server: RunningServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

/** Writes one GET on `socket` and resolves with the whole answer (its head and a body of Content-Length bytes). */
function get(socket: Socket, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = '';
    const whole = () => {
      const end = answer.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)\r\n/i.exec(answer.slice(0, end + 2));
      return end >= 0 && length !== null && Buffer.byteLength(answer.slice(end + 4)) >= Number(length[1]);
    };
    const onData = (d: Buffer) => {
      answer += d.toString('utf8');
      if (whole()) done(() => resolve(answer));
    };
    const onClose = () => done(() => reject(new Error(`the server closed the connection; it had answered: ${JSON.stringify(answer)}`)));
    const done = (then: () => void) => {
      socket.off('data', onData).off('close', onClose);
      then();
    };
    socket.on('data', onData).on('close', onClose);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
  });
}

describe('keep-alive connections', () => {
  it('a connection idle for longer than Node\'s default 5 s still answers the next request', async () => {
    const { hostname, port } = new URL(server.url);
    const socket = connect(Number(port), hostname);
    await new Promise<void>((ready) => socket.once('connect', () => ready()));
    try {
      expect(await get(socket, '/healthz')).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*keep-alive: timeout=65\r\n/i);
      await new Promise((idle) => setTimeout(idle, 6000));
      expect(await get(socket, '/healthz')).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    } finally {
      socket.destroy();
    }
  }, 20_000);
});
