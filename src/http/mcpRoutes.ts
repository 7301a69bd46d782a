import { createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthInfo, McpServer } from '@modelcontextprotocol/server';
import type { Actor } from '../domain/metadata.js';
import { AppError } from '../errors.js';
import type { McpAccess } from '../mcp/server.js';
import type { Logger } from '../ports/logger.js';

/** Who calls over MCP, and what they may see and call. */
export interface McpCaller {
  actor: Actor;
  access: McpAccess;
}

/** Resolves the caller of a request; throws a 401 AppError when credentials are required and bad. */
export type McpAuthenticate = (request: FastifyRequest) => Promise<McpCaller>;

export interface McpRouteOptions {
  createServer: (actor: Actor, access?: McpAccess) => McpServer;
  logger: Logger;
  maxRequestBodySize: number;
  authenticate?: McpAuthenticate;
}

const authenticators = new WeakMap<FastifyInstance, McpAuthenticate>();

/** Lets a module that owns authentication put MCP over HTTP behind it. */
export const authenticateMcpWith = (app: FastifyInstance, authenticate: McpAuthenticate) => {
  authenticators.set(app, authenticate);
};

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
      return caller ? createServer(caller.actor, caller.access) : createServer(anonymous);
    },
    { onerror, maxRequestBodySize },
  );
  const serve = toNodeHandler(handler, { onerror, maxRequestBodySize });

  const route = async (request: FastifyRequest, reply: FastifyReply) => {
    const authenticateCaller = authenticate ?? authenticators.get(app);
    if (authenticateCaller) {
      let caller: McpCaller;
      try {
        caller = await authenticateCaller(request);
      } catch (error) {
        if (!(error instanceof AppError) || error.statusCode !== 401) throw error;
        return reply
          .status(401)
          .header('www-authenticate', 'Bearer')
          .send({ jsonrpc: '2.0', id: null, error: { code: -32001, message: error.message } });
      }
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
  for (const url of ['/mcp', '/']) app.post(url, route);
  app.get('/mcp', route);
  app.delete('/mcp', route);
  app.addHook('onClose', () => handler.close());
};
