/**
 * @module createMcpServer: one MCP server bound to one caller (an API key), whose tools call the
 * service, so the key's role and store grants apply exactly as on the HTTP API.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { databaseBusy, diskFull, isDatabaseBusy, isDiskFull, isMnemoError, packageVersion, type Caller, type Service } from '../../src/index.js';
import { registerCheckpointTools } from './tools-checkpoints.js';
import { registerHistoryTools } from './tools-history.js';
import { registerMemoryTools } from './tools-memories.js';

export interface McpDeps {
  service: Service;
  caller: Caller;
  /**
   * Run before every tool call (`mnemo mcp` on stdio reads its key again): a refusal it throws or promises
   * is the call's answer, and the tool does not run. Undefined: nothing to wait for.
   */
  checkCaller?: () => Promise<void> | undefined;
  log?: (line: string) => void;
}

/**
 * Runs a tool body and turns its answer or its refusal into a tool result a model can read (a
 * promised one once it settles). `tool` names the tool where a refusal has a hint of its own (TOOL_HINTS).
 */
export type ToolRunner = (fn: () => unknown, tool?: string) => CallToolResult | Promise<CallToolResult>;

export function createMcpServer({ service, caller, checkCaller, log = console.error }: McpDeps): McpServer {
  const server = new McpServer({ name: 'mnemo', version: packageVersion() }, { capabilities: { tools: {} } });
  const answer = (value: unknown): CallToolResult => ({ content: [{ type: 'text', text: typeof value === 'string' ? value : JSON.stringify(value, null, 2) }] });
  const refusal = (err: unknown, tool?: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text: toolErrorText(err, log, tool) }] });
  const settle: ToolRunner = (fn, tool) => {
    try {
      const value = fn();
      return value instanceof Promise ? value.then(answer, (err: unknown) => refusal(err, tool)) : answer(value);
    } catch (err) {
      return refusal(err, tool);
    }
  };
  const run: ToolRunner = !checkCaller
    ? settle
    : (fn, tool) => {
        const checked = checkCaller();
        return checked ? checked.then(() => settle(fn, tool), (err: unknown) => refusal(err, tool)) : settle(fn, tool);
      };
  registerMemoryTools(server, service, caller, run);
  registerCheckpointTools(server, service, caller, run);
  registerHistoryTools(server, service, caller, run);
  return server;
}

/**
 * `<code>: <message>` for domain refusals, with a hint on what to do next. Anything else is logged
 * and reported without details, so no host path or stack trace reaches the model.
 */
export function toolErrorText(err: unknown, log: (line: string) => void, tool?: string): string {
  // A full disk under the database is the operator's to fix, not a fault (storage/common/disk-full.ts).
  if (isDiskFull(err)) err = diskFull(err);
  if (isDatabaseBusy(err)) err = databaseBusy(err);
  if (isMnemoError(err)) {
    const hint = (tool === undefined ? undefined : TOOL_HINTS[tool]?.[err.code]) ?? HINTS[err.code] ?? '';
    const conflict = err.details.conflicting_path ? ` (conflicting_path: ${err.details.conflicting_path})` : '';
    return `Error ${err.code}: ${argumentNamed(err.message, err.details.field, tool)}${conflict}${hint ? `\n${hint}` : ''}`;
  }
  log(`mcp tool failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  return 'Error internal: the tool failed unexpectedly; the server log has the details. Retrying may help.';
}

/**
 * The tools whose arguments have other names than the HTTP fields of the parsers they share with
 * the API (src/validate): a refusal that names such a field (`q: is required …`) names the argument
 * the caller sent instead (`query: is required …`).
 */
const ARGUMENT_NAMES: Partial<Record<string, Record<string, string>>> = {
  memory_search: { q: 'query' },
  memory_diff: { against: 'against_version_id' },
};

/** `message` with its leading field name (`q: …`, `q is …`) replaced by the tool's argument name. */
function argumentNamed(message: string, field: string | undefined, tool: string | undefined): string {
  const argument = field === undefined || tool === undefined ? undefined : ARGUMENT_NAMES[tool]?.[field];
  if (argument === undefined || !message.startsWith(field!)) return message;
  const rest = message.slice(field!.length);
  return rest.startsWith(':') || rest.startsWith(' ') ? argument + rest : message;
}

const HINTS: Partial<Record<string, string>> = {
  unauthenticated: 'This API key (MNEMO_API_KEY) no longer works: nothing was done. Ask an admin for a new key and restart mnemo mcp with it.',
  precondition_failed: 'Read the memory again (memory_read) and retry with its current content_sha256.',
  path_conflict: 'Choose another path, or read the conflicting memory first.',
  forbidden: 'This API key does not allow this action.',
  budget_exceeded: 'Call memory_restore again with max_bytes at least the size named above.',
  not_found: 'Check the id or path (memory_list, memory_search).',
  conflict: 'The request conflicts with the state of the store (e.g. a redacted version has no content to diff).',
  limit_exceeded: 'The store is at a limit: delete memories (memory_delete) or checkpoints (memory_delete_checkpoint) that are no longer needed, or ask the operator to raise it.',
  mount_failed: 'The server could not mount the stores; the operator must fix its mount root.',
  storage_full: 'The disk holding the memory database is full: nothing was written. Ask the operator to free space, then retry.',
  database_locked: 'Another process holds the memory database\'s write lock (an operator\'s tool): nothing was written. This is temporary: retry in a few seconds.',
  unavailable: 'The memory database cannot be reached right now (the server recovers by itself when it is back): retry in a few seconds.',
};

/** Where one tool's refusal means something narrower than the code's general hint says. */
const TOOL_HINTS: Partial<Record<string, Partial<Record<string, string>>>> = {
  // Its only conflict: other writers changed the memory under every attempt. Nothing was written.
  memory_edit: {
    conflict: 'Nothing was changed. Read the memory again (memory_read), check that the edit still fits its current text, then retry memory_edit.',
  },
  // Its conflict: expected_latest_checkpoint_id is not the session's latest (a newer one was saved).
  memory_checkpoint: {
    conflict: 'Nothing was saved. memory_restore the latest checkpoint of this session, merge it with your state, then save again with its id as expected_latest_checkpoint_id.',
  },
  // Its conflict: the checkpoint is its session's latest, which is kept.
  memory_delete_checkpoint: {
    conflict: 'Nothing was deleted: the latest checkpoint of a session is kept. Save a newer one (memory_checkpoint) first.',
  },
};
