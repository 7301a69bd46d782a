/**
 * The one error family. The domain throws these; each surface maps them to its own format in one
 * place (HTTP error handler, MCP tool-result mapper, CLI exit codes).
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
    super('validation_error', 400, message, details, options);
  }
}

export class NotFoundError extends AppError {
  override name = 'NotFoundError';
  constructor(message: string, details?: Record<string, unknown>) {
    super('not_found', 404, message, details);
  }
}

export class IllegalStateError extends AppError {
  override name = 'IllegalStateError';
  constructor(message: string, details?: Record<string, unknown>) {
    super('illegal_state', 409, message, details);
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
      'concurrency_conflict',
      409,
      `Stream '${streamId}' is at revision ${actual}, expected ${expected}`,
      { streamId, expected, actual },
    );
  }
}

export class PayloadTooLargeError extends AppError {
  override name = 'PayloadTooLargeError';
  constructor(message: string, details?: Record<string, unknown>) {
    super('payload_too_large', 413, message, details);
  }
}

/** Semantic and hybrid search need an embedder, and none is configured or loadable. */
export class EmbeddingsDisabledError extends AppError {
  override name = 'EmbeddingsDisabledError';
  constructor(reason: string) {
    super('embeddings_disabled', 400, `Semantic and hybrid search need embeddings: ${reason}`);
  }
}

/** A configured source or connector that cannot be used as configured (its root is missing, say). */
export class NotConfiguredError extends AppError {
  override name = 'NotConfiguredError';
  constructor(message: string, details?: Record<string, unknown>) {
    super('not_configured', 400, message, details);
  }
}

export class UnavailableError extends AppError {
  override name = 'UnavailableError';
  constructor(
    message: string,
    options?: { cause?: unknown; details?: Record<string, unknown> },
    code = 'unavailable',
    statusCode = 503,
  ) {
    super(code, statusCode, message, options?.details, options);
  }
}

/** The disk under the data is full (or over quota): writes fail until space is freed; reads go on. */
export class InsufficientStorageError extends UnavailableError {
  override name = 'InsufficientStorageError';
  constructor(message: string, options?: { cause?: unknown; details?: Record<string, unknown> }) {
    super(message, options, 'insufficient_storage', 507);
  }
}

/** The database cannot be reached (refused, lost, shutting down, out of connections): a retry later may succeed. */
export class DatabaseUnavailableError extends UnavailableError {
  override name = 'DatabaseUnavailableError';
}

/** Turns a zod error into one readable line per issue, `path: message`. */
export const describeIssues = (issues: readonly { path: readonly PropertyKey[]; message: string }[]): string[] =>
  issues.map((issue) => `${issue.path.length ? issue.path.map(String).join('.') : '(root)'}: ${issue.message}`);
