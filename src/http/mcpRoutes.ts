import { createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { McpServer } from '@modelcontextprotocol/server';
import type { Actor } from '../domain/metadata.js';
import type { Logger } from '../ports/logger.js';

export interface McpRouteOptions {
  createServer: (actor: Actor) => McpServer;
  logger: Logger;
  maxRequestBodySize: number;
}

/**
 * Streamable HTTP at `/mcp`, serving both protocol eras from one handler. `POST /` answers too, so
 * a client configured with just the server's base URL works.
 */
export const mountMcp = (app: FastifyInstance, { createServer, logger, maxRequestBodySize }: McpRouteOptions) => {
  const actor: Actor = { subject: 'anonymous', tenant: null, via: 'mcp' };
  const onerror = (error: Error) => logger.warn({ err: error }, 'MCP request failed');
  const handler = createMcpHandler(() => createServer(actor), { onerror, maxRequestBodySize });
  const serve = toNodeHandler(handler, { onerror, maxRequestBodySize });

  const route = async (request: FastifyRequest, reply: FastifyReply) => {
    // The SDK writes the response itself; keep the headers hooks already set (CORS, request id).
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) reply.raw.setHeader(name, value);
    }
    reply.hijack();
    await serve(request.raw, reply.raw, request.body);
  };
  for (const url of ['/mcp', '/']) app.post(url, route);
  app.get('/mcp', route);
  app.delete('/mcp', route);
  app.addHook('onClose', () => handler.close());
};
