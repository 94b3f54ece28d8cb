/**
 * MCP calls with wrong-typed or malformed arguments are the caller's mistake, answered so a model
 * can read them and naming the argument: a wrong-typed tool argument is a tool result with isError,
 * a malformed request (arguments not an object, no tool name) is JSON-RPC -32602 invalid params,
 * never -32603 internal error. Over POST /mcp (raw JSON-RPC and the SDK client) and over stdio.
 * (issue 11, item 17b)
 */
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMcp, type McpKind, type McpSession } from '../helpers/mcp.js';
import { rawRequest, sdkClient } from '../helpers/sdk.js';
import { startServer, type RunningServer } from '../helpers/server.js';

let server: RunningServer;
let storeId = '';

beforeAll(async () => {
  server = await startServer();
  storeId = (await sdkClient(server.url, server.adminKey).beta.memoryStores.create({ name: 'mcp errors' })).id;
});
afterAll(async () => {
  await server?.stop();
});

/** Wrong-typed arguments, each with the argument the answer must name. */
const WRONG_TYPES: [tool: string, args: () => Record<string, unknown>, argument: string][] = [
  ['memory_list', () => ({ memory_store_id: 5 }), 'memory_store_id'],
  ['memory_list', () => ({ memory_store_id: storeId, limit: 'x' }), 'limit'],
  ['memory_read', () => ({ memory_store_id: storeId, path: null }), 'path'],
  ['memory_write', () => ({ memory_store_id: storeId, path: '/a.md', content: 42 }), 'content'],
  ['memory_search', () => ({ memory_store_id: storeId, query: ['a'] }), 'query'],
  ['memory_restore', () => ({ memory_store_id: storeId, agent_id: 'a', session_id: 's', max_bytes: 'lots' }), 'max_bytes'],
];

/** Malformed tools/call params, each with the field the error must name. */
const MALFORMED: [label: string, params: unknown, field: string][] = [
  ['arguments that are a number', { name: 'memory_list', arguments: 5 }, 'params.arguments'],
  ['arguments that are an array', { name: 'memory_list', arguments: [storeId] }, 'params.arguments'],
  ['arguments that are null', { name: 'memory_list', arguments: null }, 'params.arguments'],
  ['a tool name that is a number', { name: 5, arguments: {} }, 'params.name'],
  ['no params at all', undefined, 'params'],
];

describe.each<McpKind>(['http', 'stdio'])('MCP argument errors over %s', (kind) => {
  let mcp: McpSession;
  beforeAll(async () => {
    mcp = await connectMcp(kind, server, server.adminKey);
  });
  afterAll(async () => {
    await mcp?.close();
  });

  it.each(WRONG_TYPES)('%s with a wrong-typed argument is a tool error naming it', async (tool, args, argument) => {
    const answer = await mcp.call(tool, args());
    expect(answer.isError).toBe(true);
    expect(answer.text).toContain(argument);
    expect(answer.text).toMatch(/invalid|expected/i);
    expect(answer.text).not.toMatch(/-32603|internal/i);
  });

  it.each(MALFORMED)('a tools/call with %s is JSON-RPC -32602 naming the field', async (_label, params, field) => {
    const request = { method: 'tools/call', ...(params === undefined ? {} : { params }) } as never;
    const err = await mcp.client.request(request, z.object({}).passthrough()).then(
      () => null,
      (e: unknown) => e as { code?: number; message?: string },
    );
    expect(err, 'the call should fail').not.toBeNull();
    expect(err!.code).toBe(-32602);
    expect(err!.message).toContain(field);
  });

  it('still answers well-formed calls after malformed ones', async () => {
    const answer = await mcp.call('memory_list', { memory_store_id: storeId });
    expect(answer.isError).toBe(false);
  });
});

describe('MCP argument errors as raw JSON-RPC on POST /mcp', () => {
  const post = (payload: unknown) =>
    rawRequest(server.url, 'POST', '/mcp', {
      apiKey: server.adminKey,
      headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify(payload),
    });

  it.each(MALFORMED)('a tools/call with %s answers error -32602 naming the field, not -32603', async (_label, params, field) => {
    const res = await post({ jsonrpc: '2.0', id: 7, method: 'tools/call', ...(params === undefined ? {} : { params }) });
    const body = res.body as { id: number; error?: { code: number; message: string } };
    expect(body.id).toBe(7);
    expect(body.error?.code).toBe(-32602);
    expect(body.error?.message).toContain(field);
    expect(body.error?.message).not.toContain('"code"');
  });

  it.each(WRONG_TYPES)('%s with a wrong-typed argument answers a result with isError naming it', async (tool, args, argument) => {
    const res = await post({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: tool, arguments: args() } });
    const body = res.body as { result?: { isError: boolean; content: { text: string }[] }; error?: unknown };
    expect(body.error).toBeUndefined();
    expect(body.result?.isError).toBe(true);
    expect(body.result?.content[0]?.text).toContain(argument);
  });
});
