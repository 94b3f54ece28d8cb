/**
 * MCP calls with wrong-typed, unknown or malformed arguments are the caller's mistake, answered so
 * a model can read them and naming the argument: a wrong-typed or unknown tool argument is a tool
 * result with isError (an unknown one is never ignored: a misspelled precondition changes
 * nothing), a path that can never name a memory is refused as a write refuses it, an error shows
 * at most a bounded slice of a caller's value, and a malformed request (arguments not an object,
 * no tool name) is JSON-RPC -32602 invalid params, never -32603 internal error. Over POST /mcp
 * (raw JSON-RPC and the SDK client) and over stdio. (issue 11, item 17b)
 */
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMcp, type McpKind, type McpSession } from '../helpers/mcp.js';
import { rawRequest, sdkClient } from '../helpers/sdk.js';
import { runCli, startServer, type RunningServer } from '../helpers/server.js';

let server: RunningServer;
let storeId = '';

beforeAll(async () => {
  server = await startServer();
  const client = sdkClient(server.url, server.adminKey);
  storeId = (await client.beta.memoryStores.create({ name: 'mcp errors' })).id;
  // The memory EVERY_ARGUMENT names, so its calls get past the lookup (their preconditions never match).
  await client.beta.memoryStores.memories.create(storeId, { path: '/every.md', content: 'every\n' });
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

/**
 * Every tool with every argument it takes (README "MCP", and its History section for
 * memory_history and memory_diff), each with a value of the right type. /every.md exists; no
 * content_sha256 here matches it, so none of these calls changes it.
 */
const EVERY_ARGUMENT = (): Record<string, Record<string, unknown>> => ({
  memory_list_stores: { limit: 10, page: 'p' },
  memory_list: { memory_store_id: storeId, path_prefix: '/', depth: 0, limit: 10, page: 'p' },
  memory_read: { memory_store_id: storeId, path: '/every.md', memory_id: 'mem_nope' },
  memory_write: { memory_store_id: storeId, path: '/every.md', content: 'every\n', content_sha256: 'a'.repeat(64), ttl_seconds: 60 },
  memory_edit: {
    memory_store_id: storeId, path: '/every.md', command: 'insert', old_str: 'a', new_str: 'b', insert_line: 0, insert_text: 'top',
    content_sha256: 'a'.repeat(64),
  },
  memory_rename: { memory_store_id: storeId, path: '/every.md', new_path: '/every2.md', content_sha256: 'a'.repeat(64) },
  memory_delete: { memory_store_id: storeId, path: '/every.md', content_sha256: 'a'.repeat(64) },
  memory_search: { memory_store_id: storeId, query: 'every', mode: 'fts', path_prefix: '/', limit: 10, page: 'p' },
  memory_checkpoint: {
    memory_store_id: storeId, agent_id: 'every-agent', session_id: 'every-session', goal: 'g', summary: 's', constraints: ['c'],
    decisions: ['d'], open_tasks: ['t'], next_action: 'n', capsule: 'cap', references: [{ path: '/every.md' }],
    expected_latest_checkpoint_id: 'ckpt_nope',
  },
  memory_restore: { memory_store_id: storeId, checkpoint_id: 'ckpt_nope', locator: 'mnemo://nope', agent_id: 'a', session_id: 's', max_bytes: 4096 },
  memory_delete_checkpoint: { memory_store_id: storeId, checkpoint_id: 'ckpt_nope' },
  memory_history: { memory_store_id: storeId, path: '/every.md', memory_id: 'mem_nope', limit: 10, page: 'p' },
  memory_diff: { memory_store_id: storeId, memory_version_id: 'memver_nope', against_version_id: 'memver_nope2' },
});

/** Paths that can never name a memory, refused by every tool that takes a path. */
const BAD_PATHS: [label: string, path: string][] = [
  ['100,000 characters', '/' + 'a'.repeat(100_000)],
  ['1,025 bytes', '/' + 'a'.repeat(1024)],
  ['relative with ".."', '../../etc/passwd'],
  ['a ".." segment', '/notes/../notes/a.md'],
  ['an empty segment', '/notes//a.md'],
];

/** The tools that look a memory up by path, each with the other arguments it needs. */
const BY_PATH: [tool: string, args: () => Record<string, unknown>][] = [
  ['memory_read', () => ({ memory_store_id: storeId })],
  ['memory_delete', () => ({ memory_store_id: storeId })],
  ['memory_history', () => ({ memory_store_id: storeId })],
  ['memory_edit', () => ({ memory_store_id: storeId, command: 'insert', insert_line: 0, insert_text: 'x' })],
  ['memory_rename', () => ({ memory_store_id: storeId, new_path: '/renamed.md' })],
];

/** The longest error text a 100,000-character argument may produce. */
const BOUNDED = 1000;

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

  it('every tool advertises every argument it takes, and no other (additionalProperties: false)', async () => {
    const { tools } = await mcp.client.listTools();
    const every = EVERY_ARGUMENT();
    expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(every).sort());
    for (const t of tools) {
      expect(Object.keys(t.inputSchema.properties ?? {}).sort(), t.name).toEqual(Object.keys(every[t.name]!).sort());
      expect(t.inputSchema['additionalProperties'], t.name).toBe(false);
    }
  });

  it.each(Object.keys(EVERY_ARGUMENT()))('%s takes every argument it documents', async (tool) => {
    const answer = await mcp.call(tool, EVERY_ARGUMENT()[tool]);
    expect(answer.text).not.toMatch(/Input validation error|unknown argument/);
  });

  it.each(Object.keys(EVERY_ARGUMENT()))('%s refuses an argument it does not take, naming it', async (tool) => {
    const answer = await mcp.call(tool, { ...EVERY_ARGUMENT()[tool], colour: 'blue' });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/unknown argument: colour\b/);
    expect(answer.text).not.toMatch(/-32603|internal/i);
  });

  it('a misspelled precondition is refused, never ignored: nothing is written, deleted or listed', async () => {
    const path = `/guard-${kind}.md`;
    expect((await mcp.call('memory_write', { memory_store_id: storeId, path, content: 'kept\n' })).isError).toBe(false);
    const write = await mcp.call('memory_write', { memory_store_id: storeId, path, content: 'overwritten\n', expected_content_sha256: 'a'.repeat(64) });
    expect(write.isError).toBe(true);
    expect(write.text).toContain('unknown argument: expected_content_sha256');
    expect(write.text).toContain('content_sha256');
    const del = await mcp.call('memory_delete', { memory_store_id: storeId, path, precondition: { type: 'content_sha256', content_sha256: 'a'.repeat(64) } });
    expect(del.isError).toBe(true);
    expect(del.text).toContain('unknown argument: precondition');
    expect((await mcp.call('memory_read', { memory_store_id: storeId, path })).json.content).toBe('kept\n');
    const list = await mcp.call('memory_list', { memory_store_id: storeId, pathprefix: '/nowhere/' });
    expect(list.isError).toBe(true);
    expect(list.text).toContain('unknown argument: pathprefix');
    const many = await mcp.call('memory_list', { memory_store_id: storeId, pathprefix: '/', deep: 1 });
    expect(many.text).toContain('unknown arguments: pathprefix, deep');
  });

  it.each(['memory_read', 'memory_history'])('%s given both a path and a memory_id is refused, never answered for one of them', async (tool) => {
    const answer = await mcp.call(tool, { memory_store_id: storeId, path: '/every.md', memory_id: 'mem_other' });
    expect(answer.isError).toBe(true);
    expect(answer.text).toContain('give path or memory_id, not both');
  });

  it('an unknown argument with a huge name is shown cut to its first 100 characters', async () => {
    const answer = await mcp.call('memory_list', { memory_store_id: storeId, ['k'.repeat(100_000)]: 1 });
    expect(answer.isError).toBe(true);
    expect(answer.text).toContain(`unknown argument: ${'k'.repeat(100)}… (100000 characters)`);
    expect(answer.text.length).toBeLessThan(BOUNDED);
  });

  describe.each(BY_PATH)('%s', (tool, args) => {
    it.each(BAD_PATHS)('refuses a path of %s as memory_write does, not as not_found', async (_label, path) => {
      const write = await mcp.call('memory_write', { memory_store_id: storeId, path, content: 'x' });
      expect(write.text).toMatch(/^Error (invalid_path|path_too_long): /);
      const answer = await mcp.call(tool, { ...args(), path });
      expect(answer.isError).toBe(true);
      expect(answer.text.split('\n')[0]).toBe(write.text.split('\n')[0]);
      expect(answer.text.length).toBeLessThan(BOUNDED);
    });
  });

  it('a valid path with no memory is not_found, naming at most its first 100 characters', async () => {
    const path = '/' + 'n'.repeat(1000);
    for (const [tool, args] of BY_PATH) {
      const answer = await mcp.call(tool, { ...args(), path });
      expect(answer.text, tool).toMatch(/^Error not_found: /);
      expect(answer.text, tool).toContain(`${path.slice(0, 100)}… (1001 characters)`);
      expect(answer.text.length, tool).toBeLessThan(BOUNDED);
    }
  });

  it('memory_write of a new path with a malformed content_sha256 refuses it as malformed, without echoing it', async () => {
    const answer = await mcp.call('memory_write', { memory_store_id: storeId, path: `/new-${kind}.md`, content: 'x', content_sha256: 'x'.repeat(100_000) });
    expect(answer.text).toMatch(/^Error invalid_request: content_sha256: must be 64 lowercase hexadecimal characters/);
    expect(answer.text.length).toBeLessThan(BOUNDED);
  });

  it.each(Object.keys(EVERY_ARGUMENT()))('%s shows at most a bounded slice of a 100,000-character argument', async (tool) => {
    const base = EVERY_ARGUMENT()[tool]!;
    for (const [name, value] of Object.entries(base)) {
      if (typeof value !== 'string') continue;
      const answer = await mcp.call(tool, { ...base, [name]: 'x'.repeat(100_000) });
      if (answer.isError) expect(answer.text.length, `${tool} ${name}: ${answer.text.slice(0, 200)}`).toBeLessThan(BOUNDED);
    }
  });

  // As a tester found it: these named the HTTP API's q, against and path, arguments the tools do not have.
  it.each<[tool: string, args: () => Record<string, unknown>, text: string]>([
    ['memory_search', () => ({ memory_store_id: storeId, query: '   ' }), 'Error invalid_request: query: is required and must not be blank'],
    ['memory_search', () => ({ memory_store_id: storeId, query: 'a'.repeat(1025) }), 'Error invalid_request: query: must be at most 1024 characters'],
    ['memory_search', () => ({ memory_store_id: storeId, query: 'a\uD800' }), 'Error invalid_utf8: query is not valid UTF-8 (it contains a lone surrogate)'],
    ['memory_diff', () => ({ memory_store_id: storeId, memory_version_id: 'memver_x', against_version_id: '' }), 'Error invalid_request: against_version_id: must be a memory version id (memver_…) when given'],
    ['memory_rename', () => ({ memory_store_id: storeId, path: '/every.md', new_path: '/x/../y' }), 'Error invalid_path: new_path has a ".." segment'],
  ])('%s names the tool argument in its refusal, not the HTTP field', async (tool, args, text) => {
    const answer = await mcp.call(tool, args());
    expect(answer.isError).toBe(true);
    expect(answer.text.split('\n')[0]).toBe(text);
  });

  // As a tester found it: these were not_found ("no checkpoint for agent …"), echoing the whole value, where HTTP answers 400.
  it.each<[label: string, agent: string, session: string, field: string]>([
    ['an agent_id with a slash and a space', 'a/b c', 's', 'agent_id'],
    ['an empty session_id', 'a', '', 'session_id'],
    ['a 3,000-character agent_id', 'a'.repeat(3000), 's', 'agent_id'],
  ])('memory_restore with %s is invalid_request naming it, as the HTTP route answers', async (_label, agent, session, field) => {
    const answer = await mcp.call('memory_restore', { memory_store_id: storeId, agent_id: agent, session_id: session });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(new RegExp(`^Error invalid_request: ${field}: must be 1 to 128 characters`));
    expect(answer.text.length).toBeLessThan(BOUNDED);
  });

  // As a tester found it: these were answered for one of the arguments, the others silently dropped.
  it.each<[label: string, tool: string, args: () => Record<string, unknown>, text: string]>([
    ['memory_restore with a locator and a checkpoint_id', 'memory_restore',
      () => ({ locator: `mnemo://memory_stores/${storeId}/checkpoints/ckpt_000000000000000000000000`, checkpoint_id: 'ckpt_000000000000000000000001' }),
      'Error invalid_request: give one of locator, checkpoint_id, or agent_id and session_id, not locator and checkpoint_id'],
    ['memory_restore with a checkpoint_id and agent_id + session_id', 'memory_restore',
      () => ({ memory_store_id: storeId, checkpoint_id: 'ckpt_000000000000000000000000', agent_id: 'other', session_id: 'other' }),
      'Error invalid_request: give one of locator, checkpoint_id, or agent_id and session_id, not checkpoint_id and agent_id and session_id'],
    ['memory_restore with a locator and another memory_store_id', 'memory_restore',
      () => ({ locator: `mnemo://memory_stores/${storeId}/checkpoints/ckpt_000000000000000000000000`, memory_store_id: 'memstore_0000000000000000000000000' }),
      'Error invalid_request: memory_store_id names another store than locator: give locator alone'],
    ['memory_edit insert with old_str and new_str', 'memory_edit',
      () => ({ memory_store_id: storeId, path: '/every.md', command: 'insert', insert_line: 1, insert_text: 'X', old_str: 'every', new_str: 'ZZ' }),
      'Error invalid_request: old_str and new_str do not apply to insert'],
    ['memory_edit str_replace with insert_line', 'memory_edit',
      () => ({ memory_store_id: storeId, path: '/every.md', command: 'str_replace', old_str: 'every', new_str: 'ZZ', insert_line: 0 }),
      'Error invalid_request: insert_line does not apply to str_replace'],
  ])('%s is refused naming the arguments, and changes nothing', async (_label, tool, args, text) => {
    const answer = await mcp.call(tool, args());
    expect(answer.isError).toBe(true);
    expect(answer.text.split('\n')[0]).toBe(text);
    expect((await mcp.call('memory_read', { memory_store_id: storeId, path: '/every.md' })).json.content).toBe('every\n');
  });

  it('still answers well-formed calls after malformed ones', async () => {
    const answer = await mcp.call('memory_list', { memory_store_id: storeId });
    expect(answer.isError).toBe(false);
  });
});

