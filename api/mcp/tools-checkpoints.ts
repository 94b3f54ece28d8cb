/** @module MCP tools for agent continuity: memory_checkpoint, memory_restore, memory_delete_checkpoint. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import {
  CHECKPOINT_FIELDS,
  CHECKPOINT_REFERENCE,
  CONTINUITY_LIMITS,
  MnemoError,
  assertScopeId,
  parseLocator,
  parseRestore,
  type Caller,
  type Service,
} from '../../src/index.js';
import { restoreWireBytes, toWireCheckpoint, toWireRestore } from '../wire-continuity.js';
import type { ToolRunner } from './server.js';
import { toolArgs } from './tool-args.js';

export function registerCheckpointTools(server: McpServer, service: Service, caller: Caller, run: ToolRunner): void {
  const ckpt = service.checkpoints;

  server.registerTool(
    'memory_checkpoint',
    {
      description:
        'Save your task state before the context is compacted or the session restarts. capsule is the short note you want back first (at most 16 KiB); references name memories (path or memory_id) with the content_sha256 you relied on. Pass expected_latest_checkpoint_id (or null for the first) to refuse overwriting a newer checkpoint.',
      // The same fields the HTTP route takes (validation is ckpt.parse, in src/), with each
      // reference's shape spelled out for the agent.
      inputSchema: toolArgs({ memory_store_id: z.string(), ...CHECKPOINT_FIELDS, references: z.array(CHECKPOINT_REFERENCE).nullish() }),
    },
    ({ memory_store_id, ...body }) =>
      run(async () => {
        const c = await ckpt.create(caller, memory_store_id, ckpt.parse(body));
        const { type, id, revision, locator, size_bytes } = toWireCheckpoint(c);
        return { type, id, revision, locator, size_bytes };
      }, 'memory_checkpoint'),
  );

  server.registerTool(
    'memory_restore',
    {
      description:
        'Get a checkpoint back within a byte budget: goal, constraints, decisions, open tasks, next action, capsule and each reference with its status (ok, changed, missing, expired). Name it by checkpoint_id, by locator, or by agent_id + session_id for the latest.',
      inputSchema: toolArgs({
        memory_store_id: z.string().optional().describe('Required unless locator is given'),
        checkpoint_id: z.string().optional(),
        locator: z.string().optional(),
        agent_id: z.string().optional(),
        session_id: z.string().optional(),
        max_bytes: z
          .number()
          .int()
          .optional()
          .describe(`${CONTINUITY_LIMITS.restoreMin} to ${CONTINUITY_LIMITS.restoreMax}; default ${CONTINUITY_LIMITS.restoreDefault}`),
      }),
    },
    (a) =>
      run(async () => {
        const { maxBytes } = parseRestore({ max_bytes: a.max_bytes });
        // One way to name the checkpoint: given two, they may name different ones, so neither is picked.
        const ways = [a.locator !== undefined && 'locator', a.checkpoint_id !== undefined && 'checkpoint_id', (a.agent_id ?? a.session_id) !== undefined && 'agent_id and session_id'].filter((w) => w !== false);
        if (ways.length > 1) throw new MnemoError('invalid_request', `give one of locator, checkpoint_id, or agent_id and session_id, not ${ways.join(' and ')}`, { field: 'checkpoint_id' });
        const fromLocator = a.locator === undefined ? null : parseLocator(a.locator);
        if (fromLocator && a.memory_store_id !== undefined && a.memory_store_id !== fromLocator.storeId) {
          throw new MnemoError('invalid_request', 'memory_store_id names another store than locator: give locator alone', { field: 'memory_store_id' });
        }
        const storeId = fromLocator?.storeId ?? a.memory_store_id;
        if (storeId === undefined) throw new MnemoError('invalid_request', 'give memory_store_id or locator', { field: 'memory_store_id' });
        const checkpointId = fromLocator?.checkpointId ?? a.checkpoint_id;
        let target: { checkpointId: string } | { agentId: string; sessionId: string };
        if (checkpointId !== undefined) target = { checkpointId };
        else if (a.agent_id !== undefined && a.session_id !== undefined) {
          // Checked as the HTTP route checks them: a malformed id is invalid_request naming it, never "no checkpoint".
          target = { agentId: assertScopeId(a.agent_id, 'agent_id'), sessionId: assertScopeId(a.session_id, 'session_id') };
        }
        else throw new MnemoError('invalid_request', 'give checkpoint_id, locator, or agent_id and session_id', { field: 'checkpoint_id' });
        // Compact, as restoreWireBytes measured it: the text is exactly size_bytes long, within max_bytes.
        return JSON.stringify(toWireRestore(await ckpt.restore(caller, storeId, target, maxBytes, restoreWireBytes)));
      }),
  );

  server.registerTool(
    'memory_delete_checkpoint',
    {
      description: 'Delete a checkpoint that is no longer the latest of its session.',
      inputSchema: toolArgs({ memory_store_id: z.string(), checkpoint_id: z.string() }),
    },
    (a) =>
      run(async () => {
        await ckpt.delete(caller, a.memory_store_id, a.checkpoint_id);
        return { type: 'checkpoint_deleted', id: a.checkpoint_id };
      }, 'memory_delete_checkpoint'),
  );
}
