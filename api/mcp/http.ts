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
  // The methods the transport answers; named so /mcp has an Allow list (with HEAD, as wherever GET is).
  app.on(['GET', 'POST', 'DELETE'], '/', async (c) => {
    const server = createMcpServer({ service, caller: { ...c.var.caller, face: 'mcp' }, log });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    guardParams(transport);
    try {
      // Hono routes a HEAD here as a GET; the transport would refuse it by name (405, an Allow list
      // without HEAD). It answers the GET instead, and api/head.ts drops the body.
      const req = c.req.method === 'HEAD' ? new Request(c.req.raw, { method: 'GET' }) : c.req.raw;
      return await transport.handleRequest(req);
    } finally {
      await server.close();
    }
  });
  return app;
}
