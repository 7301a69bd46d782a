import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Actor } from '../domain/metadata.js';
import type { McpAccess } from '../mcp/access.js';

/** Who calls over MCP, and what they may see and call. */
export interface McpCaller {
  actor: Actor;
  access: McpAccess;
}

/** Resolves the caller of a request; throws a 401 AppError when credentials are required and bad. */
export type McpAuthenticate = (request: FastifyRequest) => Promise<McpCaller>;

const authenticators = new WeakMap<FastifyInstance, McpAuthenticate>();

/** The authenticator a module put MCP over HTTP behind, if any. */
export const authenticatorOf = (app: FastifyInstance): McpAuthenticate | undefined => authenticators.get(app);

/** The authenticated caller of each MCP request. */
const callers = new WeakMap<FastifyRequest, McpCaller>();

/** Records who an MCP request comes from, once authenticated. */
export const rememberMcpCaller = (request: FastifyRequest, caller: McpCaller) => {
  callers.set(request, caller);
};

/** Who calls over MCP, once authenticated; undefined when MCP needs no credentials. */
export const mcpCallerOf = (request: FastifyRequest): McpCaller | undefined => callers.get(request);

/** Lets a module that owns authentication put MCP over HTTP behind it. */
export const authenticateMcpWith = (app: FastifyInstance, authenticate: McpAuthenticate) => {
  authenticators.set(app, authenticate);
};
