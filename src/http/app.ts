import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { newId } from '../domain/ids.js';
import type { ClassifiedError } from '../errors.js';
import type { Logger } from '../ports/logger.js';
import { refuseOtherMethod } from './allowedMethods.js';
import { parseJsonWithinDepth } from './jsonBodies.js';
import { limitCallers, type CallerRateLimits } from './rateLimits.js';
import { guardHostAndOrigin, type BrowserPolicy } from './hostAndOriginGuard.js';
import type { McpAuthenticate } from './mcpCallers.js';
import { mountMcp, type McpRouteOptions } from './mcpRoutes.js';
import { classifyHttpError } from './httpRefusals.js';
import { jsonRpcErrorBody, refuse, surfaceOf } from './surfaceErrors.js';
import { toolApiErrorBody } from './toolApiErrors.js';

export interface AppDeps {
  logger: Logger & FastifyServerOptions['loggerInstance'];
  bodyLimitBytes: number;
  createMcpServer: McpRouteOptions['createServer'];
  /** Puts MCP over HTTP behind authentication; modules can also set it with `authenticateMcpWith`. */
  authenticateMcp?: McpAuthenticate;
  /** Which hosts and origins browsers may reach the server by, besides localhost ones. */
  browsers: BrowserPolicy;
  rateLimits: CallerRateLimits;
}

/** The error body of a route outside `/api/v1`: the tool API's, or JSON-RPC's on MCP; an unexpected error names only the request id. */
const errorBody = (request: FastifyRequest, error: ClassifiedError) => {
  const masked = `Internal error (request id ${request.id})`;
  return surfaceOf(request) === 'mcp'
    ? jsonRpcErrorBody(-32000, error.expected ? error.detail : masked)
    : toolApiErrorBody(error, masked);
};

/** Requests are logged at debug, one line each when done: at the default level a busy server's log stays readable. */
class DebugRequestLogs extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const fields = { method: request.method, url: request.url, statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime) };
    if (error) reply.log.error({ ...fields, err: error }, 'request errored');
    else reply.log.debug(fields, 'request completed');
  }
}

/** The HTTP face of the ledger; `inject()` tests it without a socket. */
export const buildApp = async (deps: AppDeps): Promise<FastifyInstance> => {
  const app = Fastify({
    loggerInstance: deps.logger,
    bodyLimit: deps.bodyLimitBytes,
    requestIdHeader: 'x-request-id',
    genReqId: () => newId(),
    // A URL the router cannot take (a path parameter over 100 characters, bad percent-encoding).
    frameworkErrors: (error, request, reply) => {
      const message = error.statusCode === 414 ? 'A path segment is longer than 100 characters' : error.message;
      void refuse(request, reply, error.statusCode ?? 400, message);
    },
    logController: new DebugRequestLogs(),
  });
  parseJsonWithinDepth(app);
  await guardHostAndOrigin(app, deps.browsers, deps.logger);
  limitCallers(app, deps.rateLimits);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // Every answer is read as the type it declares, never sniffed into script or HTML.
    reply.header('x-content-type-options', 'nosniff');
  });
  app.setErrorHandler((error, request, reply) => {
    const classified = classifyHttpError(error);
    if (!classified.expected) request.log.error({ err: error, requestId: request.id }, 'unexpected error');
    return reply.status(classified.status).send(errorBody(request, classified));
  });
  app.setNotFoundHandler((request, reply) => {
    if (refuseOtherMethod(app, request, reply)) return reply;
    return refuse(request, reply, 404, `No route ${request.method} ${request.url}`);
  });

  app.get('/health', () => ({ status: 'ok' }));
  mountMcp(app, {
    createServer: deps.createMcpServer,
    logger: deps.logger,
    maxRequestBodySize: deps.bodyLimitBytes,
    authenticate: deps.authenticateMcp,
  });
  return app;
};
