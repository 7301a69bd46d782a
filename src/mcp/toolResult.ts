import type { CallToolResult } from '@modelcontextprotocol/server';
import { DuplicateJobError } from '../domain/jobs.js';
import {
  classifyError,
  DatabaseUnavailableError,
  IllegalStateError,
  InsufficientStorageError,
  NotFoundError,
  UnavailableError,
  type ClassifiedError,
} from '../errors.js';
import { toolApiErrorBody } from '../http/toolApiErrors.js';
import type { McpErrorObjects } from '../operations.js';
import type { Logger } from '../ports/logger.js';

/** A successful result: the JSON as text for every client, and as structured content. */
export const toolSuccess = (output: Record<string, unknown>): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(output) }],
  structuredContent: output,
});

/** The job tools' codes, where it names one; other errors keep their catalogue code. */
const jobCodeOf = (error: unknown, classified: ClassifiedError): string => {
  if (!classified.expected) return 'DATABASE_ERROR';
  if (error instanceof NotFoundError) return 'JOB_NOT_FOUND';
  if (error instanceof DuplicateJobError) return 'DUPLICATE_JOB';
  if (error instanceof IllegalStateError) return 'INVALID_STATUS';
  if (error instanceof DatabaseUnavailableError || error instanceof InsufficientStorageError) return 'DATABASE_ERROR';
  if (error instanceof UnavailableError) return 'CONNECTION_ERROR';
  return classified.code;
};

const JOB_SUGGESTIONS: Record<string, string> = {
  job_id: 'Provide the job_id returned by start_indexing_background (a UUID)',
  repo_path: "Provide absolute path starting with '/' (POSIX) or drive letter (Windows)",
  project_id: 'Use letters, digits, `_`, `.` and `-` (at most 64 characters)',
  status: 'Use one of pending, running, completed, failed, cancelled, blocked',
  limit: 'Use an integer from 1 to 1000',
  offset: 'Use a non-negative integer',
};

/** The job tools' error object: `{error: {code, message, details?}}`; bad input names its field, value and a fix. */
const jobErrorObject = (error: unknown, classified: ClassifiedError, correlationId: string) => {
  const code = jobCodeOf(error, classified);
  if (!classified.expected) {
    const suggestion = 'Retry the request; if it keeps failing, check the server log';
    return { error: { code, message: `Internal error (correlation id ${correlationId})`, details: { suggestion } } };
  }
  const given = classified.details ?? {};
  if (code === 'VALIDATION_ERROR') {
    const { issues, ...own } = given;
    const field = typeof own.field === 'string' ? own.field : '(input)';
    const value = typeof own.value === 'string' ? own.value : '';
    const unstorable = Array.isArray(issues) && (issues[0] as { code?: string } | undefined)?.code === 'invalid_text';
    const suggestion =
      typeof own.suggestion === 'string'
        ? own.suggestion
        : unstorable
          ? 'Remove NUL characters and unpaired surrogates from the text'
          : (JOB_SUGGESTIONS[field] ?? 'Check the tool input schema');
    return { error: { code, message: classified.detail, details: { ...own, field, value, suggestion } } };
  }
  // The contract's database errors name their kind beside the suggestion and pool statistics.
  const details = code === 'DATABASE_ERROR' ? { error_type: (error as Error).name, ...given } : classified.details;
  return { error: { code, message: classified.detail, ...(details ? { details } : {}) } };
};

/** The annotation tools' error object: `type` names the error, `issues` lists bad input when there is some. */
const annotationErrorObject = (classified: ClassifiedError, masked: string) => {
  if (!classified.expected) return { type: 'InternalError', message: masked };
  const issues = classified.details?.issues;
  return { type: classified.type, message: classified.detail, ...(Array.isArray(issues) ? { issues } : {}) };
};

/** The catalogue's own object, `{error: {code, message, details?}}`, for tools whose specification fixes none. */
const catalogueErrorObject = (classified: ClassifiedError, masked: string) => ({
  error: classified.expected
    ? { code: classified.code, message: classified.detail, ...(classified.details ? { details: classified.details } : {}) }
    : { code: classified.code, message: masked },
});

/**
 * MCP's one error mapper, for every toolset: a tool answers the catalogue's `{error: {code,
 * message, details?}}`, unless its specification fixes its own error objects (the job tools', the
 * annotation tools' and the tool API's). Unexpected errors are logged and masked.
 */
export const toolFailure = (
  error: unknown,
  logger: Logger,
  correlationId: string,
  objects?: McpErrorObjects,
): CallToolResult => {
  const classified = classifyError(error);
  if (!classified.expected) logger.error({ err: error, correlationId }, 'MCP tool failed');
  const masked = `Internal error (correlation id ${correlationId})`;
  const body =
    objects === 'jobs'
      ? jobErrorObject(error, classified, correlationId)
      : objects === 'annotations'
        ? annotationErrorObject(classified, masked)
        : objects === 'tools'
          ? toolApiErrorBody(classified, masked)
          : catalogueErrorObject(classified, masked);
  return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true };
};
