import { createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthInfo, McpServer } from '@modelcontextprotocol/server';
import type { Actor } from '../domain/metadata.js';
import { AppError } from '../errors.js';
import { FULL_ACCESS, type McpAccess } from '../mcp/access.js';
import { authenticatorOf, mcpCallerOf, rememberMcpCaller, type McpAuthenticate, type McpCaller } from './mcpCallers.js';
import type { Logger } from '../ports/logger.js';
import { SELF_AUTHENTICATING } from './api/guardOtherSurfaces.js';
import { jsonRpcErrorBody } from './surfaceErrors.js';

export interface McpRouteOptions {
  createServer: (actor: Actor, access?: McpAccess) => McpServer;
  logger: Logger;
  maxRequestBodySize: number;
  authenticate?: McpAuthenticate;
}

/**
 * Streamable HTTP at `/mcp`, serving both protocol eras from one handler. `POST /` answers too, so
 * a client configured with just the server's base URL works.
 */
export const mountMcp = (app: FastifyInstance, { createServer, logger, maxRequestBodySize, authenticate }: McpRouteOptions) => {
  const anonymous: Actor = { subject: 'anonymous', tenant: null, via: 'mcp' };
  const onerror = (error: Error) => logger.warn({ err: error }, 'MCP request failed');
  const handler = createMcpHandler(
    ({ authInfo }) => {
      const caller = authInfo?.extra?.caller as McpCaller | undefined;
      return caller ? createServer(caller.actor, caller.access) : createServer(anonymous, { ...FULL_ACCESS, unauthenticated: true });
    },
    { onerror, maxRequestBodySize },
  );
  const serve = toNodeHandler(handler, { onerror, maxRequestBodySize });

  // Before the rate limit, which counts per caller.
  const onRequest = async (request: FastifyRequest, reply: FastifyReply) => {
    const authenticateCaller = authenticate ?? authenticatorOf(app);
    if (!authenticateCaller) return;
    try {
      rememberMcpCaller(request, await authenticateCaller(request));
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'AUTHENTICATION_ERROR') throw error;
      return reply.status(401).header('www-authenticate', 'Bearer').send(jsonRpcErrorBody(-32001, error.message));
    }
  };

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = mcpCallerOf(request);
    if (caller) {
      const auth: AuthInfo = { token: '', clientId: caller.actor.subject, scopes: [...(caller.access.scopes ?? [])], extra: { caller } };
      (request.raw as typeof request.raw & { auth?: AuthInfo }).auth = auth;
    }
    // The SDK writes the response itself; keep the headers hooks already set (CORS, request id).
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) reply.raw.setHeader(name, value);
    }
    reply.hijack();
    await serve(request.raw, reply.raw, request.body);
  };
  const options = { onRequest, config: SELF_AUTHENTICATING };
  for (const url of ['/mcp', '/']) app.post(url, options, handle);
  app.get('/mcp', options, handle);
  app.delete('/mcp', options, handle);
  app.addHook('onClose', () => handler.close());
};
