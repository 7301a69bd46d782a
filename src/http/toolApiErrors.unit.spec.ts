import { describe, expect, it } from 'vitest';
import { AppError, classifyError, type ErrorCode } from '../errors.js';
import { toolApiErrorBody } from './toolApiErrors.js';

/** The tool API's code for each catalogue code: its contract names seven, the rest follow its style. */
const TOOLS: Record<ErrorCode, string> = {
  VALIDATION_ERROR: 'bad_request',
  EMBEDDINGS_DISABLED: 'embeddings_disabled',
  NOT_CONFIGURED: 'not_configured',
  AUTHENTICATION_ERROR: 'unauthorized',
  CREDENTIALS_REQUIRED: 'unauthorized',
  AUTHORIZATION_ERROR: 'forbidden',
  NOT_FOUND_ERROR: 'not_found',
  METHOD_NOT_ALLOWED_ERROR: 'method_not_allowed',
  TIMEOUT: 'timeout',
  CONFLICT_ERROR: 'conflict',
  DATA_DIR_LOCKED: 'conflict',
  PAYLOAD_TOO_LARGE_ERROR: 'payload_too_large',
  URI_TOO_LONG_ERROR: 'uri_too_long',
  UNSUPPORTED_MEDIA_TYPE_ERROR: 'bad_request',
  INVALID_SCRIPT: 'bad_request',
  BACKUP_FAILED: 'bad_request',
  RATE_LIMIT_ERROR: 'rate_limited',
  INTERNAL_ERROR: 'internal',
  TOOL_ERROR: 'tool_error',
  CONFIG_ERROR: 'internal',
  CONNECTOR_ACCESS_DENIED: 'connector_access_denied',
  CONNECTOR_ERROR: 'connector_error',
  SERVICE_UNAVAILABLE: 'unavailable',
  INSUFFICIENT_STORAGE: 'insufficient_storage',
};

describe('the tool API mapper', () => {
  it.each(Object.entries(TOOLS))('answers %s as %s', (code, toolCode) => {
    const body = toolApiErrorBody(classifyError(new AppError(code as ErrorCode, 'what went wrong', { field: 'q' })), 'masked');
    // The tool API's error schema: code and message, nothing else.
    expect(body).toEqual({ error: { code: toolCode, message: code === 'INTERNAL_ERROR' ? 'masked' : 'what went wrong' } });
  });

  it('shows only the masked message for what is not an AppError', () => {
    expect(toolApiErrorBody(classifyError(new Error('secret')), 'Internal error (request id r-1)')).toEqual({
      error: { code: 'internal', message: 'Internal error (request id r-1)' },
    });
  });
});
