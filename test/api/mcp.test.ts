/**
 * The MCP server (issue 6) through the MCP SDK's own client, over stdio and over Streamable HTTP:
 * every tool, the key's role and store grants, and errors a model can read that never show a host path.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createMcpServer } from '../../api/mcp/server.js';
import type { Service } from '../../src/service/service.js';
import { createEdit } from '../../src/service/edits.js';
import { openCore, otherKey, queuedForSearch } from '../helpers/core.js';
import { connectMcp, type McpKind, type McpSession } from '../helpers/mcp.js';
import { makeTempDir, runCli, startServer, type RunningServer } from '../helpers/server.js';
import { eventually } from '../helpers/mount.js';
import { databasePerFile, pgSkip } from '../helpers/postgres.js';
import { jsonRequest, rawRequest, sdkClient } from '../helpers/sdk.js';
import { freshStore, sha256, type Store } from './shapes.js';

const TOOLS = [
  'memory_checkpoint', 'memory_delete', 'memory_delete_checkpoint', 'memory_diff', 'memory_edit', 'memory_history', 'memory_list',
  'memory_list_stores', 'memory_read', 'memory_rename', 'memory_restore', 'memory_search', 'memory_write',
];

let server: RunningServer;
let admin: Anthropic;

beforeAll(async () => {
  server = await startServer();
  admin = sdkClient(server.url, server.adminKey);
});
afterAll(async () => {
  await server?.stop();
});

async function mintKey(role: string, storeIds?: string[]): Promise<string> {
  const minted = await admin.post<{ secret: string }>('/v1/api_keys', {
    body: { name: `mcp-${role}`, role, ...(storeIds ? { memory_store_ids: storeIds } : {}) },
  });
  return minted.secret;
}

function expectToolError(answer: { isError: boolean; text: string }, code: string): void {
  expect(answer.isError).toBe(true);
  expect(answer.text).toMatch(new RegExp(`^Error ${code}: `));
  expect(answer.text).not.toContain(server.dataDir);
  expect(answer.text).not.toMatch(/\/tmp\/|node_modules|at .*\.js:\d+/);
}

describe.each<McpKind>(['http', 'stdio'])('MCP over %s', (kind) => {
  let mcp: McpSession;
  let store: Store;

  beforeAll(async () => {
    mcp = await connectMcp(kind, server, server.adminKey);
    store = await freshStore(admin, `mcp ${kind}`);
  });
  afterAll(async () => {
    await mcp?.close();
  });

  it('names itself with the package version', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(mcp.client.getServerVersion()).toEqual({ name: 'mnemo', version: pkg.version });
  });

  it('lists every tool with a JSON object input schema', async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.description).toBeTruthy();
    }
    const write = tools.find((t) => t.name === 'memory_write')!;
    expect(write.inputSchema.required).toEqual(expect.arrayContaining(['memory_store_id', 'path', 'content']));
  });

  it('lists stores, writes, reads, edits, renames, lists, searches and deletes a memory', async () => {
    const s = store.id;
    expect((await mcp.call('memory_list_stores')).json.data.map((x: { id: string }) => x.id)).toContain(s);
    const written = await mcp.call('memory_write', { memory_store_id: s, path: '/notes/todo.md', content: 'alpha\ngamma\n' });
    expect(written.isError).toBe(false);
    expect(written.json).toMatchObject({ type: 'memory', path: '/notes/todo.md', content_sha256: sha256('alpha\ngamma\n') });

    const read = await mcp.call('memory_read', { memory_store_id: s, path: '/notes/todo.md' });
    expect(read.json).toMatchObject({ content: 'alpha\ngamma\n', id: written.json.id });
    expect((await mcp.call('memory_read', { memory_store_id: s, memory_id: written.json.id })).json.content).toBe('alpha\ngamma\n');

    await mcp.call('memory_edit', { memory_store_id: s, path: '/notes/todo.md', command: 'insert', insert_line: 1, insert_text: 'beta' });
    await mcp.call('memory_edit', { memory_store_id: s, path: '/notes/todo.md', command: 'str_replace', old_str: 'gamma', new_str: 'delta' });
    expect((await mcp.call('memory_read', { memory_store_id: s, path: '/notes/todo.md' })).json.content).toBe('alpha\nbeta\ndelta\n');

    const renamed = await mcp.call('memory_rename', { memory_store_id: s, path: '/notes/todo.md', new_path: '/done/todo.md' });
    expect(renamed.json).toMatchObject({ id: written.json.id, path: '/done/todo.md' });
    const listed = await mcp.call('memory_list', { memory_store_id: s, path_prefix: '/done/' });
    expect(listed.json.data.map((m: { path: string }) => m.path)).toEqual(['/done/todo.md']);

    const found = await mcp.call('memory_search', { memory_store_id: s, query: 'delta' });
    expect(found.json.data).toMatchObject([{ memory: { path: '/done/todo.md' }, snippet: expect.stringContaining('**delta**') }]);
    const phrase = await mcp.call('memory_search', { memory_store_id: s, query: 'beta\ndel', mode: 'substring' });
    expect(phrase.json.data).toHaveLength(1);

    expect((await mcp.call('memory_delete', { memory_store_id: s, path: '/done/todo.md' })).json).toMatchObject({ type: 'memory_deleted' });
    expectToolError(await mcp.call('memory_read', { memory_store_id: s, path: '/done/todo.md' }), 'not_found');
    expect((await mcp.call('memory_search', { memory_store_id: s, query: 'delta' })).json.data).toEqual([]);
  });

  it('writes only when content_sha256 still matches, and says how to recover when it does not', async () => {
    const s = store.id;
    const first = await mcp.call('memory_write', { memory_store_id: s, path: '/cas.md', content: 'v1' });
    const stale = first.json.content_sha256 as string;
    await mcp.call('memory_write', { memory_store_id: s, path: '/cas.md', content: 'v2', content_sha256: stale });
    const refused = await mcp.call('memory_write', { memory_store_id: s, path: '/cas.md', content: 'v3', content_sha256: stale });
    expectToolError(refused, 'precondition_failed');
    expect(refused.text).toContain('memory_read');
    expectToolError(await mcp.call('memory_write', { memory_store_id: s, path: '/new.md', content: 'x', content_sha256: stale }), 'precondition_failed');
    expectToolError(await mcp.call('memory_delete', { memory_store_id: s, path: '/cas.md', content_sha256: stale }), 'precondition_failed');
    expect((await mcp.call('memory_read', { memory_store_id: s, path: '/cas.md' })).json.content).toBe('v2');
  });

  it('refuses edits that are ambiguous or impossible, changing nothing', async () => {
    const s = store.id;
    await mcp.call('memory_write', { memory_store_id: s, path: '/e.md', content: 'x x\n' });
    expectToolError(await mcp.call('memory_edit', { memory_store_id: s, path: '/e.md', command: 'str_replace', old_str: 'x', new_str: 'y' }), 'invalid_request');
    expectToolError(await mcp.call('memory_edit', { memory_store_id: s, path: '/e.md', command: 'str_replace', old_str: 'zzz', new_str: 'y' }), 'invalid_request');
    expectToolError(await mcp.call('memory_edit', { memory_store_id: s, path: '/e.md', command: 'insert', insert_line: 9, insert_text: 'y' }), 'invalid_request');
    expect((await mcp.call('memory_read', { memory_store_id: s, path: '/e.md' })).json.content).toBe('x x\n');
  });

  it('counts a memory of one blank line as one line for insert', async () => {
    const s = store.id;
    await mcp.call('memory_write', { memory_store_id: s, path: '/blank.md', content: '\n' });
    await mcp.call('memory_edit', { memory_store_id: s, path: '/blank.md', command: 'insert', insert_line: 0, insert_text: 'X' });
    expect((await mcp.call('memory_read', { memory_store_id: s, path: '/blank.md' })).json.content).toBe('X\n\n');
    await mcp.call('memory_write', { memory_store_id: s, path: '/blank.md', content: '\n' });
    expect((await mcp.call('memory_edit', { memory_store_id: s, path: '/blank.md', command: 'insert', insert_line: 1, insert_text: 'Y' })).isError).toBe(false);
    expect((await mcp.call('memory_read', { memory_store_id: s, path: '/blank.md' })).json.content).toBe('\nY\n');
    const past = await mcp.call('memory_edit', { memory_store_id: s, path: '/blank.md', command: 'insert', insert_line: 3, insert_text: 'Z' });
    expectToolError(past, 'invalid_request');
    expect(past.text).toContain('insert_line must be from 0 to 2');
  });

  it('names content_sha256, the argument sent, when it is malformed, in every tool that takes it', async () => {
    const s = store.id;
    await mcp.call('memory_write', { memory_store_id: s, path: '/named.md', content: 'x' });
    for (const [tool, args] of [
      ['memory_write', { content: 'y' }],
      ['memory_rename', { new_path: '/named2.md' }],
      ['memory_edit', { command: 'insert', insert_line: 0, insert_text: 'y' }],
      ['memory_delete', {}],
    ] as const) {
      const refused = await mcp.call(tool, { memory_store_id: s, path: '/named.md', content_sha256: 'zz', ...args });
      expectToolError(refused, 'invalid_request');
      expect(refused.text).toMatch(/^Error invalid_request: content_sha256: must be 64 lowercase hexadecimal characters/);
    }
    expect((await mcp.call('memory_read', { memory_store_id: s, path: '/named.md' })).json.content).toBe('x');
  });

  it('keeps the precondition of an edit that names content_sha256: a changed memory fails it', async () => {
    const s = store.id;
    const first = await mcp.call('memory_write', { memory_store_id: s, path: '/pinned.md', content: 'one\n' });
    await mcp.call('memory_write', { memory_store_id: s, path: '/pinned.md', content: 'two\n' });
    const refused = await mcp.call('memory_edit', {
      memory_store_id: s, path: '/pinned.md', command: 'insert', insert_line: 0, insert_text: 'x', content_sha256: first.json.content_sha256,
    });
    expectToolError(refused, 'precondition_failed');
    expect(refused.text).toContain('does not have the expected content_sha256');
    expect((await mcp.call('memory_read', { memory_store_id: s, path: '/pinned.md' })).json.content).toBe('two\n');
  });

  it('reports invalid input and unknown stores as readable errors without host paths', async () => {
    expectToolError(await mcp.call('memory_write', { memory_store_id: store.id, path: 'relative.md', content: 'x' }), 'invalid_path');
    expectToolError(await mcp.call('memory_write', { memory_store_id: store.id, path: '/big.md', content: 'x'.repeat(102_401) }), 'content_too_large');
    expectToolError(await mcp.call('memory_list', { memory_store_id: 'memstore_nope' }), 'not_found');
    expectToolError(await mcp.call('memory_search', { memory_store_id: store.id, query: ' ' }), 'invalid_request');
    expectToolError(await mcp.call('memory_restore', { memory_store_id: store.id }), 'invalid_request');
    const bad = await mcp.call('memory_write', { memory_store_id: store.id, path: 42 });
    expect(bad.isError).toBe(true);
    expect(bad.text).not.toContain(server.dataDir);
  });

  it('checkpoints, restores by session, id and locator, and deletes only a checkpoint that is not the latest', async () => {
    const s = store.id;
    const mem = await mcp.call('memory_write', { memory_store_id: s, path: '/ckpt/ref.md', content: 'relied on' });
    const one = await mcp.call('memory_checkpoint', {
      memory_store_id: s, agent_id: 'mcp-agent', session_id: kind, goal: 'finish the port',
      constraints: ['keep the API stable'], decisions: ['use MCP'], open_tasks: ['tests'], next_action: 'write tests',
      capsule: 'porting to MCP', references: [{ path: '/ckpt/ref.md', content_sha256: mem.json.content_sha256 }],
      expected_latest_checkpoint_id: null,
    });
    expect(one.json).toMatchObject({ type: 'checkpoint', revision: 1, locator: expect.stringMatching(/^mnemo:\/\/memory_stores\//) });
    const byLatest = await mcp.call('memory_restore', { memory_store_id: s, agent_id: 'mcp-agent', session_id: kind });
    expect(byLatest.json).toMatchObject({
      goal: 'finish the port', constraints: ['keep the API stable'], decisions: ['use MCP'], open_tasks: ['tests'],
      next_action: 'write tests', capsule: 'porting to MCP', references: [{ path: '/ckpt/ref.md', status: 'ok' }],
    });
    expect((await mcp.call('memory_restore', { locator: one.json.locator })).json.checkpoint_id).toBe(one.json.id);
    expect((await mcp.call('memory_restore', { memory_store_id: s, checkpoint_id: one.json.id, max_bytes: 4096 })).json.size_bytes).toBeLessThanOrEqual(4096);

    expectToolError(await mcp.call('memory_checkpoint', { memory_store_id: s, agent_id: 'mcp-agent', session_id: kind, goal: 'g', expected_latest_checkpoint_id: null }), 'conflict');
    expectToolError(await mcp.call('memory_checkpoint', { memory_store_id: s, agent_id: 'mcp-agent', session_id: kind, goal: 'g', capsule: 'c'.repeat(16_385) }), 'invalid_request');
    expectToolError(await mcp.call('memory_delete_checkpoint', { memory_store_id: s, checkpoint_id: one.json.id }), 'conflict');
    await mcp.call('memory_checkpoint', { memory_store_id: s, agent_id: 'mcp-agent', session_id: kind, goal: 'g2', expected_latest_checkpoint_id: one.json.id });
    expect((await mcp.call('memory_delete_checkpoint', { memory_store_id: s, checkpoint_id: one.json.id })).isError).toBe(false);
    expectToolError(await mcp.call('memory_restore', { memory_store_id: s, checkpoint_id: one.json.id }), 'not_found');

    const big = await mcp.call('memory_checkpoint', { memory_store_id: s, agent_id: 'mcp-agent', session_id: `${kind}-big`, goal: 'g', constraints: ['c'.repeat(3000)] });
    const tight = await mcp.call('memory_restore', { memory_store_id: s, checkpoint_id: big.json.id, max_bytes: 1024 });
    expectToolError(tight, 'budget_exceeded');
    expect(tight.text).toMatch(/needs at least \d+ bytes/);
  });

  // As a tester found it: both got the generic conflict hint about diffs of redacted versions.
  it('a stale expected_latest_checkpoint_id and deleting the latest checkpoint each get a hint that fits', async () => {
    const base = { memory_store_id: store.id, agent_id: `hint-${kind}`, session_id: 's', goal: 'g' };
    const first = await mcp.call('memory_checkpoint', { ...base, expected_latest_checkpoint_id: null });
    expect(first.isError, first.text).toBe(false);
    const stale = await mcp.call('memory_checkpoint', { ...base, goal: 'g2', expected_latest_checkpoint_id: null });
    expectToolError(stale, 'conflict');
    expect(stale.text.split('\n')[1]).toBe('Nothing was saved. memory_restore the latest checkpoint of this session, merge it with your state, then save again with its id as expected_latest_checkpoint_id.');
    const latest = await mcp.call('memory_delete_checkpoint', { memory_store_id: store.id, checkpoint_id: first.json.id });
    expectToolError(latest, 'conflict');
    expect(latest.text.split('\n')[1]).toBe('Nothing was deleted: the latest checkpoint of a session is kept. Save a newer one (memory_checkpoint) first.');
  });

  it('memory_restore answers the restore as measured: its text is size_bytes long in UTF-8, within max_bytes', async () => {
    const s = store.id;
    const sized = await mcp.call('memory_checkpoint', {
      memory_store_id: s, agent_id: 'mcp-agent', session_id: `${kind}-sized`, goal: 'mesurer l’été ✓',
      constraints: Array.from({ length: 40 }, (_, i) => `contrainte ${i} ✓`), decisions: ['a', 'b'], open_tasks: ['c'],
    });
    for (const max_bytes of [undefined, 2048]) {
      const restored = await mcp.call('memory_restore', { memory_store_id: s, checkpoint_id: sized.json.id, ...(max_bytes ? { max_bytes } : {}) });
      expect(restored.isError).toBe(false);
      expect(Buffer.byteLength(restored.text, 'utf8')).toBe(restored.json.size_bytes);
      expect(restored.json.size_bytes).toBeLessThanOrEqual(max_bytes ?? 32_768);
    }
  });

  it('lists a memory\'s history by path or memory_id and diffs its versions (issue 15)', async () => {
    const s = store.id;
    const first = await mcp.call('memory_write', { memory_store_id: s, path: '/hist.md', content: 'one\n' });
    await mcp.call('memory_write', { memory_store_id: s, path: '/hist.md', content: 'two\n' });
    const byPath = await mcp.call('memory_history', { memory_store_id: s, path: '/hist.md' });
    expect(byPath.isError).toBe(false);
    expect(byPath.json.data.map((v: { operation: string; content: unknown }) => [v.operation, v.content])).toEqual([['modified', null], ['created', null]]);
    const [newest, oldest] = byPath.json.data as { id: string }[];
    expect(oldest!.id).toBe(first.json.memory_version_id);
    const diff = await mcp.call('memory_diff', { memory_store_id: s, memory_version_id: newest!.id });
    expect(diff.json).toMatchObject({ type: 'memory_version_diff', from: { id: oldest!.id }, to: { id: newest!.id } });
    expect(diff.json.unified).toContain('-one\n+two\n');
    const back = await mcp.call('memory_diff', { memory_store_id: s, memory_version_id: oldest!.id, against_version_id: newest!.id });
    expect(back.json.unified).toContain('-two\n+one\n');
    await mcp.call('memory_delete', { memory_store_id: s, path: '/hist.md' });
    const byId = await mcp.call('memory_history', { memory_store_id: s, memory_id: first.json.id });
    expect(byId.json.data.map((v: { operation: string }) => v.operation)).toEqual(['deleted', 'modified', 'created']);
    expectToolError(await mcp.call('memory_history', { memory_store_id: s, path: '/hist.md' }), 'not_found');
    expectToolError(await mcp.call('memory_history', { memory_store_id: s }), 'invalid_request');
    expectToolError(await mcp.call('memory_diff', { memory_store_id: s, memory_version_id: 'memver_nope' }), 'not_found');
  });

  // As a tester found it: the tool answered a next_page but took no page, so stores past the newest 100 were out of reach.
  it('memory_list_stores pages with limit and page: following next_page reaches every store', async () => {
    await freshStore(admin, `mcp ${kind} paging a`);
    await freshStore(admin, `mcp ${kind} paging b`);
    const all: string[] = [];
    for await (const s of admin.beta.memoryStores.list({ limit: 100 })) all.push(s.id);
    const seen: string[] = [];
    let page: string | null = null;
    do {
      const answer = await mcp.call('memory_list_stores', { limit: 2, ...(page ? { page } : {}) });
      expect(answer.isError, answer.text).toBe(false);
      expect(answer.json.data.length).toBeLessThanOrEqual(2);
      seen.push(...answer.json.data.map((s: { id: string }) => s.id));
      page = answer.json.next_page;
    } while (page);
    expect(seen).toEqual(all);
    expect((await mcp.call('memory_list_stores', {})).json.data.length).toBe(Math.min(all.length, 100));
  });

  it('acts with the key’s role: a read_only key reads but cannot write', async () => {
    const reader = await connectMcp(kind, server, await mintKey('read_only'));
    try {
      await mcp.call('memory_write', { memory_store_id: store.id, path: '/ro.md', content: 'visible' });
      expect((await reader.call('memory_read', { memory_store_id: store.id, path: '/ro.md' })).json.content).toBe('visible');
      for (const [tool, args] of [
        ['memory_write', { path: '/ro2.md', content: 'x' }],
        ['memory_edit', { path: '/ro.md', command: 'str_replace', old_str: 'visible', new_str: 'x' }],
        ['memory_rename', { path: '/ro.md', new_path: '/ro3.md' }],
        ['memory_delete', { path: '/ro.md' }],
        ['memory_checkpoint', { agent_id: 'a', session_id: 's', goal: 'g' }],
      ] as const) {
        expectToolError(await reader.call(tool, { memory_store_id: store.id, ...args }), 'forbidden');
      }
    } finally {
      await reader.close();
    }
  });

  it('a read_only key’s write is refused forbidden on both faces, whether or not its path holds a memory', async () => {
    const key = await mintKey('read_only');
    const reader = await connectMcp(kind, server, key);
    const missing = 'mem_0000000000000000000000000';
    try {
      await mcp.call('memory_write', { memory_store_id: store.id, path: '/ro-both.md', content: 'kept' });
      for (const [tool, args] of [
        ['memory_edit', { path: '/ro-none.md', command: 'str_replace', old_str: 'kept', new_str: 'x' }],
        ['memory_edit', { path: '/ro-both.md', command: 'str_replace', old_str: 'not there', new_str: 'x' }],
        ['memory_rename', { path: '/ro-none.md', new_path: '/ro-moved.md' }],
        ['memory_delete', { path: '/ro-none.md' }],
        ['memory_write', { path: '/ro-none.md', content: 'x', content_sha256: sha256('kept') }],
      ] as const) {
        expectToolError(await reader.call(tool, { memory_store_id: store.id, ...args }), 'forbidden');
      }
      const http = (method: string, path: string, body?: unknown) =>
        jsonRequest(server, method, `/v1/memory_stores/${store.id}${path}`, key, body);
      for (const res of [await http('POST', `/memories/${missing}`, { content: 'x' }), await http('DELETE', `/memories/${missing}`)]) {
        expect(res.status).toBe(403);
        expect(res.body).toMatchObject({ error: { type: 'permission_error' } });
      }
      expect((await mcp.call('memory_read', { memory_store_id: store.id, path: '/ro-both.md' })).json.content).toBe('kept');
    } finally {
      await reader.close();
    }
  });

  it('acts with the key’s store grant: other stores do not exist for it', async () => {
    const other = await freshStore(admin, 'mcp other');
    const scoped = await connectMcp(kind, server, await mintKey('read_write', [store.id]));
    try {
      const stores = (await scoped.call('memory_list_stores')).json.data.map((x: { id: string }) => x.id);
      expect(stores).toEqual([store.id]);
      expectToolError(await scoped.call('memory_write', { memory_store_id: other.id, path: '/x.md', content: 'x' }), 'not_found');
      expectToolError(await scoped.call('memory_search', { memory_store_id: other.id, query: 'x' }), 'not_found');
      expect((await scoped.call('memory_write', { memory_store_id: store.id, path: '/scoped.md', content: 'ok' })).isError).toBe(false);
    } finally {
      await scoped.close();
    }
  });
});

describe('MCP authentication', () => {
  it('answers 401 on /mcp without a valid API key', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const headers = { accept: 'application/json, text/event-stream' };
    expect((await rawRequest(server.url, 'POST', '/mcp', { body, headers })).status).toBe(401);
    expect((await rawRequest(server.url, 'POST', '/mcp', { body, headers, apiKey: 'wrong' })).status).toBe(401);
  });

  it('mnemo mcp refuses to start without MNEMO_API_KEY, or with a key that does not exist', async () => {
    const none = await runCli(['mcp', '--data-dir', server.dataDir]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('MNEMO_API_KEY');
    const wrong = await runCli(['mcp', '--data-dir', server.dataDir], { MNEMO_API_KEY: 'mnemo-sk-wrong' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('invalid API key');
    expect(wrong.stdout).toBe('');
  });
});

// An agent's `mnemo mcp` lives as long as its MCP client: a key revoked meanwhile, by a running
// server or by `mnemo keys revoke`, must stop it at its next tool call, as it stops the key's next
// HTTP request, on either engine (SQLite: the revoke's commit; PostgreSQL: its notice).
function revokedWhileServing(databaseUrl: () => string | undefined): void {
  let served: RunningServer;
  let operator: Anthropic;
  let store: Store;

  beforeAll(async () => {
    const url = databaseUrl();
    served = await startServer(url ? { databaseUrl: url } : {});
    operator = sdkClient(served.url, served.adminKey);
    store = await freshStore(operator, 'mcp revoked');
  });
  afterAll(async () => {
    await served?.stop();
  });

  async function refusedAfter(path: string, revoke: (keyId: string) => Promise<void>): Promise<void> {
    const minted = await operator.post<{ id: string; secret: string }>('/v1/api_keys', { body: { name: 'stdio agent', role: 'read_write' } });
    const url = databaseUrl();
    const mcp = await connectMcp('stdio', served, minted.secret, url ? { databaseUrl: url } : {});
    try {
      expect((await mcp.call('memory_write', { memory_store_id: store.id, path: `${path}/before.md`, content: 'before' })).isError).toBe(false);
      await revoke(minted.id);
      const write = await mcp.call('memory_write', { memory_store_id: store.id, path: `${path}/after.md`, content: 'written after the revoke' });
      expect(write.isError).toBe(true);
      expect(write.text).toMatch(/^Error unauthenticated: this API key was revoked\n/);
      expect((await mcp.call('memory_read', { memory_store_id: store.id, path: `${path}/before.md` })).text).toMatch(/^Error unauthenticated: /);
      const listed = await rawRequest(served.url, 'GET', `/v1/memory_stores/${store.id}/memories?path_prefix=${path}/`, { apiKey: served.adminKey });
      expect((listed.body as { data: { path: string }[] }).data.map((m) => m.path)).toEqual([`${path}/before.md`]);
    } finally {
      await mcp.close();
    }
  }

  it('refuses the first tool call after a revoke through the HTTP API, and writes nothing', async () => {
    await refusedAfter('/http', async (id) => {
      await operator.post(`/v1/api_keys/${id}/revoke`);
    });
  });

  it('refuses the first tool call after mnemo keys revoke, and writes nothing', async () => {
    await refusedAfter('/cli', async (id) => {
      const url = databaseUrl();
      const revoked = await runCli(['keys', 'revoke', id, ...(url ? ['--database-url', url] : ['--data-dir', served.dataDir])]);
      expect(revoked.code, revoked.stderr).toBe(0);
    });
  });
}

describe('a key revoked while mnemo mcp runs on stdio, on SQLite', () => revokedWhileServing(() => undefined));

describe.skipIf(pgSkip !== null)(`a key revoked while mnemo mcp runs on stdio, on PostgreSQL${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, () => {
  revokedWhileServing(databasePerFile());
});

// As a tester found it: GET /mcp was a 200 event stream that ended at once, so every idle client of
// the official SDK reopened it once a second for as long as it stayed connected.
describe('MCP over HTTP with the official client left idle', () => {
  it('offers no server stream: the client’s one GET is answered 405 Allow: POST and it makes no request while idle', async () => {
    const seen: string[] = [];
    const counting: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      seen.push(`${init?.method ?? 'GET'} ${res.status}${res.status === 405 ? ` allow=${res.headers.get('allow')}` : ''}`);
      return res;
    };
    const errors: Error[] = [];
    const client = new Client({ name: 'mnemo-idle', version: '1.0.0' });
    client.onerror = (err) => errors.push(err);
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { 'x-api-key': server.adminKey } }, fetch: counting });
    await client.connect(transport);
    try {
      await client.listTools();
      await eventually(async () => expect(seen).toContain('GET 405 allow=POST'));
      const before = seen.length;
      await new Promise((r) => setTimeout(r, 2500));
      expect(seen.slice(before)).toEqual([]);
      expect(seen.filter((s) => s.startsWith('GET'))).toEqual(['GET 405 allow=POST']);
      expect(errors).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

describe('mnemo mcp on its own', () => {
  it('indexes its own writes for search when no server runs beside it', async () => {
    const dataDir = makeTempDir('mnemo-mcp-');
    const alone = await startServer({ dataDir });
    let mcp: McpSession | undefined;
    try {
      const store = await freshStore(sdkClient(alone.url, alone.adminKey), 'mcp alone');
      await alone.stop();
      mcp = await connectMcp('stdio', alone, alone.adminKey);
      expect((await mcp.call('memory_write', { memory_store_id: store.id, path: '/heron.md', content: 'a note about herons' })).isError).toBe(false);
      await eventually(async () => expect(queuedForSearch(join(dataDir, 'mnemo.db'))).toBe(0));
    } finally {
      await mcp?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/** JSON-RPC lines for `mnemo mcp`'s stdin: initialize, then `calls` as tools/call requests with ids 1, 2, … */
