/**
 * @module The stalled-upload figure of issue 11 item 4: the server's RSS before and after 150
 * unauthenticated chunked uploads of ~1 MiB that never finish (refused with 401 from the headers,
 * so their bodies are never kept), and after 150 authenticated ones (at most
 * MNEMO_MAX_INFLIGHT_BODIES are read; the rest get 503). Run alone: `node dist/test/bench/uploads.js`.
 */
import { connect, type Socket } from 'node:net';
import { startServer } from '../helpers/server.js';
import { rssMiB } from './targets.js';

const UPLOADS = 150;
const CHUNK = Buffer.alloc(64 * 1024, 'n');

/** Opens `n` chunked uploads that send 896 KiB (under the 1 MiB body limit) and stop; resolves once each has been sent or answered. */
async function stall(url: string, apiKey: string | null, n: number): Promise<Socket[]> {
  const { hostname, port, host } = new URL(url);
  const head =
    `POST /v1/memory_stores HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n` +
    (apiKey ? `x-api-key: ${apiKey}\r\n` : '') + '\r\n';
  return Promise.all(
    Array.from({ length: n }, () =>
      new Promise<Socket>((resolve) => {
        const socket = connect(Number(port), hostname, () => {
          socket.write(head + '9\r\n{"name":"\r\n');
          for (let i = 0; i < 14; i++) socket.write(`${CHUNK.length.toString(16)}\r\n${CHUNK}\r\n`);
          socket.write('', () => resolve(socket));
        });
        socket.on('error', () => resolve(socket));
        socket.on('data', () => {});
      }),
    ),
  );
}

async function main(): Promise<void> {
  const server = await startServer();
  try {
    const settle = () => new Promise((r) => setTimeout(r, 1500));
    await settle();
    const before = rssMiB(server.pid);
    const anonymous = await stall(server.url, null, UPLOADS);
    await settle();
    const afterAnonymous = rssMiB(server.pid);
    for (const s of anonymous) s.destroy();
    const known = await stall(server.url, server.adminKey, UPLOADS);
    await settle();
    const afterKnown = rssMiB(server.pid);
    for (const s of known) s.destroy();
    process.stdout.write(
      `server RSS: ${before.toFixed(0)} MiB at rest, ${afterAnonymous.toFixed(0)} MiB with ${UPLOADS} unauthenticated stalled ~1 MiB uploads, ` +
        `${afterKnown.toFixed(0)} MiB with ${UPLOADS} authenticated ones\n`,
    );
  } finally {
    await server.stop();
  }
}

await main();
