/**
 * An idle keep-alive connection stays open past Node's default 5 s (api/server.ts KEEP_ALIVE_MS), so
 * a client or proxy reusing it does not race the server's close and get a reset.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KEEP_ALIVE_MS, serve, type Served } from '../../api/server.js';

let served: Served | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

/** Writes one GET on `socket` and resolves with the whole answer (its body is short and ends the chunk). */
function get(socket: Socket, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = '';
    const onData = (d: Buffer) => {
      answer += d.toString('utf8');
      if (answer.endsWith('ok')) done(() => resolve(answer));
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
    served = await serve({ fetch: () => new Response('ok') }, { host: '127.0.0.1', port: 0 });
    const { port } = new URL(served.url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((ready) => socket.once('connect', () => ready()));

    expect(await get(socket, '/first')).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*keep-alive: timeout=65/i);
    await new Promise((idle) => setTimeout(idle, 6000));
    expect(await get(socket, '/second')).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    socket.destroy();
    expect(KEEP_ALIVE_MS).toBeGreaterThan(60_000);
  }, 15_000);
});