function stdioScript(calls: [tool: string, args: Record<string, unknown>][]): string[] {
  const init = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } };
  return [
    JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: init }),
    JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    ...calls.map(([name, args], i) => JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name, arguments: args } })),
  ];
}

// As a tester found it: a client that closes stdin after its last request (a script piping into
// `mnemo mcp`) got no answer to the calls that run on reader threads, and none to a last line with no "\n".
describe('mnemo mcp when stdin closes', () => {
  it('answers every request it read before it exits, including a last line with no newline', async () => {
    const store = await freshStore(admin, 'mcp stdin end');
    await admin.beta.memoryStores.memories.create(store.id, { path: '/hello.md', content: 'hello herons\n' });
    const s = store.id;
    const lines = stdioScript([
      ['memory_list', { memory_store_id: s }],
      ['memory_read', { memory_store_id: s, path: '/nope.md' }],
      ['memory_search', { memory_store_id: s, query: 'hello', mode: 'substring' }],
      ['memory_list', { memory_store_id: s, path_prefix: '/' }],
      ['memory_search', { memory_store_id: s, query: 'herons', mode: 'substring' }],
    ]);
    const run = await runCli(['mcp', '--data-dir', server.dataDir], { MNEMO_API_KEY: server.adminKey }, { input: lines.join('\n'), timeoutMs: 30_000 });
    expect(run.code).toBe(0);
    const answers = run.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: number; result?: { isError?: boolean; content: { text: string }[] } });
    expect(answers.map((a) => a.id).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    const byId = new Map(answers.map((a) => [a.id, a.result!]));
    expect(byId.get(1)!.content[0]!.text).toContain('/hello.md');
    expect(byId.get(2)!.content[0]!.text).toMatch(/^Error not_found: /);
    expect(byId.get(3)!.content[0]!.text).toContain('/hello.md');
    expect(byId.get(5)!.content[0]!.text).toContain('**herons**');
  });
});

