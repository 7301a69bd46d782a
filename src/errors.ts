/** What the catalogue says of one error code. */
export interface ErrorEntry {
  status: number;
  /** The default message: what the code means, shown beside a request's own detail. */
  message: string;
  /** Whether the same request may succeed later. */
  retryable: boolean;
}

/**
 * The one catalogue of errors: every surface answers with these codes, except where its
 * specification fixes its own (the `/tools` API's lowercase codes, the job and annotation tools'
 * error objects); those surfaces translate from here, at the edge.
 */
export const ERROR_CATALOGUE = {
  VALIDATION_ERROR: { status: 400, message: 'Request validation failed', retryable: false },
  EMBEDDINGS_DISABLED: { status: 400, message: 'Semantic and hybrid search need embeddings', retryable: false },
  NOT_CONFIGURED: { status: 400, message: 'Not configured', retryable: false },
  AUTHENTICATION_ERROR: { status: 401, message: 'Authentication required', retryable: false },
  AUTHORIZATION_ERROR: { status: 403, message: 'Insufficient permissions', retryable: false },
  NOT_FOUND_ERROR: { status: 404, message: 'Resource not found', retryable: false },
  METHOD_NOT_ALLOWED_ERROR: { status: 405, message: 'Method not allowed', retryable: false },
  TIMEOUT: { status: 408, message: 'Execution timed out', retryable: false },
  CONFLICT_ERROR: { status: 409, message: 'Resource conflict', retryable: false },
  PAYLOAD_TOO_LARGE_ERROR: { status: 413, message: 'Request body too large', retryable: false },
  URI_TOO_LONG_ERROR: { status: 414, message: 'Request URL too long', retryable: false },
  UNSUPPORTED_MEDIA_TYPE_ERROR: { status: 415, message: 'Unsupported content type', retryable: false },
  RATE_LIMIT_ERROR: { status: 429, message: 'Rate limit exceeded', retryable: true },
  INTERNAL_ERROR: { status: 500, message: 'Internal server error', retryable: false },
  TOOL_ERROR: { status: 500, message: 'Tool script failed', retryable: false },
  SERVICE_UNAVAILABLE: { status: 503, message: 'Service temporarily unavailable', retryable: true },
  INSUFFICIENT_STORAGE: { status: 507, message: 'Insufficient storage', retryable: true },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

const isErrorCode = (code: string): code is ErrorCode => Object.hasOwn(ERROR_CATALOGUE, code);

/** The general code of a status (the first the catalogue lists for it). */
export const codeForStatus = (status: number): ErrorCode => {
  if (status === 422) return 'VALIDATION_ERROR';
  const found = (Object.keys(ERROR_CATALOGUE) as ErrorCode[]).find((code) => ERROR_CATALOGUE[code].status === status);
  return found ?? (status >= 500 ? 'INTERNAL_ERROR' : 'VALIDATION_ERROR');
};

/**
 * The one error family. The domain throws these with a catalogue code (a few CLI-only failures
 * carry their own code and exit status); each surface maps them to its own format in one place.
 */
export class AppError extends Error {
  override name = 'AppError';
  constructor(
    readonly code: string,
    readonly statusCode: number,
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
    super('VALIDATION_ERROR', 400, message, details, options);
  }
}

export class NotFoundError extends AppError {
  override name = 'NotFoundError';
  constructor(message: string, details?: Record<string, unknown>) {
    super('NOT_FOUND_ERROR', 404, message, details);
  }
}

export class IllegalStateError extends AppError {
  override name = 'IllegalStateError';
  constructor(message: string, details?: Record<string, unknown>) {
    super('CONFLICT_ERROR', 409, message, details);
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
      409,
      `Stream '${streamId}' is at revision ${actual}, expected ${expected}`,
      { streamId, expected, actual },
    );
  }
}

export class PayloadTooLargeError extends AppError {
  override name = 'PayloadTooLargeError';
  constructor(message: string, details?: Record<string, unknown>) {
    super('PAYLOAD_TOO_LARGE_ERROR', 413, message, details);
  }
}

/** Semantic and hybrid search need an embedder, and none is configured or loadable. */
export class EmbeddingsDisabledError extends AppError {
  override name = 'EmbeddingsDisabledError';
  constructor(reason: string) {
    super('EMBEDDINGS_DISABLED', 400, `Semantic and hybrid search need embeddings: ${reason}`);
  }
}

