/**
 * @module The MCP SDK's own client against mnemo: over Streamable HTTP (POST <url>/mcp with an API
 * key header) or over stdio (`node dist/src/main.js mcp` as a child the transport starts and stops).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MAIN_JS, type RunningServer } from './server.js';

export type McpKind = 'http' | 'stdio';

export interface ToolAnswer {
  isError: boolean;
  text: string;
  /** The text parsed as JSON, or undefined when it is not JSON (errors are plain text). */
  json: any;
}

export interface McpSession {
  client: Client;
  call(name: string, args?: Record<string, unknown>): Promise<ToolAnswer>;
  close(): Promise<void>;
}

/** `databaseUrl`: the PostgreSQL database a stdio `mnemo mcp` opens (the server's), instead of the server's data dir. */
export async function connectMcp(kind: McpKind, server: RunningServer, apiKey: string, { databaseUrl }: { databaseUrl?: string } = {}): Promise<McpSession> {
  const client = new Client({ name: 'mnemo-test', version: '1.0.0' });
  const transport =
    kind === 'http'
      ? new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { 'x-api-key': apiKey } } })
      : new StdioClientTransport({
          command: process.execPath,
          args: [MAIN_JS, 'mcp', ...(databaseUrl ? ['--database-url', databaseUrl] : ['--data-dir', server.dataDir])],
          env: { PATH: process.env['PATH'] ?? '', MNEMO_API_KEY: apiKey },
          stderr: 'pipe',
        });
  await client.connect(transport);
  return {
    client,
    async call(name, args = {}) {
      const res = await client.callTool({ name, arguments: args });
      const content = res.content as { type: string; text: string }[];
      const text = content.map((c) => c.text).join('\n');
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { isError: res.isError === true, text, json };
    },
    close: () => client.close(),
  };
}
