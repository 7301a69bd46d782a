import { describe, expect, it } from 'vitest';
import { AppError, type ErrorCode } from '../errors.js';
import { cliError } from './cliErrors.js';

/** 2 for bad usage, input or configuration; 1 for every other failure. */
const EXIT: Record<ErrorCode, 1 | 2> = {
  VALIDATION_ERROR: 2,
  EMBEDDINGS_DISABLED: 2,
  NOT_CONFIGURED: 2,
  AUTHENTICATION_ERROR: 1,
  CREDENTIALS_REQUIRED: 2,
  AUTHORIZATION_ERROR: 1,
  NOT_FOUND_ERROR: 1,
  METHOD_NOT_ALLOWED_ERROR: 1,
  TIMEOUT: 1,
  CONFLICT_ERROR: 1,
  DATA_DIR_LOCKED: 2,
  PAYLOAD_TOO_LARGE_ERROR: 1,
  URI_TOO_LONG_ERROR: 1,
  UNSUPPORTED_MEDIA_TYPE_ERROR: 1,
  INVALID_SCRIPT: 1,
  BACKUP_FAILED: 2,
  RATE_LIMIT_ERROR: 1,
  INTERNAL_ERROR: 1,
  TOOL_ERROR: 1,
  CONFIG_ERROR: 2,
  CONNECTOR_ACCESS_DENIED: 1,
  CONNECTOR_ERROR: 1,
  SERVICE_UNAVAILABLE: 1,
  INSUFFICIENT_STORAGE: 1,
};

describe('the CLI mapper', () => {
  it.each(Object.entries(EXIT))('exits %s with %i and its message', (code, exitCode) => {
    expect(cliError(new AppError(code as ErrorCode, 'what went wrong'))).toEqual({ message: 'what went wrong', exitCode });
  });

  it('shows the stack of a bug, and exits 1', () => {
    const bug = new TypeError('x is undefined');
    expect(cliError(bug)).toEqual({ message: bug.stack, exitCode: 1 });
    expect(cliError('thrown text')).toEqual({ message: 'thrown text', exitCode: 1 });
  });
});