/** A configured source or connector that cannot be used as configured (its root is missing, say). */
export class NotConfiguredError extends AppError {
  override name = 'NotConfiguredError';
  constructor(message: string, details?: Record<string, unknown>) {
    super('NOT_CONFIGURED', 400, message, details);
  }
}

export class UnavailableError extends AppError {
  override name = 'UnavailableError';
  constructor(
    message: string,
    options?: { cause?: unknown; details?: Record<string, unknown> },
    code: ErrorCode = 'SERVICE_UNAVAILABLE',
    statusCode = 503,
  ) {
    super(code, statusCode, message, options?.details, options);
  }
}

/** The disk under the data is full (or over quota): writes fail until space is freed; reads go on. */
export class InsufficientStorageError extends UnavailableError {
  override name = 'InsufficientStorageError';
  constructor(message: string, options?: { cause?: unknown; details?: Record<string, unknown> }) {
    super(message, options, 'INSUFFICIENT_STORAGE', 507);
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
    super('RATE_LIMIT_ERROR', 429, `Too many requests. Try again in ${retryAfterSeconds} seconds.`);
  }
}

/** Turns a zod error into one readable line per issue, `path: message`. */
export const describeIssues = (issues: readonly { path: readonly PropertyKey[]; message: string }[]): string[] =>
  issues.map((issue) => `${issue.path.length ? issue.path.map(String).join('.') : '(root)'}: ${issue.message}`);

/** An error as every surface sees it: its catalogue code and entry, and what a client may read of it. */
export interface ClassifiedError extends ErrorEntry {
  code: ErrorCode;
  /** This error's own message; a generic one for a failure that is not ours to show. */
  detail: string;
  details?: Record<string, unknown>;
  /** False for an unexpected failure: the surface logs it and shows only the generic detail. */
  expected: boolean;
}

/** Friendlier details for the framework's own refusals of a body. */
const FRAMEWORK_DETAILS: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'The request body is not valid JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'The request body is empty but its content type is JSON',
  FST_ERR_CTP_BODY_TOO_LARGE: 'The request body exceeds the size limit',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Only application/json bodies are accepted',
};

const UNEXPECTED = 'An unexpected error occurred; quote the correlation id when reporting it';

/**
 * Classifies any error by the catalogue. An AppError keeps its message unless it is a server
 * failure other than an outage (a full disk, a lost database) or a tool script's error, which are
 * safe and useful to show; a framework refusal (4xx with a status) is named by its status;
 * anything else is unexpected and masked.
 */
export const classifyError = (error: unknown): ClassifiedError => {
  if (error instanceof AppError && error.statusCode >= 400 && error.statusCode < 600) {
    const code = isErrorCode(error.code) ? error.code : codeForStatus(error.statusCode);
    const shown = error.statusCode < 500 || error instanceof UnavailableError || code === 'TOOL_ERROR';
    return {
      ...ERROR_CATALOGUE[code],
      code,
      status: error.statusCode,
      detail: shown ? error.message : 'The server failed to handle the request',
      ...(shown && error.details ? { details: error.details } : {}),
      expected: shown,
    };
  }
  const framework = error as { statusCode?: number; code?: string; message?: string } | null;
  const status = framework?.statusCode;
  if (!(error instanceof AppError) && status && status >= 400 && status < 500) {
    const code = codeForStatus(status);
    const detail = FRAMEWORK_DETAILS[framework.code ?? ''] ?? framework.message ?? 'Bad request';
    return { ...ERROR_CATALOGUE[code], code, status, detail, expected: true };
  }
  return { ...ERROR_CATALOGUE.INTERNAL_ERROR, code: 'INTERNAL_ERROR', detail: UNEXPECTED, expected: false };
};

/**
 * The tool API's codes, which the Context Harness tool API keeps (`/tools/*`, and its search, get and
 * sources tools over MCP): the seed names bad_request, not_found, not_configured,
 * embeddings_disabled, tool_error, timeout and internal; the rest follow its style.
 */
const TOOL_API_CODES: Record<ErrorCode, string> = {
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

/** The tool API's error body: `{error: {code, message}}`. */
export const toolApiErrorBody = (error: ClassifiedError, message = error.detail) => ({
  error: { code: TOOL_API_CODES[error.code], message },
});
