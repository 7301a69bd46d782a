import cors from '@fastify/cors';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { newId } from '../domain/ids.js';
import { AppError } from '../errors.js';
import type { Logger } from '../ports/logger.js';
import { mountMcp, type McpAuthenticate, type McpRouteOptions } from './mcpRoutes.js';

export interface AppDeps {
  logger: Logger & FastifyServerOptions['loggerInstance'];
  bodyLimitBytes: number;
  createMcpServer: McpRouteOptions['createServer'];
  /** Puts MCP over HTTP behind authentication; modules can also set it with `authenticateMcpWith`. */
  authenticateMcp?: McpAuthenticate;
}

/** Seed 000's error body, used by every route outside `/api/v1`. */
const errorBody = (code: string, message: string) => ({ error: { code, message } });

/** Codes of seed 000 that keep their name; other errors are named after their status. */
const SEED_CODES = new Set(['embeddings_disabled', 'not_configured', 'tool_error', 'timeout']);
const codeForStatus = (status: number): string =>
  status === 404 ? 'not_found' : status === 408 ? 'timeout' : status === 409 ? 'conflict' : status === 413 ? 'payload_too_large' : 'bad_request';

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
    logController: new DebugRequestLogs(),
  });
  await app.register(cors, { origin: true });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.setErrorHandler((error, request, reply) => {
    const status = error instanceof AppError ? error.statusCode : (error as { statusCode?: number }).statusCode;
    if (status && status >= 400 && status < 500) {
      const code = error instanceof AppError && SEED_CODES.has(error.code) ? error.code : codeForStatus(status);
      return reply.status(status).send(errorBody(code, (error as Error).message));
    }
    if (error instanceof AppError && SEED_CODES.has(error.code)) {
      return reply.status(error.statusCode).send(errorBody(error.code, error.message));
    }
    request.log.error({ err: error, requestId: request.id }, 'unexpected error');
    return reply.status(500).send(errorBody('internal', `Internal error (request id ${request.id})`));
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send(errorBody('not_found', `No route ${request.method} ${request.url}`)),
  );

  app.get('/health', () => ({ status: 'ok' }));
  mountMcp(app, {
    createServer: deps.createMcpServer,
    logger: deps.logger,
    maxRequestBodySize: deps.bodyLimitBytes,
    authenticate: deps.authenticateMcp,
  });
  return app;
};
