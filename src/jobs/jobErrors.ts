import type { z } from 'zod';
import { DuplicateJobError } from '../domain/jobs.js';
import {
  AppError,
  DatabaseUnavailableError,
  IllegalStateError,
  InsufficientStorageError,
  NotFoundError,
  UnavailableError,
  ValidationError,
} from '../errors.js';
import { unstorableTextIssue } from '../validation.js';

/** Seed 004's error object: `{error: {code, message, details?}}`. */
export interface JobErrorObject extends Record<string, unknown> {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

const codeOf = (error: AppError): string => {
  if (error instanceof ValidationError) return 'VALIDATION_ERROR';
  if (error instanceof NotFoundError) return 'JOB_NOT_FOUND';
  if (error instanceof DuplicateJobError) return 'DUPLICATE_JOB';
  if (error instanceof IllegalStateError) return 'INVALID_STATUS';
  if (error instanceof DatabaseUnavailableError || error instanceof InsufficientStorageError) return 'DATABASE_ERROR';
  if (error instanceof UnavailableError) return 'CONNECTION_ERROR';
  return 'DATABASE_ERROR';
};

/** Maps any error to seed 004's error object; unexpected ones are masked behind the correlation id. */
export const jobErrorObject = (error: unknown, correlationId: string): JobErrorObject => {
  if (!(error instanceof AppError)) {
    return {
      error: {
        code: 'DATABASE_ERROR',
        message: `Internal error (correlation id ${correlationId})`,
        details: { suggestion: 'Retry the request; if it keeps failing, check the server log' },
      },
    };
  }
  const code = codeOf(error);
  // The contract's database errors name their kind beside the suggestion and pool statistics.
  const details = code === 'DATABASE_ERROR' ? { error_type: error.name, ...error.details } : error.details;
  return { error: { code, message: error.message, ...(details ? { details } : {}) } };
};

const SUGGESTIONS: Record<string, string> = {
  job_id: 'Provide the job_id returned by start_indexing_background (a UUID)',
  repo_path: "Provide absolute path starting with '/' (POSIX) or drive letter (Windows)",
  project_id: 'Use letters, digits, `_`, `.` and `-` (at most 64 characters)',
  status: 'Use one of pending, running, completed, failed, cancelled, blocked',
  limit: 'Use an integer from 1 to 1000',
  offset: 'Use a non-negative integer',
};

/** Parses tool input; the first bad field becomes a VALIDATION_ERROR with field, value and suggestion. */
export const parseJobInput = <S extends z.ZodType>(schema: S, input: unknown): z.output<S> => {
  const parsed = schema.safeParse(input ?? {});
  if (parsed.success) {
    const text = unstorableTextIssue(parsed.data);
    if (!text) return parsed.data;
    // The value itself is left out: it holds what cannot be stored.
    throw new ValidationError(`Invalid ${text.field}: ${text.message}`, {
      field: text.field,
      value: '',
      suggestion: 'Remove NUL characters and unpaired surrogates from the text',
    });
  }
  const [issue] = parsed.error.issues;
  const field = issue?.path.map(String).join('.') || '(input)';
  const raw = field in ((input as object | null) ?? {}) ? (input as Record<string, unknown>)[field] : undefined;
  throw new ValidationError(`Invalid ${field}: ${issue?.message ?? 'invalid input'}`, {
    field,
    value: raw === undefined ? '' : typeof raw === 'string' ? raw : JSON.stringify(raw),
    suggestion: SUGGESTIONS[field] ?? 'Check the tool input schema',
  });
};
