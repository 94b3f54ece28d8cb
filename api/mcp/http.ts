/**
 * @module POST /mcp: MCP over Streamable HTTP, stateless (one server per request, JSON responses),
 * behind the same API-key auth as /v1, so each call acts as the key that sent it.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Hono } from 'hono';
import type { Service } from '../../src/index.js';
import type { AppEnv } from '../env.js';
import { guardParams } from './params-guard.js';
import { createMcpServer } from './server.js';

export function mcpRoutes(service: Service, log: (line: string) => void) {
  const app = new Hono<AppEnv>();
  // The methods the transport answers (it refuses others itself); named so /mcp has an Allow list.
  app.on(['GET', 'POST', 'DELETE'], '/', async (c) => {
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
