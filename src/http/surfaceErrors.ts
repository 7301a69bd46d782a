import type { FastifyReply, FastifyRequest } from 'fastify';
import { classifyError, type ClassifiedError, type ErrorCode } from '../errors.js';
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

/**
 * Seed 000's codes, which the `/tools` API keeps: the seed names bad_request, not_found,
 * not_configured, embeddings_disabled, tool_error, timeout and internal; the rest follow its style.
 */
const TOOLS_CODES: Record<ErrorCode, string> = {
  VALIDATION_ERROR: 'bad_request',
  EMBEDDINGS_DISABLED: 'embeddings_disabled',
  NOT_CONFIGURED: 'not_configured',
  AUTHENTICATION_ERROR: 'unauthorized',
  AUTHORIZATION_ERROR: 'forbidden',
  NOT_FOUND_ERROR: 'not_found',
  METHOD_NOT_ALLOWED_ERROR: 'method_not_allowed',
  TIMEOUT: 'timeout',
  CONFLICT_ERROR: 'conflict',
  PAYLOAD_TOO_LARGE_ERROR: 'payload_too_large',
  URI_TOO_LONG_ERROR: 'uri_too_long',
  UNSUPPORTED_MEDIA_TYPE_ERROR: 'bad_request',
  RATE_LIMIT_ERROR: 'rate_limited',
  INTERNAL_ERROR: 'internal',
  TOOL_ERROR: 'tool_error',
  SERVICE_UNAVAILABLE: 'unavailable',
  INSUFFICIENT_STORAGE: 'insufficient_storage',
};

/** Seed 000's error body, used by every route outside `/api/v1` and MCP. */
export const toolsErrorBody = (error: ClassifiedError) => ({ error: { code: TOOLS_CODES[error.code], message: error.detail } });

/** A JSON-RPC error without a request id, as MCP's Streamable HTTP transport answers refusals. */
export const jsonRpcErrorBody = (code: number, message: string) => ({
  jsonrpc: '2.0',
  id: null,
  error: { code, message },
});

/** Refuses a request before its handler runs, in the error format of the surface it addressed. */
export const refuse = (request: FastifyRequest, reply: FastifyReply, status: number, message: string) => {
  const refusal = classifyError(Object.assign(new Error(message), { statusCode: status }));
  switch (surfaceOf(request)) {
    case 'api': {
      const correlationId = correlationIdOf(request);
      return reply.status(status).header('x-correlation-id', correlationId).send(apiErrorBody(refusal, correlationId));
    }
    case 'mcp':
      return reply.status(status).send(jsonRpcErrorBody(-32000, message));
    case 'tools':
      return reply.status(status).send(toolsErrorBody(refusal));
  }
};
