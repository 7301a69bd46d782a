import type { FastifyRequest } from 'fastify';
import { AppError, RateLimitError, type ClassifiedError } from '../../errors.js';
import { classifyHttpError } from '../httpRefusals.js';
import { toolApiErrorBody } from '../toolApiErrors.js';
import { ERROR_DOCS_PATH } from './errorDocs.js';

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

/** The REST API's error body for a classified error: the catalogue's code, message and retryability. */
export const apiErrorBody = (
  error: ClassifiedError,
  correlationId: string,
  extra: { retryAfter?: number } = {},
): ApiErrorBody => ({
  error: {
    code: error.code,
    message: error.message,
    detail: error.detail,
    correlation_id: correlationId,
    retryable: error.retryable,
    docs_url: `${ERROR_DOCS_PATH}#${error.code
      .toLowerCase()
      .replace(/_error$/, '')
      .replace(/_/g, '-')}`,
    ...(extra.retryAfter !== undefined ? { retry_after: extra.retryAfter } : {}),
  },
});

/**
 * The REST surface's one mapper: any error to a status and the REST API's body; what is not ours is
 * logged and masked. A route whose specification fixes the tool API's error objects answers its
 * operation's own refusals (below 500) in those.
 */
export const toApiError = (error: unknown, request: FastifyRequest, correlationId: string, format: 'api' | 'tools' = 'api') => {
  const classified = classifyHttpError(error);
  if (!classified.expected) request.log.error({ err: error, correlationId }, 'request failed');
  if (format === 'tools' && error instanceof AppError && classified.expected && classified.status < 500)
    return { status: classified.status, body: toolApiErrorBody(classified) };
  const retryAfter = error instanceof RateLimitError ? error.retryAfterSeconds : undefined;
  return {
    status: classified.status,
    body: apiErrorBody(classified, correlationId, retryAfter === undefined ? {} : { retryAfter }),
  };
};
