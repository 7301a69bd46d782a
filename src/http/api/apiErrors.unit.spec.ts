import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { AppError, ERROR_CATALOGUE, RateLimitError, type ErrorCode } from '../../errors.js';
import { silentLogger } from '../../ports/logger.js';
import { httpRefusal } from '../httpRefusals.js';
import { toApiError, type ApiErrorBody } from './apiErrors.js';

const request = { log: silentLogger } as unknown as FastifyRequest;

/** The REST API's status for each catalogue code, and the section of docs/errors.md its `docs_url` names. */
const REST: Record<ErrorCode, [status: number, docs: string]> = {
  VALIDATION_ERROR: [400, 'validation'],
  EMBEDDINGS_DISABLED: [400, 'embeddings-disabled'],
  NOT_CONFIGURED: [400, 'not-configured'],
  AUTHENTICATION_ERROR: [401, 'authentication'],
  CREDENTIALS_REQUIRED: [401, 'credentials-required'],
  AUTHORIZATION_ERROR: [403, 'authorization'],
  NOT_FOUND_ERROR: [404, 'not-found'],
  METHOD_NOT_ALLOWED_ERROR: [405, 'method-not-allowed'],
  TIMEOUT: [408, 'timeout'],
  CONFLICT_ERROR: [409, 'conflict'],
  DATA_DIR_LOCKED: [409, 'data-dir-locked'],
  PAYLOAD_TOO_LARGE_ERROR: [413, 'payload-too-large'],
  URI_TOO_LONG_ERROR: [414, 'uri-too-long'],
  UNSUPPORTED_MEDIA_TYPE_ERROR: [415, 'unsupported-media-type'],
  INVALID_SCRIPT: [422, 'invalid-script'],
  BACKUP_FAILED: [422, 'backup-failed'],
  RATE_LIMIT_ERROR: [429, 'rate-limit'],
  INTERNAL_ERROR: [500, 'internal'],
  TOOL_ERROR: [500, 'tool'],
  CONFIG_ERROR: [500, 'config'],
  CONNECTOR_ACCESS_DENIED: [502, 'connector-access-denied'],
  CONNECTOR_ERROR: [502, 'connector'],
  SERVICE_UNAVAILABLE: [503, 'service-unavailable'],
  INSUFFICIENT_STORAGE: [507, 'insufficient-storage'],
};

describe('the REST mapper', () => {
  it.each(Object.entries(REST))('answers %s with status and docs %j', (code, [status, docs]) => {
    const error = new AppError(code as ErrorCode, 'what went wrong', { field: 'query' });
    const shown = code !== 'INTERNAL_ERROR';
    expect(toApiError(error, request, 'c-1')).toEqual({
      status,
      body: {
        error: {
          code,
          message: ERROR_CATALOGUE[code as ErrorCode].message,
          detail: shown ? 'what went wrong' : 'An unexpected error occurred; quote the correlation id when reporting it',
          correlation_id: 'c-1',
          retryable: ERROR_CATALOGUE[code as ErrorCode].retryable,
          docs_url: `/docs/errors#${docs}`,
        },
      },
    });
  });

  it('masks what is not an AppError', () => {
    const { status, body } = toApiError(new Error('secret'), request, 'c-2');
    expect(status).toBe(500);
    expect(body.error).toMatchObject({ code: 'INTERNAL_ERROR', correlation_id: 'c-2' });
    expect(JSON.stringify(body)).not.toContain('secret');
  });

  it("keeps a framework refusal's status and names it by the status", () => {
    const invalidJson = Object.assign(new Error('Unexpected end'), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON_BODY' });
    expect(toApiError(invalidJson, request, 'c-3')).toMatchObject({
      status: 400,
      body: { error: { code: 'VALIDATION_ERROR', detail: 'The request body is not valid JSON' } },
    });
    expect(toApiError(httpRefusal(406, 'Not acceptable'), request, 'c-3')).toMatchObject({
      status: 406,
      body: { error: { code: 'VALIDATION_ERROR', detail: 'Not acceptable' } },
    });
  });

  it('says when to come back after a rate limit', () => {
    expect((toApiError(new RateLimitError(7), request, 'c-4').body as ApiErrorBody).error.retry_after).toBe(7);
  });

  it("answers a tool-format route's own refusals in the tool API's format, and server failures in its own", () => {
    expect(toApiError(new AppError('NOT_FOUND_ERROR', 'No session'), request, 'c-5', 'tools')).toEqual({
      status: 404,
      body: { error: { code: 'not_found', message: 'No session' } },
    });
    expect(toApiError(new AppError('SERVICE_UNAVAILABLE', 'Database down'), request, 'c-5', 'tools').body.error).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      correlation_id: 'c-5',
    });
  });
});
