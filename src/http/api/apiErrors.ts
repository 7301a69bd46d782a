import type { FastifyRequest } from 'fastify';
import { AppError, UnavailableError } from '../../errors.js';
import { ERROR_DOCS_PATH } from './errorDocs.js';

/** Seed 002's error codes, by HTTP status. */
const CODE_BY_STATUS: Record<number, string> = {
  400: 'VALIDATION_ERROR',
  401: 'AUTHENTICATION_ERROR',
  403: 'AUTHORIZATION_ERROR',
  404: 'NOT_FOUND_ERROR',
  405: 'METHOD_NOT_ALLOWED_ERROR',
  409: 'CONFLICT_ERROR',
  413: 'PAYLOAD_TOO_LARGE_ERROR',
  414: 'URI_TOO_LONG_ERROR',
  415: 'UNSUPPORTED_MEDIA_TYPE_ERROR',
  422: 'VALIDATION_ERROR',
  429: 'RATE_LIMIT_ERROR',
  500: 'INTERNAL_ERROR',
  503: 'SERVICE_UNAVAILABLE',
  507: 'INSUFFICIENT_STORAGE',
};

const MESSAGE_BY_CODE: Record<string, string> = {
  VALIDATION_ERROR: 'Request validation failed',
  AUTHENTICATION_ERROR: 'Authentication required',
  AUTHORIZATION_ERROR: 'Insufficient permissions',
  NOT_FOUND_ERROR: 'Resource not found',
  METHOD_NOT_ALLOWED_ERROR: 'Method not allowed',
  CONFLICT_ERROR: 'Resource conflict',
  PAYLOAD_TOO_LARGE_ERROR: 'Request body too large',
  URI_TOO_LONG_ERROR: 'Request URL too long',
  UNSUPPORTED_MEDIA_TYPE_ERROR: 'Unsupported content type',
  RATE_LIMIT_ERROR: 'Rate limit exceeded',
  INTERNAL_ERROR: 'Internal server error',
  SERVICE_UNAVAILABLE: 'Service temporarily unavailable',
  INSUFFICIENT_STORAGE: 'Insufficient storage',
};

/** A client's own correlation id is kept when it looks like an id. */
const CLIENT_CORRELATION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The correlation id of a request: the client's `X-Correlation-Id` when it looks like one, else the request id. */
export const correlationIdOf = (request: FastifyRequest): string => {
  const sent = request.headers['x-correlation-id'];
  return typeof sent === 'string' && CLIENT_CORRELATION_ID.test(sent) ? sent : request.id;
};


export interface ApiErrorBody {
  error: {
    code: string;
    message: string;
    detail: string;
    correlation_id: string;
    retryable: boolean;
    docs_url: string;
    retry_after?: number;
  };
}

export const apiErrorBody = (
  status: number,
  detail: string,
  correlationId: string,
  extra: { retryAfter?: number } = {},
): ApiErrorBody => {
  const code = CODE_BY_STATUS[status] ?? (status >= 500 ? 'INTERNAL_ERROR' : 'VALIDATION_ERROR');
  return {
    error: {
      code,
      message: MESSAGE_BY_CODE[code] ?? code,
      detail,
      correlation_id: correlationId,
      retryable: status === 429 || status === 503 || status === 507,
      docs_url: `${ERROR_DOCS_PATH}#${code
        .toLowerCase()
        .replace(/_error$/, '')
        .replace(/_/g, '-')}`,
      ...(extra.retryAfter !== undefined ? { retry_after: extra.retryAfter } : {}),
    },
  };
};

/** Too many requests; carries how long the caller should wait. */
export class RateLimitError extends AppError {
  override name = 'RateLimitError';
  constructor(readonly retryAfterSeconds: number) {
    super('rate_limit', 429, `Too many requests. Try again in ${retryAfterSeconds} seconds.`);
  }
}

const FASTIFY_DETAILS: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'The request body is not valid JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'The request body is empty but its content type is JSON',
  FST_ERR_CTP_BODY_TOO_LARGE: 'The request body exceeds the size limit',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Only application/json bodies are accepted',
};

/** Maps any error to a status and seed 002's body; what is not ours is logged and masked. */
export const toApiError = (error: unknown, request: FastifyRequest, correlationId: string) => {
  if (error instanceof RateLimitError) {
    return {
      status: 429,
      body: apiErrorBody(429, error.message, correlationId, { retryAfter: error.retryAfterSeconds }),
    };
  }
  if (error instanceof AppError && error.statusCode >= 400 && error.statusCode < 600) {
    // An outage's message names its cause (a full disk, a lost database) and is safe to show.
    const masked = error.statusCode >= 500 && !(error instanceof UnavailableError);
    const detail = masked ? 'The server failed to handle the request' : error.message;
    if (masked) request.log.error({ err: error, correlationId }, 'request failed');
    return { status: error.statusCode, body: apiErrorBody(error.statusCode, detail, correlationId) };
  }
  const framework = error as { statusCode?: number; code?: string; message?: string };
  if (framework.statusCode && framework.statusCode >= 400 && framework.statusCode < 500) {
    const detail = FASTIFY_DETAILS[framework.code ?? ''] ?? framework.message ?? 'Bad request';
    return { status: framework.statusCode, body: apiErrorBody(framework.statusCode, detail, correlationId) };
  }
  request.log.error({ err: error, correlationId }, 'unexpected error');
  return {
    status: 500,
    body: apiErrorBody(
      500,
      'An unexpected error occurred; quote the correlation id when reporting it',
      correlationId,
    ),
  };
};
