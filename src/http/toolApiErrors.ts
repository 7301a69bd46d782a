import type { ClassifiedError, ErrorCode } from '../errors.js';

/**
 * The tool API's codes (`/tools/*`, and the search, get and sources tools over MCP): the seed names
 * bad_request, not_found, not_configured, embeddings_disabled, tool_error, timeout and internal;
 * the rest follow its style.
 */
const TOOL_API_CODES: Record<ErrorCode, string> = {
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

/**
 * The tool API's one mapper: `{error: {code, message}}` with its lowercase code; an unexpected
 * error shows only `masked` (which names the id to quote).
 */
export const toolApiErrorBody = (error: ClassifiedError, masked = error.detail) => ({
  error: { code: TOOL_API_CODES[error.code], message: error.expected ? error.detail : masked },
});
