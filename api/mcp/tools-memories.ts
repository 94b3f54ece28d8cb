/** @module MCP tools over memories: list stores and memories, read, write, edit, rename, delete, search. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import {
  MnemoError,
  assertMemoryPath,
  excerpt,
  parseMemoryCreate,
  parseMemoryEdit,
  parseMemoryListQuery,
  parseMemoryUpdate,
  parseSearchQuery,
  parseSha256,
  parseStoreListQuery,
  type Caller,
  type Memory,
  type Service,
} from '../../src/index.js';
import { toWireListItem, toWireMemory, toWirePage, toWireStore } from '../wire.js';
import { toWireSearchPage } from '../wire-continuity.js';
import type { ToolRunner } from './server.js';
import { pathOrId, toolArgs } from './tool-args.js';

const store = z.string().describe('The memory store id (memstore_…); memory_list_stores lists them.');
const path = z.string().describe('Memory path, starting with "/", e.g. /notes/plan.md');
const sha = z.string().optional().describe('Precondition: the content_sha256 the memory must still have (from memory_read).');
const str = (n: number | undefined) => (n === undefined ? undefined : String(n));

export function registerMemoryTools(server: McpServer, service: Service, caller: Caller, run: ToolRunner): void {
  /** The live memory at `p` a tool reads (`write` false) or changes (after the caller's write check, as the HTTP API does). */
  async function atPath(storeId: string, p: string, write: boolean): Promise<Memory> {
    const m = write ? await service.getMemoryToWrite(caller, storeId, p) : await service.getMemoryByPath(caller, storeId, p);
    if (!m) throw new MnemoError('not_found', `no memory at ${excerpt(p)}`);
    return m;
  }

  function expected(raw: string | undefined): string | undefined {
    return raw === undefined ? undefined : parseSha256(raw, 'content_sha256');
  }

  /** The HTTP body's precondition for a tool's content_sha256, checked first so that an error names the argument the caller sent. */
  function precondition(raw: string | undefined): { type: 'content_sha256'; content_sha256: string } | undefined {
    const sha256 = expected(raw);
    return sha256 === undefined ? undefined : { type: 'content_sha256', content_sha256: sha256 };
  }

  server.registerTool(
    'memory_list_stores',
    {
      description: 'List the memory stores this API key can use, newest first.',
      inputSchema: toolArgs({
        limit: z.number().int().optional().describe('Stores per page, 1 to 100 (default 100)'),
        page: z.string().optional().describe('next_page from a previous call'),
      }),
    },
    (a) => run(async () => toWirePage(await service.listStores(caller, parseStoreListQuery({ limit: str(a.limit) ?? '100', page: a.page })), toWireStore)),
  );

  server.registerTool(
    'memory_list',
    {
      description: 'List memories under a path prefix (paths, sizes, content_sha256; no content). depth=1 rolls deeper paths into prefixes.',
      inputSchema: toolArgs({
        memory_store_id: store,
        path_prefix: z.string().optional().describe('Directory prefix ending in "/", default "/"'),
        depth: z.number().int().optional().describe('0 (all below) or 1 (direct children)'),
        limit: z.number().int().optional(),
        page: z.string().optional().describe('next_page from a previous call'),
      }),
    },
    (a) =>
      run(async () => {
        const q = parseMemoryListQuery({ path_prefix: a.path_prefix, depth: str(a.depth), limit: str(a.limit), page: a.page });
        return toWirePage(await service.listMemories(caller, a.memory_store_id, q), (i) => toWireListItem(i, 'basic'));
      }),
  );

  server.registerTool(
    'memory_read',
    {
      description: 'Read one memory by path or memory_id: its content, content_sha256 and version.',
      inputSchema: toolArgs({ memory_store_id: store, path: path.optional(), memory_id: z.string().optional() }),
    },
    (a) =>
      run(async () => {
        const which = pathOrId(a);
        const m = 'memoryId' in which ? await service.getMemory(caller, a.memory_store_id, which.memoryId) : await atPath(a.memory_store_id, which.path, false);
        return toWireMemory(m, 'full');
      }),
  );

  server.registerTool(
    'memory_write',
    {
      description:
        'Create a memory at path, or replace its whole content. With content_sha256, the write happens only if the memory still has that content (optimistic concurrency).',
      inputSchema: toolArgs({
        memory_store_id: store,
        path,
        content: z.string(),
        content_sha256: sha,
        ttl_seconds: z.number().int().optional().describe('Optional: the memory expires after this many seconds'),
      }),
    },
    (a) =>
      run(async () => {
        const sha256 = expected(a.content_sha256);
        const input = parseMemoryCreate({ path: a.path, content: a.content, ttl_seconds: a.ttl_seconds });
        const m = await service.writeMemory(caller, a.memory_store_id, { ...input, ...(sha256 === undefined ? {} : { expectedSha256: sha256 }) });
        return toWireMemory(m, 'basic');
      }),
  );

  server.registerTool(
    'memory_edit',
    {
      description:
        'Edit a memory in place. command "str_replace" replaces old_str (which must occur exactly once) with new_str; "insert" inserts insert_text after line insert_line (0 = at the top).',
      inputSchema: toolArgs({
        memory_store_id: store,
        path,
        command: z.enum(['str_replace', 'insert']),
        old_str: z.string().optional(),
        new_str: z.string().optional(),
        insert_line: z.number().int().optional(),
        insert_text: z.string().optional(),
        content_sha256: sha,
      }),
    },
    (a) =>
      run(async () => {
        const sha256 = expected(a.content_sha256);
        return toWireMemory(await service.editMemory(caller, a.memory_store_id, a.path, parseMemoryEdit(a), sha256), 'basic');
      }, 'memory_edit'),
  );

  server.registerTool(
    'memory_rename',
    {
      description: 'Move a memory to a new path; it keeps its memory_id.',
      inputSchema: toolArgs({ memory_store_id: store, path, new_path: z.string(), content_sha256: sha }),
    },
    (a) =>
      run(async () => {
        const m = await atPath(a.memory_store_id, a.path, true);
        // Checked here first, so that a refusal names new_path, not the HTTP body's path field.
        const write = parseMemoryUpdate({ path: assertMemoryPath(a.new_path, 'new_path'), precondition: precondition(a.content_sha256) });
        return toWireMemory(await service.updateMemory(caller, a.memory_store_id, m.id, write), 'basic');
      }),
  );

  server.registerTool(
    'memory_delete',
    { description: 'Delete the memory at path (its history stays).', inputSchema: toolArgs({ memory_store_id: store, path, content_sha256: sha }) },
    (a) =>
      run(async () => {
        const m = await atPath(a.memory_store_id, a.path, true);
        await service.deleteMemory(caller, a.memory_store_id, m.id, expected(a.content_sha256));
        return { type: 'memory_deleted', id: m.id, path: m.path };
      }),
  );

  server.registerTool(
    'memory_search',
    {
      description:
        'Search current memories. mode "fts" (default) ranks by relevance and matches words; "substring" finds an exact phrase, case-insensitive. Results carry a snippet with ** around matches. candidates_capped: true means more remain than one request ranks or scans (a short page is not the end): follow next_page.',
      inputSchema: toolArgs({
        memory_store_id: store,
        query: z.string(),
        mode: z.enum(['fts', 'substring']).optional(),
        path_prefix: z.string().optional(),
        limit: z.number().int().optional(),
        page: z.string().optional(),
      }),
    },
    (a) =>
      run(async () => {
        const q = parseSearchQuery({ q: a.query, mode: a.mode, path_prefix: a.path_prefix, limit: str(a.limit), page: a.page });
        return toWireSearchPage(await service.searchMemories(caller, a.memory_store_id, q));
      }, 'memory_search'),
  );
}
