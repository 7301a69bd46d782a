import type { FastifyReply, FastifyRequest } from 'fastify';
import { apiErrorBody, correlationIdOf } from './api/apiErrors.js';

/** The HTTP surfaces, each with its own error format. */
export type Surface = 'api' | 'mcp' | 'tools';

/** Which surface a request belongs to: by the route it matched, or by its path when none did. */
export const surfaceOf = (request: FastifyRequest): Surface => {
  const path = request.routeOptions.url ?? request.url.split('?')[0] ?? '';
  if (path === '/api/v1' || path.startsWith('/api/v1/')) return 'api';
  if (path === '/mcp' || (path === '/' && request.method === 'POST')) return 'mcp';
  return 'tools';
};

/** The error code of the `/tools` format for a status (seed 000 names not_found, timeout and bad_request). */
export const toolsCodeForStatus = (status: number): string =>
  ({
    401: 'unauthorized',
    403: 'forbidden',
    404: 'not_found',
    405: 'method_not_allowed',
    408: 'timeout',
    409: 'conflict',
    413: 'payload_too_large',
    414: 'uri_too_long',
    429: 'rate_limited',
  })[status] ?? 'bad_request';

/** Seed 000's error body, used by every route outside `/api/v1` and MCP. */
export const toolsErrorBody = (code: string, message: string) => ({ error: { code, message } });

/** A JSON-RPC error without a request id, as MCP's Streamable HTTP transport answers refusals. */
export const jsonRpcErrorBody = (code: number, message: string) => ({
  jsonrpc: '2.0',
  id: null,
  error: { code, message },
});

/** Refuses a request before its handler runs, in the error format of the surface it addressed. */
export const refuse = (request: FastifyRequest, reply: FastifyReply, status: number, message: string) => {
  switch (surfaceOf(request)) {
    case 'api': {
      const correlationId = correlationIdOf(request);
      return reply
        .status(status)
        .header('x-correlation-id', correlationId)
        .send(apiErrorBody(status, message, correlationId));
    }
    case 'mcp':
      return reply.status(status).send(jsonRpcErrorBody(-32000, message));
    case 'tools':
      return reply.status(status).send(toolsErrorBody(toolsCodeForStatus(status), message));
  }
};
