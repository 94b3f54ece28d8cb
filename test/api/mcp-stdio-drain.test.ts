/**
 * `mnemo mcp`'s line transport once stdin has ended: it waits for the requests it read to be
 * answered, but not for ever. Driven through real streams; nothing answers the request, as a
 * tool that never returns would not.
 */
import { describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { LineTransport } from '../../api/mcp/stdio-transport.js';

function transportOver(drainMs: number) {
  const input = new PassThrough();
  const output = new PassThrough();
  const logged: string[] = [];
  const transport = new LineTransport({ input, output, drainMs, log: (line) => logged.push(line) });
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  return { input, output, logged, transport, closed };
}

describe('the stdio transport after stdin ends', () => {
  it('closes once the drain time has passed with a request still unanswered, and logs its id', async () => {
    const { input, logged, transport, closed } = transportOver(50);
    const read: unknown[] = [];
    transport.onmessage = (m) => read.push(m);
    await transport.start();
    input.end(`${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'memory_list', arguments: {} } })}\n`);
    await closed;
    expect(read).toHaveLength(1);
    expect(logged.join('\n')).toMatch(/stdin ended and 1 request\(s\) were still unanswered after 0\.05 s \(ids 7\): closing without them/);
  });

  it('closes at once, with nothing logged, when every request read was answered', async () => {
    const { input, logged, transport, closed } = transportOver(60_000);
    transport.onmessage = (m) => void transport.send({ jsonrpc: '2.0', id: (m as { id: number }).id, result: {} });
    await transport.start();
    input.end(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })}\n`);
    await closed;
    expect(logged).toEqual([]);
  });
});
