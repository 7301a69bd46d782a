import type { FastifyReply, FastifyRequest } from 'fastify';
import { apiErrorBody, correlationIdOf } from './api/apiErrors.js';
import { classifyHttpError, httpRefusal } from './httpRefusals.js';
import { toolApiErrorBody } from './toolApiErrors.js';

/** The HTTP surfaces, each with its own error format. */
export type Surface = 'api' | 'mcp' | 'tools';

/** Which surface a request belongs to: by the route it matched, or by its path when none did. */
export const surfaceOf = (request: FastifyRequest): Surface => {
  const path = request.routeOptions.url ?? request.url.split('?')[0] ?? '';
  if (path === '/api/v1' || path.startsWith('/api/v1/')) return 'api';
  if (path === '/mcp' || (path === '/' && request.method === 'POST')) return 'mcp';
  return 'tools';
};

/** A JSON-RPC error without a request id, as MCP's Streamable HTTP transport answers refusals. */
export const jsonRpcErrorBody = (code: number, message: string) => ({
  jsonrpc: '2.0',
  id: null,
  error: { code, message },
});

/** Refuses a request before its handler runs, in the error format of the surface it addressed. */
export const refuse = (request: FastifyRequest, reply: FastifyReply, status: number, message: string) => {
  const refusal = classifyHttpError(httpRefusal(status, message));
  switch (surfaceOf(request)) {
    case 'api': {
      const correlationId = correlationIdOf(request);
      return reply.status(status).header('x-correlation-id', correlationId).send(apiErrorBody(refusal, correlationId));
    }
    case 'mcp':
      return reply.status(status).send(jsonRpcErrorBody(-32000, message));
    case 'tools':
      return reply.status(status).send(toolApiErrorBody(refusal));
  }
};
