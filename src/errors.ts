/** What the catalogue says of one error code. */
export interface ErrorEntry {
  /** The HTTP status the code means; every HTTP surface answers it with this status. */
  status: number;
  /** The default message: what the code means, shown beside a request's own detail. */
  message: string;
  /** Whether the same request may succeed later. */
  retryable: boolean;
}

/**
 * The one catalogue of errors: codes and what they mean. Each surface (REST, the tool API, MCP,
 * the CLI) turns them into its own format in its one mapper.
 */
export const ERROR_CATALOGUE = {
  VALIDATION_ERROR: { status: 400, message: 'Request validation failed', retryable: false },
  EMBEDDINGS_DISABLED: { status: 400, message: 'Semantic and hybrid search need embeddings', retryable: false },
  NOT_CONFIGURED: { status: 400, message: 'Not configured', retryable: false },
  AUTHENTICATION_ERROR: { status: 401, message: 'Authentication required', retryable: false },
  CREDENTIALS_REQUIRED: { status: 401, message: 'Credentials are required and none were given', retryable: false },
  AUTHORIZATION_ERROR: { status: 403, message: 'Insufficient permissions', retryable: false },
  NOT_FOUND_ERROR: { status: 404, message: 'Resource not found', retryable: false },
  METHOD_NOT_ALLOWED_ERROR: { status: 405, message: 'Method not allowed', retryable: false },
  TIMEOUT: { status: 408, message: 'Execution timed out', retryable: false },
  CONFLICT_ERROR: { status: 409, message: 'Resource conflict', retryable: false },
  DATA_DIR_LOCKED: { status: 409, message: 'Another process holds the data directory', retryable: false },
  PAYLOAD_TOO_LARGE_ERROR: { status: 413, message: 'Request body too large', retryable: false },
  URI_TOO_LONG_ERROR: { status: 414, message: 'Request URL too long', retryable: false },
  UNSUPPORTED_MEDIA_TYPE_ERROR: { status: 415, message: 'Unsupported content type', retryable: false },
  INVALID_SCRIPT: { status: 422, message: 'An extension script cannot be loaded', retryable: false },
  BACKUP_FAILED: { status: 422, message: 'The backup or restore cannot be made as asked', retryable: false },
  RATE_LIMIT_ERROR: { status: 429, message: 'Rate limit exceeded', retryable: true },
  INTERNAL_ERROR: { status: 500, message: 'Internal server error', retryable: false },
  TOOL_ERROR: { status: 500, message: 'Tool script failed', retryable: false },
  CONFIG_ERROR: { status: 500, message: 'The configuration is invalid', retryable: false },
  CONNECTOR_ACCESS_DENIED: { status: 502, message: "The connected service refused the connector's credentials", retryable: false },
  CONNECTOR_ERROR: { status: 502, message: 'The connected service failed', retryable: true },
  SERVICE_UNAVAILABLE: { status: 503, message: 'Service temporarily unavailable', retryable: true },
  INSUFFICIENT_STORAGE: { status: 507, message: 'Insufficient storage', retryable: true },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export const isErrorCode = (code: string): code is ErrorCode => Object.hasOwn(ERROR_CATALOGUE, code);

/**
 * The one error family. The domain throws these with a catalogue code; each surface maps them to
 * its own format in one place. Only `INTERNAL_ERROR` is kept from callers (logged, and masked).
 */
export class AppError extends Error {
  override name = 'AppError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export class ValidationError extends AppError {
  override name = 'ValidationError';
  constructor(message: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    super('VALIDATION_ERROR', message, details, options);
  }
}

export class NotFoundError extends AppError {
  override name = 'NotFoundError';
  constructor(message: string, details?: Record<string, unknown>) {
    super('NOT_FOUND_ERROR', message, details);
  }
}

export class IllegalStateError extends AppError {
  override name = 'IllegalStateError';
  constructor(message: string, details?: Record<string, unknown>) {
    super('CONFLICT_ERROR', message, details);
  }
}

/** An append whose expected revision no longer matches the stream: the caller must reload and retry. */
export class ConcurrencyError extends AppError {
  override name = 'ConcurrencyError';
  constructor(
    readonly streamId: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super(
      'CONFLICT_ERROR',
      `Stream '${streamId}' is at revision ${actual}, expected ${expected}`,
      { streamId, expected, actual },
    );
  }
}

export class PayloadTooLargeError extends AppError {
  override name = 'PayloadTooLargeError';
  constructor(message: string, details?: Record<string, unknown>) {
    super('PAYLOAD_TOO_LARGE_ERROR', message, details);
  }
}

/** Semantic and hybrid search need an embedder, and none is configured or loadable. */
export class EmbeddingsDisabledError extends AppError {
  override name = 'EmbeddingsDisabledError';
  constructor(reason: string) {
    super('EMBEDDINGS_DISABLED', `Semantic and hybrid search need embeddings: ${reason}`);
  }
}

/** A configured source or connector that cannot be used as configured (its root is missing, say). */
export class NotConfiguredError extends AppError {
  override name = 'NotConfiguredError';
  constructor(message: string, details?: Record<string, unknown>) {
    super('NOT_CONFIGURED', message, details);
  }
}

export class UnavailableError extends AppError {
  override name = 'UnavailableError';
  constructor(
    message: string,
    options?: { cause?: unknown; details?: Record<string, unknown> },
    code: ErrorCode = 'SERVICE_UNAVAILABLE',
  ) {
    super(code, message, options?.details, options);
  }
}

/** The disk under the data is full (or over quota): writes fail until space is freed; reads go on. */
export class InsufficientStorageError extends UnavailableError {
  override name = 'InsufficientStorageError';
  constructor(message: string, options?: { cause?: unknown; details?: Record<string, unknown> }) {
    super(message, options, 'INSUFFICIENT_STORAGE');
  }
}

/**
 * A server the ledger depends on refuses its configured credentials (a key, a role, a database).
 * Nothing goes through it until an operator mends the configuration; meanwhile work waits as in an
 * outage, and loses nothing.
 */
export class CredentialsRefusedError extends UnavailableError {
  override name = 'CredentialsRefusedError';
  constructor(message: string, options?: { cause?: unknown; details?: Record<string, unknown> }) {
    super(message, options, 'CONFIG_ERROR');
  }
}

/** The database cannot be reached (refused, lost, shutting down, out of connections): a retry later may succeed. */
export class DatabaseUnavailableError extends UnavailableError {
  override name = 'DatabaseUnavailableError';
}

/** One problem with input: where, what, and zod's code for it. */
export interface InputIssue {
  path: (string | number)[];
  message: string;
  code?: string;
}

/** Too many requests; carries how long the caller should wait. */
export class RateLimitError extends AppError {
  override name = 'RateLimitError';
  constructor(readonly retryAfterSeconds: number) {
    super('RATE_LIMIT_ERROR', `Too many requests. Try again in ${retryAfterSeconds} seconds.`);
  }
}

/** Turns a zod error into one readable line per issue, `path: message`. */
export const describeIssues = (issues: readonly { path: readonly PropertyKey[]; message: string }[]): string[] =>
  issues.map((issue) => `${issue.path.length ? issue.path.map(String).join('.') : '(root)'}: ${issue.message}`);

/** An error as every surface sees it: its catalogue code and entry, and what a client may read of it. */
export interface ClassifiedError extends ErrorEntry {
  code: ErrorCode;
  /** The error's own name (`SessionNotFound`, `ValidationError`), `InternalError` for one not shown. */
  type: string;
  /** This error's own message; a generic one for a failure that is not ours to show. */
  detail: string;
  details?: Record<string, unknown>;
  /** False for an unexpected failure: the surface logs it and shows only the generic detail. */
  expected: boolean;
}

const UNEXPECTED = 'An unexpected error occurred; quote the correlation id when reporting it';

/**
 * Classifies any error by the catalogue. An AppError keeps its message and details, except an
 * `INTERNAL_ERROR` (a broken invariant, a key that does not open), which, like anything that is
 * not an AppError, is unexpected: logged by the surface and masked.
 */
export const classifyError = (error: unknown): ClassifiedError => {
  if (error instanceof AppError && error.code !== 'INTERNAL_ERROR') {
    return {
      ...ERROR_CATALOGUE[error.code],
      code: error.code,
      type: error.name,
      detail: error.message,
      ...(error.details ? { details: error.details } : {}),
      expected: true,
    };
  }
  return { ...ERROR_CATALOGUE.INTERNAL_ERROR, code: 'INTERNAL_ERROR', type: 'InternalError', detail: UNEXPECTED, expected: false };
};

/** An outage a retry does not mend until someone acts (refused credentials, say), by the catalogue. */
export const isLastingOutage = (error: unknown): error is UnavailableError =>
  error instanceof UnavailableError && !ERROR_CATALOGUE[error.code].retryable;