// The real service over a real SQLite file and the real MCP server, in-process: an edit can only
// run out of attempts if another writer changes the memory between each of its reads and writes,
// which the edit's lookup does here, through the same service, every time.
describe('memory_edit that keeps losing to other writers', () => {
  it('fails conflict, changes nothing of its own, and hints to read the memory again and retry the edit', async () => {
    const core = await openCore();
    const writer = await otherKey(core);
    const store = await core.service.createStore(core.caller, { name: 'edit races', description: '', metadata: {} });
    await core.service.createMemory(core.caller, store.id, { path: '/busy.md', content: 'round 0\n' });
    let round = 0;
    const racing: Service = {
      ...core.service,
      editMemory: createEdit({
        getMemoryToWrite: async (caller, storeId, path) => {
          const read = await core.service.getMemoryToWrite(caller, storeId, path);
          await core.service.updateMemory(writer, storeId, read!.id, { content: `round ${++round}\n` });
          return read;
        },
        updateMemory: (caller, storeId, memoryId, write) => core.service.updateMemory(caller, storeId, memoryId, write),
      }),
    };
    const [ours, theirs] = InMemoryTransport.createLinkedPair();
    await createMcpServer({ service: racing, caller: core.caller, log: () => {} }).connect(theirs);
    const client = new Client({ name: 'mnemo-test', version: '1.0.0' });
    await client.connect(ours);
    try {
      const res = await client.callTool({
        name: 'memory_edit',
        arguments: { memory_store_id: store.id, path: '/busy.md', command: 'insert', insert_line: 0, insert_text: 'mine' },
      });
      const text = (res.content as { text: string }[]).map((c) => c.text).join('\n');
      expect(res.isError).toBe(true);
      expect(text).toMatch(/^Error conflict: memory mem_\w+ kept changing while the edit was applied/);
      expect(text.split('\n')[1]).toBe('Nothing was changed. Read the memory again (memory_read), check that the edit still fits its current text, then retry memory_edit.');
      expect((await core.service.getMemoryByPath(core.caller, store.id, '/busy.md'))?.content).toBe(`round ${round}\n`);
    } finally {
      await client.close();
    }
  });
});