// As a tester found it: over stdio these lines got no answer at all and left nothing in the log,
// so the client waited for its timeout (POST /mcp answers such a body at once).
describe('malformed JSON-RPC lines on mnemo mcp stdio', () => {
  it('are each answered -32700 or -32600 with the request id when it has one, logged, and later requests still answered', async () => {
    const init = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } };
    const lines = [
      JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: init }),
      '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":5}',
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":"x"}',
      '{"jsonrpc":"2.0","id":"four","method":"tools/call","params":[]}',
      '{"id":6,"method":"ping"}',
      'garbage',
      '{"jsonrpc":"2.0","id":5,',
      '{"jsonrpc":"2.0","id":8,"method":"ping"}',
    ];
    const run = await runCli(['mcp', '--data-dir', server.dataDir], { MNEMO_API_KEY: server.adminKey }, { input: lines.join('\n') + '\n', timeoutMs: 30_000 });
    expect(run.code).toBe(0);
    type Answer = { id: number | string | null; result?: unknown; error?: { code: number; message: string } };
    const answers = run.stdout.trim().split('\n').map((l) => JSON.parse(l) as Answer);
    const byId = (id: Answer['id']) => answers.filter((a) => a.id === id);
    for (const id of [2, 3, 'four']) {
      expect(byId(id), String(id)).toEqual([{ jsonrpc: '2.0', id, error: { code: -32600, message: expect.stringMatching(/^Invalid Request: params: .*expected object/) } }]);
    }
    expect(byId(6)).toEqual([{ jsonrpc: '2.0', id: 6, error: { code: -32600, message: expect.stringContaining('jsonrpc') } }]);
    expect(byId(null).map((a) => a.error)).toEqual([
      { code: -32700, message: 'Parse error: the line is not JSON' },
      { code: -32700, message: 'Parse error: the line is not JSON' },
    ]);
    expect(byId(8)).toEqual([{ jsonrpc: '2.0', id: 8, result: {} }]);
    expect(byId(0)).toHaveLength(1);
    const logged = run.stderr.split('\n').filter((l) => l.includes('"level":"warn"') && l.includes('mnemo mcp: stdin line'));
    expect(logged).toHaveLength(6);
    expect(logged.join('\n')).toContain('stdin line 6 answered -32700 (Parse error: the line is not JSON): garbage');
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

  it('a tools/call with an unknown argument answers a result with isError naming it, and does nothing', async () => {
    const args = { memory_store_id: storeId, path: '/raw-unknown.md', content: 'x', expected_content_sha256: 'a'.repeat(64) };
    const res = await post({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'memory_write', arguments: args } });
    const body = res.body as { result?: { isError: boolean; content: { text: string }[] }; error?: unknown };
    expect(body.error).toBeUndefined();
    expect(body.result?.isError).toBe(true);
    expect(body.result?.content[0]?.text).toContain('unknown argument: expected_content_sha256');
    const list = await post({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'memory_list', arguments: { memory_store_id: storeId } } });
    expect((list.body as { result: { content: { text: string }[] } }).result.content[0]!.text).not.toContain('/raw-unknown.md');
  });
});
