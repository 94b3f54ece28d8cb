/**
 * @module Malformed MCP request params are the caller's mistake: answer JSON-RPC -32602 (invalid
 * params) naming the field, not -32603 (internal error) with a dump of zod issues.
 *
 * Why a guard on the transport: in @modelcontextprotocol/sdk 1.32.2 a tool's own arguments are
 * checked against its input schema by McpServer, and a wrong-typed argument (`memory_store_id: 5`,
 * `limit: "x"`, `path: null`) already comes back as a tool result with `isError` that names the
 * argument (test/api/mcp-errors.test.ts keeps it so). But the request itself (`params`, its `name`
 * and `arguments`) is parsed by Protocol.setRequestHandler before anything else, and a ZodError
 * thrown there has no JSON-RPC code, so Protocol answers -32603. The SDK offers no hook between
 * the transport and that parse, so this checks each request against the same SDK schema first.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';

/** The requests this server answers, with the schema Protocol parses each with (see createMcpServer). */
const SCHEMAS: Record<string, { safeParse(v: unknown): { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } } }> = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  'tools/list': ListToolsRequestSchema,
  'tools/call': CallToolRequestSchema,
};

/** `params.arguments: expected record, received number; …`, or null when the request is well formed. */
export function invalidParams(message: JSONRPCMessage): string | null {
  if (!('method' in message) || !('id' in message)) return null;
  const schema = SCHEMAS[message.method];
  if (!schema) return null;
  const parsed = schema.safeParse(message);
  if (parsed.success) return null;
  const issues = parsed.error?.issues ?? [];
  const what = issues.map((i) => `${i.path.map(String).join('.') || 'request'}: ${i.message}`).join('; ');
  return `Invalid params for ${message.method}: ${what || 'malformed request'}`;
}

/** Call after `server.connect(transport)`: answers malformed requests itself, passes the rest on. */
export function guardParams(transport: Transport): void {
  const deliver = transport.onmessage;
  if (!deliver) throw new Error('guardParams: connect the server to the transport first');
  transport.onmessage = (message, extra) => {
    const problem = invalidParams(message);
    if (problem === null || !('id' in message)) return deliver(message, extra);
    void transport.send({ jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.InvalidParams, message: problem } });
  };
}
