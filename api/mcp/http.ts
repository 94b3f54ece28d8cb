/**
 * @module POST /mcp: MCP over Streamable HTTP, stateless (one server per request, JSON responses),
 * behind the same API-key auth as /v1, so each call acts as the key that sent it. GET, HEAD and
 * DELETE are 405 (see mcpRoutes).
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Hono } from 'hono';
import type { Service } from '../../src/index.js';
import type { AppEnv } from '../env.js';
import { guardParams } from './params-guard.js';
import { createMcpServer } from './server.js';

export function mcpRoutes(service: Service, log: (line: string) => void) {
  const app = new Hono<AppEnv>();
  // POST only. A stateless server has no stream of its own to offer on GET (nothing to send
  // between requests) and no session to end on DELETE; the MCP spec's answer to both is 405, which
  // the app's notFound gives with `Allow: POST`. Answered by the transport instead, a GET was a
  // 200 event stream that ended at once, and the SDK's client reopened it every second while idle.
  app.post('/', async (c) => {
    const server = createMcpServer({ service, caller: { ...c.var.caller, face: 'mcp' }, log });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    guardParams(transport);
    try {
      return await transport.handleRequest(c.req.raw);
    } finally {
      await server.close();
    }
  });
  return app;
}