// As a tester found it: parallel memory_write calls to one new path failed all but one with
// path_conflict against the very path they wrote, where the tool promises to create or replace.
describe('concurrent memory_write calls to one new path', () => {
  it('all succeed, as an upsert: one creates the memory and the others replace its content', async () => {
    const store = await freshStore(admin, 'mcp concurrent writes');
    const clients = await Promise.all((['stdio', 'stdio', 'http', 'http'] as const).map((kind) => connectMcp(kind, server, server.adminKey)));
    try {
      for (let round = 0; round < 5; round++) {
        const path = `/race/${round}.md`;
        const answers = await Promise.all(Array.from({ length: 8 }, (_, i) =>
          clients[i % clients.length]!.call('memory_write', { memory_store_id: store.id, path, content: `writer ${i}\n` })));
        expect(answers.filter((a) => a.isError).map((a) => a.text)).toEqual([]);
        expect(new Set(answers.map((a) => a.json.id)).size).toBe(1);
        const history = await clients[0]!.call('memory_history', { memory_store_id: store.id, path, limit: 100 });
        expect(history.json.data.map((v: { operation: string }) => v.operation).sort()).toEqual(['created', ...Array(7).fill('modified')]);
      }
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });
});

// As an exploratory tester found it: 40 inserts at once from 2 HTTP clients and 2 `mnemo mcp`
// processes, none naming content_sha256, used to fail half of them on a precondition never set.
describe('concurrent memory_edit calls', () => {
  it('apply every edit without content_sha256, from clients over both transports and processes', async () => {
    const store = await freshStore(admin, 'mcp concurrent edits');
    const clients = await Promise.all((['http', 'http', 'stdio', 'stdio'] as const).map((kind) => connectMcp(kind, server, server.adminKey)));
    try {
      const [first] = clients;
      await first!.call('memory_write', { memory_store_id: store.id, path: '/busy.md', content: 'start\n' });
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) =>
        clients[i % clients.length]!.call('memory_edit', { memory_store_id: store.id, path: '/busy.md', command: 'insert', insert_line: 1, insert_text: `line ${i}` })));
      expect(answers.filter((a) => a.isError).map((a) => a.text)).toEqual([]);
      const lines = (await first!.call('memory_read', { memory_store_id: store.id, path: '/busy.md' })).json.content.split('\n');
      expect(lines[0]).toBe('start');
      expect(lines.slice(1, -1).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `line ${i}`).sort());
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });
});
