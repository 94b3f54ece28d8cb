/** @module MCP tools over history (issue 15): memory_history (a memory's versions) and memory_diff (a unified diff). */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { MnemoError, excerpt, parseDiffQuery, parseVersionListQuery, type Caller, type Service } from '../../src/index.js';
import { toWireVersion, toWirePage } from '../wire.js';
import { toWireDiff } from '../wire-history.js';
import type { ToolRunner } from './server.js';
import { pathOrId, toolArgs } from './tool-args.js';

const store = z.string().describe('The memory store id (memstore_…); memory_list_stores lists them.');

export function registerHistoryTools(server: McpServer, service: Service, caller: Caller, run: ToolRunner): void {
  server.registerTool(
    'memory_history',
    {
      description:
        'List the versions of one memory, newest first: operation (created, modified, deleted), path, content_sha256, size, who and when (no content; memory_diff shows what changed). By path (the live memory there) or by memory_id (also once it is deleted).',
      inputSchema: toolArgs({
        memory_store_id: store,
        path: z.string().optional().describe('Path of a live memory, e.g. /notes/plan.md'),
        memory_id: z.string().optional().describe('Memory id (mem_…), also of a deleted memory'),
        limit: z.number().int().optional().describe('Versions per page, 1 to 100 (default 20)'),
        page: z.string().optional().describe('next_page from a previous call'),
      }),
    },
    (a) =>
      run(async () => {
        const which = pathOrId(a);
        let memoryId: string;
        if ('memoryId' in which) memoryId = which.memoryId;
        else {
          const m = await service.getMemoryByPath(caller, a.memory_store_id, which.path);
          if (!m) throw new MnemoError('not_found', `no memory at ${excerpt(which.path)} (a deleted one's history is reachable by memory_id)`);
          memoryId = m.id;
        }
        const q = parseVersionListQuery({ memory_id: memoryId, limit: a.limit === undefined ? undefined : String(a.limit), page: a.page });
        return toWirePage(await service.listVersions(caller, a.memory_store_id, q), (v) => toWireVersion(v, 'basic'));
      }),
  );

  server.registerTool(
    'memory_diff',
    {
      description:
        'Show what a version changed, as a unified diff: against the same memory\'s previous version by default (empty content for its first), or against any version of the store (against_version_id). Version ids come from memory_history. minimal: false means the versions differ in too many places for the smallest diff: every line between their common first and last lines is shown removed, then added.',
      inputSchema: toolArgs({
        memory_store_id: store,
        memory_version_id: z.string().describe('The version to show (memver_…)'),
        against_version_id: z.string().optional().describe('Compare with this version instead of the previous one'),
      }),
    },
    (a) =>
      run(async () => {
        const { against } = parseDiffQuery({ against: a.against_version_id });
        return toWireDiff(await service.diffVersion(caller, a.memory_store_id, a.memory_version_id, against));
      }, 'memory_diff'),
  );
}
