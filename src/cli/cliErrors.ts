import { AppError, type ErrorCode } from '../errors.js';
import { forTerminal } from './terminalText.js';

/** Exit codes: 1 a failure, 2 bad usage, input or configuration (0 is success). */
const EXIT_CODES: Record<ErrorCode, 1 | 2> = {
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

/** What the CLI makes of an error: one line for an expected failure (the stack only for a bug), and the exit code. */
export const cliError = (error: unknown): { message: string; exitCode: 1 | 2 } =>
  error instanceof AppError
    ? { message: error.message, exitCode: EXIT_CODES[error.code] }
    : { message: error instanceof Error ? (error.stack ?? error.message) : String(error), exitCode: 1 };

/** The CLI's one error mapper: writes the message to stderr and answers the exit code. */
export const reportError = (error: unknown): number => {
  const { message, exitCode } = cliError(error);
  process.stderr.write(`ctx: ${forTerminal(message)}\n`);
  return exitCode;
};
