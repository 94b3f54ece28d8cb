/** @module `mnemo mcp`: the MCP server over stdio, acting as one API key (MNEMO_API_KEY). */
import type { Service } from '../../src/index.js';
import { guardParams } from './params-guard.js';
import { createMcpServer } from './server.js';
import { LineTransport } from './stdio-transport.js';

export interface StdioOptions {
  service: Service;
  /** The API key secret; its role and store grants apply to every tool call. */
  apiKey: string;
  log?: (line: string) => void;
}

/**
 * Connects to stdin/stdout and resolves once stdin has ended and every request read from it is
 * answered. The key is authenticated at start, and read again before each tool call: from the
 * first call after a revoke on, every call is refused `unauthenticated` and its tool does nothing.
 */
export async function serveMcpStdio({ service, apiKey, log = console.error }: StdioOptions): Promise<void> {
  const key = await service.keys.authenticate(apiKey);
  const caller = {
    workspaceId: key.workspaceId,
    actor: { type: 'api_actor' as const, apiKeyId: key.id },
    grant: { role: key.role, storeIds: key.storeIds, operator: key.allWorkspaces },
    face: 'mcp' as const,
  };
  // Every tool call first reads its key again (one lookup by id): a revoke made anywhere refuses the next call.
  const server = createMcpServer({ service, caller, checkCaller: async () => void (await service.keys.current(caller)), log });
  const transport = new LineTransport({ log });
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  await server.connect(transport);
  guardParams(transport);
  log(`mnemo mcp: serving on stdio as ${key.id} (${key.role})`);
  await closed;
  await server.close();
}
